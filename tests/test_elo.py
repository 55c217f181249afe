"""Wilson intervals, records, the Bradley-Terry / Elo fit on synthetic tables and a small round
robin."""

import csv
import dataclasses

import jax
import numpy as np
import pytest

from jaxgames.evaluation.elo import (
    ELO_PER_NAT,
    Match,
    Record,
    bradley_terry,
    effective_games,
    expected_score,
    plot_ratings,
    wilson_interval,
    write_ratings_csv,
)
from jaxgames.evaluation.ladder import Pairing
from jaxgames.evaluation.match import MatchResult, round_robin
from jaxgames.specs import make_opponent


@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (0, 10, 0.0, 0.2775),
        (5, 10, 0.2366, 0.7634),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),
    ],
)
def test_wilson_known_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_wilson_errors_and_empty():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
    with pytest.raises(ValueError):
        Record(1, 1, 1).ci("elo")


def test_record():
    r = Record.of(np.array([1, 1, 0, -1, 1], np.int8))
    assert r == Record(3, 1, 1) and r.games == 5 and r.score == pytest.approx(0.7)
    assert r.swapped() == Record(1, 1, 3) and r.wdl == "3/1/1"
    d = r.to_dict()
    assert d["games"] == 5 and d["score_ci"] == r.ci("score") and d["win_rate"] == 0.6
    assert str(Record(0, 0, 0)) == "no games"
    for bad, what in [((-1, 0, 0), "W/D/L -1/0/0"), ((3, 0, 0, 0), "distinct=0")]:
        with pytest.raises(ValueError, match=what):
            Record(*bad)


def test_effective_games():
    """Pairs that always agree are worth one game each, pairs that always split two; openings
    repeated game for game count once."""
    o = np.repeat(np.arange(4), 2)
    agree = np.array([1, 1, 0, 0, 1, 1, 0, 0], float)
    split = np.array([1, 0, 0, 1, 1, 0, 0, 1], float)
    assert effective_games(agree, o, 4) == 4
    assert effective_games(split, o, 4) == 8
    assert effective_games(np.ones(8), o, 4) == 4
    assert effective_games(split, o, 1) == 2
    independent = np.random.default_rng(0).integers(0, 2, 400).astype(float)
    assert 250 < effective_games(independent, np.repeat(np.arange(200), 2), 200) <= 400


def paired_match(outcomes: list[int]) -> MatchResult:
    """A's games in ``arena``'s layout: opening i's games are i (A first) and n + i."""
    n = len(outcomes) // 2
    return MatchResult(
        outcomes=np.array(outcomes, np.int8),
        a_player=np.repeat(np.array([0, 1], np.int32), n),
        opening=np.tile(np.arange(n, dtype=np.int32), 2),
        plies=np.full(2 * n, 9, np.int32),
    )


def test_an_openings_two_games_are_one_unit_of_the_score_interval():
    """Openings won (or lost) with both colours are worth one game each: the score's interval
    is the Wilson interval over the openings, as wide as half the games; openings whose
    colours split the points are worth their two games. The same from a ladder file's unit
    histogram and W/D/L (Pairing.score_ci)."""
    agree = paired_match([1] * 6 + [-1] * 4 + [1] * 6 + [-1] * 4)
    split = paired_match([1] * 6 + [-1] * 4 + [-1] * 6 + [1] * 4)
    assert agree.overall.ci("score") == pytest.approx(wilson_interval(6, 10))
    assert agree.overall.effective == 10 and "(10.0 effective games)" in str(agree.overall)
    assert split.overall.ci("score") == pytest.approx(wilson_interval(10, 20))
    assert agree.overall.ci("win") == pytest.approx(wilson_interval(12, 20))  # the score's only
    for m in (agree, split):
        assert m.to_dict()["overall"]["score_ci"] == pytest.approx(m.overall.ci("score"))
        p = Pairing.from_match("a", "b", m)
        assert p.score_ci() == pytest.approx(m.overall.ci("score"))
        bare = Pairing("a", "b", p.units)  # no W/D/L: one game a unit
        assert bare.score_ci() == pytest.approx(wilson_interval(p.score * 10, 10))
    single = Pairing.from_counts("a", "b", 6, 0, 4)  # units of one game
    assert single.score_ci() == pytest.approx(wilson_interval(6, 10))
    # effective is not compared: its last bit depends on the order the points were summed in
    assert Record(1, 0, 1, effective=1.5) == Record(1, 0, 1, effective=1.5000000000000002)
    unpaired = dataclasses.replace(agree, opening=np.arange(20, dtype=np.int32))
    assert unpaired.overall.effective is None


def test_swapped_keeps_the_effective_games():
    """The same games from the other side are worth as many effective games: 5/2/3 over 4
    effective games seen from B is 3/2/5 whose score of 4 points in 10 games scales to 1.6
    points in 4 (Wilson over 4), A's interval mirrored (Wilson's is symmetric)."""
    r = Record(5, 2, 3, effective=4.0)
    s = r.swapped()
    assert (s.wins, s.draws, s.losses) == (3, 2, 5) and s.effective == 4.0
    assert s.ci("score") == pytest.approx(wilson_interval(1.6, 4))
    lo, hi = r.ci("score")
    assert s.ci("score") == pytest.approx((1 - hi, 1 - lo))
    assert "(4.0 effective games)" in str(s)


def test_two_players_200_elo():
    # expected score at +200 Elo is 0.7597
    ratings = bradley_terry([Match("a", "b", 7597, 0, 2403)], prior=0.0)
    assert ratings["a"] - ratings["b"] == pytest.approx(200.0, abs=0.5)
    assert ratings["a"] == pytest.approx(-ratings["b"])
    assert expected_score(200.0, 0.0) == pytest.approx(0.7597, abs=1e-4)


def test_ordering_and_anchor():
    matches = [
        Match("strong", "medium", 70, 10, 20),
        Match("medium", "weak", 65, 20, 15),
        Match("strong", "weak", 90, 5, 5),
    ]
    ratings = bradley_terry(matches, anchor="weak")
    assert list(ratings) == ["strong", "medium", "weak"]
    assert ratings["weak"] == 0.0
    # a player that never scores stays finite thanks to the prior
    r = bradley_terry([Match("god", "mortal", 100, 0, 0)])
    assert r["god"] - r["mortal"] > 400 and all(abs(v) < 1e4 for v in r.values())
    with pytest.raises(ValueError, match="anchor"):
        bradley_terry(matches, anchor="nobody")
    # without the prior a whitewash has no finite rating, and a match of no games no data
    with pytest.raises(RuntimeError, match="with prior = 0 a player that won or lost"):
        bradley_terry([Match("god", "mortal", 100, 0, 0)], prior=0.0)
    with pytest.raises(ValueError, match="has no games"):
        bradley_terry([Match("a", "b", 0, 0, 0)], prior=0.0)
    with pytest.raises(ValueError, match="prior must be a number >= 0"):
        bradley_terry(matches, prior=float("nan"))


def test_fit_solves_the_likelihood_equations():
    # at the penalised MLE each player's points (plus prior / 2 per match) equal its expected
    # points over the matches' games (plus prior): the gradient of the log-likelihood is zero
    rng = np.random.default_rng(0)
    names = ["p0", "p1", "p2", "p3", "p4"]
    matches = []
    for i in range(5):
        for j in range(i + 1, 5):
            w, d, losses = (int(x) for x in rng.integers(0, 40, 3))
            matches.append(Match(names[i], names[j], w, d, losses))
    prior = 1.0
    elo = bradley_terry(matches, prior=prior)
    assert abs(sum(elo.values())) < 1e-6
    got = dict.fromkeys(names, 0.0)
    expected = dict.fromkeys(names, 0.0)
    for m in matches:
        n = m.wins + m.draws + m.losses + prior
        p = 1.0 / (1.0 + np.exp(-(elo[m.a] - elo[m.b]) / ELO_PER_NAT))
        got[m.a] += m.wins + m.draws / 2 + prior / 2
        got[m.b] += m.losses + m.draws / 2 + prior / 2
        expected[m.a] += n * p
        expected[m.b] += n * (1 - p)
    for x in names:
        assert got[x] == pytest.approx(expected[x], abs=1e-6), x


def test_unconnected_players_are_refused():
    with pytest.raises(ValueError, match="unconnected groups"):
        bradley_terry([Match("a", "b", 3, 1, 2), Match("c", "d", 2, 0, 2)])
    with pytest.raises(ValueError, match="no matches"):
        bradley_terry([])


def test_round_robin_table(ttt, tmp_path):
    pols = {s: make_opponent(s, ttt) for s in ["random", "greedy", "perfect"]}
    matches = round_robin(pols, ttt, 600, jax.random.PRNGKey(0))
    assert len(matches) == 3
    ratings = bradley_terry(matches, anchor="random")
    assert list(ratings) == ["perfect", "greedy", "random"], ratings
    path = tmp_path / "elo" / "ratings.csv"
    write_ratings_csv(ratings, matches, str(path))
    rows = list(csv.DictReader(open(path)))
    assert [r["name"] for r in rows] == list(ratings) and rows[0]["games"] == "1200"
    assert (tmp_path / "elo" / "ratings_matches.csv").exists()
    plot_ratings(ratings, str(tmp_path / "elo" / "elo.png"))
    assert (tmp_path / "elo" / "elo.png").stat().st_size > 0
