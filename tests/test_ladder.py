"""Ladder ratings: Bradley-Terry/Elo fits and bootstrap intervals on synthetic results, bounds,
pairings from matches, ladder building and JSON round trip, rating a policy, the packaged
ladders."""

import dataclasses
import json
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_match import N_OPEN, first_legal

import jaxgames
from jaxgames.core import random_policy
from jaxgames.evaluation.elo import ELO_PER_NAT, Rating, Record, percentile_interval
from jaxgames.evaluation.ladder import (
    Ladder,
    Pairing,
    build_ladder,
    fit_ladder,
    game_key,
    ladder_pairs,
    load_ladder,
    rate_against_ladder,
    rate_ladder,
    save_ladder,
)
from jaxgames.evaluation.match import play_match
from jaxgames.evaluation.openings import openings, openings_digest
from jaxgames.evaluation.rating import rate_policy
from jaxgames.specs import make_opponent


def last_legal(key, state):
    n = state.legal_action_mask.shape[-1]
    return (n - 1 - jnp.argmax(state.legal_action_mask[::-1])).astype(jnp.int32)


RUNGS = {"random": random_policy, "first": first_legal, "last": last_legal}

# --------------------------------------------------------------------------- synthetic results
TRUE = {"random": 0.0, "b": 150.0, "c": 400.0, "d": 700.0}


def simulate(rng, true, pairs, games, draw=0.2):
    """Pairings from the Elo model; draws take ``draw * min(p, 1-p)`` (expected score p)."""
    out = []
    for a, b in pairs:
        p = 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
        d = draw * min(p, 1.0 - p)
        lo, dr, w = rng.multinomial(games, [1.0 - p - d / 2, d, p - d / 2])
        out.append(Pairing.from_counts(a, b, w, dr, lo))
    return out


def round_robin_pairs(names):
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


def test_mle_recovers_known_elo():
    rng = np.random.default_rng(0)
    names = list(TRUE)
    fit = fit_ladder(simulate(rng, TRUE, round_robin_pairs(names), 20_000), n_boot=50)
    for n, e in zip(fit.names, fit.elo):
        assert e == pytest.approx(TRUE[n], abs=15), (n, e)
    # the cheap design: each rung against the next two
    pairs = [(names[i], names[j]) for i, j in ladder_pairs(len(names), span=2)]
    assert pairs == [("random", "b"), ("random", "c"), ("b", "c"), ("b", "d"), ("c", "d")]
    ratings = rate_ladder(simulate(rng, TRUE, pairs, 20_000), n_boot=50)
    for n, r in ratings.items():
        assert r.elo == pytest.approx(TRUE[n], abs=20), (n, r)
    assert ladder_pairs(4, None) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def test_bootstrap_intervals_cover_the_truth_and_shrink():
    rng = np.random.default_rng(1)
    names = list(TRUE)
    pairs = round_robin_pairs(names)
    covered, widths = [], {400: [], 1600: []}
    for rep in range(30):
        for games in (400, 1600):
            ratings = rate_ladder(simulate(rng, TRUE, pairs, games), n_boot=300, seed=rep)
            assert ratings["random"] == Rating(0.0, 0.0, 0.0)  # the anchor
            for n in names[1:]:
                r = ratings[n]
                assert r.lo < r.elo < r.hi
                widths[games].append(r.hi - r.lo)
                if games == 400:
                    covered.append(r.lo <= TRUE[n] <= r.hi)
    assert np.mean(covered) >= 0.85, np.mean(covered)  # nominal 95% (90 intervals)
    ratio = np.mean(widths[1600]) / np.mean(widths[400])
    assert 0.4 < ratio < 0.6, ratio  # 4x the games: about half the width


def test_fit_errors_and_whitewash():
    with pytest.raises(ValueError, match="anchor"):
        rate_ladder([Pairing.from_counts("a", "b", 5, 0, 5)])
    with pytest.raises(ValueError, match="unconnected"):
        rate_ladder(
            [Pairing.from_counts("random", "a", 5, 0, 5), Pairing.from_counts("b", "c", 5, 0, 5)]
        )
    # whitewashes stay finite thanks to the virtual draw: 400 - 0 with one virtual draw
    r = rate_ladder([Pairing.from_counts("x", "random", 400, 0, 0)], n_boot=20)
    assert r["x"].elo == pytest.approx(400 * math.log10(400.5 / 0.5), abs=0.01)


# --------------------------------------------------------------------------- agent ratings
@pytest.fixture(scope="module")
def ladder_fit():
    rng = np.random.default_rng(2)
    return fit_ladder(simulate(rng, TRUE, round_robin_pairs(list(TRUE)), 400), n_boot=500)


def test_agent_rating_recovers_and_propagation_widens(ladder_fit):
    rng = np.random.default_rng(3)
    true = dict(TRUE, agent=500.0)
    res = {p.b: p for p in simulate(rng, true, [("agent", r) for r in TRUE], 2000)}
    fixed = rate_against_ladder(res, ladder_fit, propagate=False)
    prop = rate_against_ladder(res, ladder_fit)
    plain = rate_against_ladder(res, dict(zip(ladder_fit.names, ladder_fit.elo)), n_boot=500)
    assert fixed.elo == prop.elo == plain.elo
    assert prop.lo < 500 < prop.hi and not prop.extrapolated and prop.bound is None
    assert prop.hi - prop.lo > fixed.hi - fixed.lo
    assert plain == fixed  # a plain {rung: elo} mapping has nothing to propagate
    # the MLE solves  sum_j S_j = sum_j N_j sigma((R - R_j) / s)
    e = dict(zip(ladder_fit.names, ladder_fit.elo))
    expected = sum(p.games / (1 + 10 ** ((e[r] - prop.elo) / 400)) for r, p in res.items())
    assert expected == pytest.approx(sum(p.points for p in res.values()), rel=1e-9)


def test_few_openings_widen_the_agent_interval_to_the_score_interval():
    """Below FEW_OPENINGS openings the percentile bootstrap is too narrow: the agent's interval
    contains the Wilson interval of its score (openings as samples); from FEW_OPENINGS on it
    is the bootstrap's alone. Bad levels and resample counts are one-line errors."""
    from jaxgames.evaluation.ladder import FEW_OPENINGS, _score_interval_elo

    ladder = {"random": 0.0, "b": 150.0}
    for openings_ in (5, FEW_OPENINGS):
        # units of one opening's two games: a scored 0, 1/2, 1, 3/2 or 2 points
        units = (0, 1, 1, 2, 1) if openings_ == 5 else (5, 10, 10, 15, 10)
        res = {"b": Pairing("agent", "b", units)}
        r = rate_against_ladder(res, ladder, n_boot=500)
        pair = [res["b"]]
        games, e = np.array([pair[0].games]), np.array([150.0])
        w_lo, w_hi = _score_interval_elo(pair, games, e, pair[0].points, 0.95)
        contains = r.lo <= w_lo + 1e-9 and r.hi >= w_hi - 1e-9
        assert contains == (openings_ < FEW_OPENINGS), (openings_, r, w_lo, w_hi)
    for bad, why in ((dict(ci=95), "invalid ci=95"), (dict(n_boot=1), "invalid n_boot=1")):
        with pytest.raises(ValueError, match=why):
            rate_against_ladder(res, ladder, **bad)


def test_all_wins_is_a_lower_bound_all_losses_an_upper_bound(ladder_fit):
    e = dict(zip(ladder_fit.names, ladder_fit.elo))
    wins = {r: Pairing.from_counts("agent", r, 100, 0, 0) for r in ("c", "d")}
    r = rate_against_ladder(wins, ladder_fit)
    assert r.bound == "lower" and r.elo == r.lo and r.hi == math.inf and r.extrapolated
    assert str(r).startswith(">= ")
    # at the bound, winning all 200 games has probability 5%
    log_p = sum(-100 * np.logaddexp(0, -(r.elo - e[k]) / ELO_PER_NAT) for k in ("c", "d"))
    assert log_p == pytest.approx(math.log(0.05), abs=1e-6)
    assert r.elo > e["d"]
    # one draw: a finite estimate, extrapolated above the top rung, open-ended interval
    near = dict(wins, d=Pairing.from_counts("agent", "d", 99, 1, 0))
    r2 = rate_against_ladder(near, ladder_fit)
    assert r2.bound is None and r2.extrapolated and r2.elo > e["d"] and r2.hi == math.inf
    loss = {"random": Pairing.from_counts("agent", "random", 0, 0, 50)}
    r3 = rate_against_ladder(loss, ladder_fit)
    assert r3.bound == "upper" and r3.elo == r3.hi < 0 and r3.lo == -math.inf
    assert str(r3).startswith("<= ")
    for x in (r, r2, r3):
        assert Rating.from_json(json.loads(json.dumps(x.to_json()))) == x
    with pytest.raises(ValueError, match="not rungs"):
        rate_against_ladder({"nobody": wins["c"]}, ladder_fit)


# --------------------------------------------------------------------------- pairings
def test_pairing_of_a_match_has_one_unit_per_opening(ttt):
    s = openings(ttt, N_OPEN, 3, seed=0)
    m = play_match(first_legal, first_legal, ttt, s, jax.random.PRNGKey(0))
    n = N_OPEN
    p = Pairing.from_match("x", "y", m)
    assert p.units[0] == p.units[4] == 0 and sum(p.units) == n and p.games == 2 * n
    assert p.points == pytest.approx(n)  # each opening: one win and one loss, or two draws
    assert (p.as_first, p.as_second) == (m.as_first, m.as_second)
    assert Pairing.from_json(json.loads(json.dumps(p.to_json()))) == p
    assert p.swapped().swapped() == p
    assert Pairing.from_match("y", "x", m.swapped()) == p.swapped()  # b's side of the games
    assert p.swapped().as_first == m.as_second.swapped()
    r = rate_ladder({("x", "y"): m}, anchor="x", n_boot=50)  # a mapping of match results
    assert r["y"].elo == pytest.approx(0.0, abs=1e-6)  # even score: equal ratings
    # records that disagree with the units (a damaged ladder file) are one error
    with pytest.raises(ValueError, match="records count 0 games, the unit histogram 4"):
        Pairing("x", "y", (1, 0, 1, 0, 0), Record(0, 0, 0), Record(0, 0, 0))


def test_rate_refuses_a_ladders_own_repeated_openings():
    """A ladder whose stored openings repeat (80 asked of tic-tac-toe's 72 two-ply positions)
    rates no player at its own games per pairing: the repeats are no new evidence."""
    ladder = dataclasses.replace(load_ladder("tic_tac_toe"), n_openings=80)
    env = ladder.make_env()
    with pytest.raises(ValueError, match="72 distinct positions, so at most 144 games per rung"):
        rate_policy(
            random_policy, env, ladder, lambda s: make_opponent(s, env), 160, rungs=["random"]
        )


@pytest.mark.parametrize("games", [1, 3, 5])
def test_rate_refuses_an_odd_number_of_games_per_rung(games):
    """Games come in colour pairs per opening, so an odd (or single) games_per_rung is refused
    in one line before any game is played (3 would be reported for the 2 played)."""
    ladder = load_ladder("tic_tac_toe")
    env = ladder.make_env()
    with pytest.raises(ValueError, match="games_per_rung must be even and >= 2"):
        rate_policy(
            random_policy, env, ladder, lambda s: make_opponent(s, env), games, rungs=["random"]
        )


# --------------------------------------------------------------------------- ladder files
def test_build_ladder_rate_policy_and_json_round_trip(ttt, tmp_path):
    lines = []
    ladder = build_ladder(
        ttt, list(RUNGS), RUNGS.__getitem__, n_openings=N_OPEN, plies=1, span=1, n_boot=200,
        command="test", log=lines.append,
    )  # fmt: skip
    assert game_key(ttt) == "tic_tac_toe" and ladder.game == "tic_tac_toe"
    assert game_key(jaxgames.make("reversi", size=6)) == "reversi6"
    assert game_key(jaxgames.make("animal_shogi")) == "animal_shogi"
    assert [(p.a, p.b) for p in ladder.pairings] == [("random", "first"), ("first", "last")]
    assert len(lines) == 2
    assert ladder.rating("random") == Rating(0.0, 0.0, 0.0)
    assert ladder.games_per_pairing == 2 * N_OPEN and ladder.command == "test"
    path = save_ladder(ladder, str(tmp_path / "ttt.json"))
    loaded = load_ladder(path)
    assert loaded.to_json() == ladder.to_json()
    assert np.array_equal(loaded.fit().draws, ladder.fit().draws)  # refit from stored games
    assert "random" in str(loaded)
    with pytest.raises(FileNotFoundError, match="packaged ladders"):
        load_ladder("no_such_game")

    report = rate_policy(
        random_policy, ttt, loaded, RUNGS.__getitem__, key=jax.random.PRNGKey(1),
        rungs=["random", "first"],
    )  # fmt: skip
    assert report.rungs == ["random", "first"] and report.games_per_rung == 2 * N_OPEN
    text = str(report)
    assert "W/D/L first" in text and "first" in text and "Elo" in text
    d = json.loads(json.dumps(report.to_json()))
    assert d["game"] == "tic_tac_toe" and len(d["rungs"]) == 2
    # random against itself scores about half
    assert abs(report.matches[0].score - 0.5) < 0.35
    # a rung's games are the same whichever other rungs are played, in whatever order
    alone = rate_policy(
        random_policy, ttt, loaded, RUNGS.__getitem__, key=jax.random.PRNGKey(1), rungs=["first"]
    )
    assert alone.matches[0].to_dict() == report.matches[1].to_dict()
    with pytest.raises(ValueError, match="ladder is for"):
        rate_policy(random_policy, jaxgames.make("reversi", size=4), loaded, RUNGS.__getitem__)
    with pytest.raises(ValueError, match="format"):
        Ladder.from_json(dict(loaded.to_json(), format=99))


def test_extending_a_ladder_plays_only_the_new_pairings(ttt):
    """Rungs added on top keep the stored pairings as they are and play the new ones with the
    keys a full build gives them: the extended ladder has the full build's games."""

    def build(rungs, **kw):
        return build_ladder(ttt, rungs, RUNGS.__getitem__, N_OPEN, 1, n_boot=50, **kw)

    full = build(list(RUNGS), log=None)
    short = build(["random", "first"], log=None)
    lines = []
    extended = build(list(RUNGS), log=lines.append, played=short.pairings)
    assert extended.pairings[0] is short.pairings[0] and "stored" in lines[0]
    assert len(lines) == 3 and "stored" not in lines[1] + lines[2]

    def games(p):
        return (p.a, p.b, p.units, p.as_first, p.as_second)

    assert [games(p) for p in extended.pairings] == [games(p) for p in full.pairings]
    assert extended.elos == pytest.approx(full.elos)
    with pytest.raises(ValueError, match="random vs last. is first vs random here"):
        build(["first", "random", "last"], log=None, played=[full.pairings[1]])  # not a prefix
    with pytest.raises(ValueError, match="not among"):
        build(["random", "first"], log=None, played=full.pairings)


def test_packaged_ladders_are_consistent():
    """Every shipped ladder: its rungs are valid specs for its game, its openings are the ones
    its parameters give, and refitting its stored games gives its stored ratings."""
    import glob
    import os

    from jaxgames.evaluation import ladder as ladder_module
    from jaxgames.specs import check_spec, missing_data, parse_spec

    folder = os.path.dirname(ladder_module.__file__)
    files = glob.glob(os.path.join(folder, "ladders", "*.json"))
    assert files, "no packaged ladder"
    for path in files:
        ladder = load_ladder(path)
        env = ladder.make_env()
        assert game_key(env) == os.path.basename(path)[:-5]
        for spec in ladder.specs:  # perfect on animal shogi: valid, playable once solved
            assert str(parse_spec(spec)) == spec
            assert missing_data(spec, env) is not None or check_spec(spec, env) == spec
        states = openings(env, ladder.n_openings, ladder.plies, ladder.opening_seed)
        assert openings_digest(states) == ladder.openings_digest
        refit = ladder.fit().ratings()
        for rung in ladder.rungs:
            assert refit[rung.spec].elo == pytest.approx(rung.rating.elo, abs=1e-6)
            assert refit[rung.spec].lo == pytest.approx(rung.rating.lo, abs=1e-6)


def test_git_version_names_only_a_jaxgames_checkout(tmp_path):
    """Ladders record the commit they were built at: that of the jaxgames checkout, never
    that of another project whose repository holds an installed copy."""
    import importlib.util
    import shutil
    import subprocess

    from jaxgames import provenance

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "app.py").write_text("")
    git("add", "app.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "another project")
    copy = tmp_path / "venv" / "site-packages" / "jaxgames" / "provenance.py"
    copy.parent.mkdir(parents=True)
    shutil.copy(provenance.__file__, copy)
    spec = importlib.util.spec_from_file_location("installed_provenance", copy)
    installed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(installed)
    assert installed.git_version() == ""
    here = os.path.dirname(provenance.__file__)  # this checkout: its own commit
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True)
    if head.returncode == 0:
        assert provenance.git_version() == head.stdout.decode().strip() != ""


@pytest.mark.parametrize(
    "change, why",
    [
        (lambda d: [1, 2], "a ladder is a JSON object, not list"),
        (lambda d: {**d, "env_options": [1]}, "env_options must be an object"),
        (lambda d: {**d, "rungs": [{**d["rungs"][0], "spec": 5}]}, "spec must be a string"),
    ],
)
def test_a_ladder_of_the_wrong_shape_is_one_error(change, why):
    d = json.loads(json.dumps(load_ladder("tic_tac_toe").to_json()))
    with pytest.raises(ValueError, match=why):
        Ladder.from_json(change(d))


def test_percentile_interval_takes_the_nearest_order_statistics():
    """The bootstrap interval's ends, by hand: of B sorted draws the ones at round((B - 1) q),
    q = 0.025 and 0.975 (the 26th and 975th of 1000: 24.975 and 974.025 rounded; of 40 the
    2nd and 39th; at 90% the 51st and 950th of 1000), whatever order the draws come in;
    infinite draws (a sweep's refits) are taken as they are, never interpolated into NaN."""
    rng = np.random.default_rng(0)
    cases = [(1000, 0.95, (25, 974)), (40, 0.95, (1, 38)), (1000, 0.9, (50, 949))]
    for b, ci, want in cases:
        draws = rng.permutation(b).astype(float)[:, None]
        lo, hi = percentile_interval(draws, ci)
        assert (float(lo[0]), float(hi[0])) == want
    draws = np.concatenate([np.arange(35.0), np.full(5, np.inf)])[:, None]
    lo, hi = percentile_interval(rng.permutation(draws), 0.95)
    assert float(lo[0]) == 1.0 and float(hi[0]) == np.inf
