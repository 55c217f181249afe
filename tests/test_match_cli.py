"""``jaxgames match`` and :func:`jaxgames.evaluation.reports.run_match`: the protocol agrees with
a direct ``play_match``, colours swap into the mirrored result, each report on a case whose
answer is known (perfect play against brute force), bad input is one line and writes nothing."""

import json
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_reversi import RefReversi
from test_reversi_engine import ref_solve

import jaxgames
from jaxgames import cli
from jaxgames.core import random_policy
from jaxgames.evaluation.elo import Record
from jaxgames.evaluation.match import play_match
from jaxgames.evaluation.openings import openings
from jaxgames.evaluation.reports import (
    exact_outcomes,
    format_match,
    parse_reports,
    run_match,
)
from jaxgames.evaluation.reversi_engine import solve_endgame, with_exact_endgame
from jaxgames.specs import make_opponent

TTT = jaxgames.make("tic_tac_toe")
R4 = jaxgames.make("reversi", size=4)
N = 16  # openings per tic-tac-toe match
COLOURS = ("as_first", "as_second")


def wdl(r) -> tuple[int, int, int]:
    return (
        (r["wins"], r["draws"], r["losses"]) if isinstance(r, dict) else (r.wins, r.draws, r.losses)
    )


def test_counts_agree_with_play_match_and_lost_games_are_counted_once():
    """Random against greedy from 4-ply openings: the records are those of a direct play_match
    over the same openings and key; every loss has one length; as second, A loses before it
    moves exactly on the openings where the mover (greedy) has a winning move."""
    greedy = make_opponent("greedy", TTT)
    out = run_match(random_policy, greedy, TTT, games=N, opening_plies=4, reports=["lengths"])
    starts = openings(TTT, N, 4, 0)
    direct = play_match(
        random_policy, greedy, TTT, starts, jax.random.PRNGKey(0), final_states=True
    )
    assert out["games"] == 2 * N and out["openings"] == out["distinct_openings"] == N
    assert wdl(out["overall"]) == wdl(direct.overall) and sum(wdl(out["overall"])) == 2 * N
    for c in COLOURS:
        assert wdl(out[c]) == wdl(getattr(direct, c)) and sum(wdl(out[c])) == N
    assert out["mean_plies"] == pytest.approx(float(np.mean(direct.plies)))
    lengths = out["reports"]["lengths"]
    for c in COLOURS:
        assert sum(lengths[c]["lost_at_plies"].values()) == lengths[c]["losses"] == out[c]["losses"]
        assert min(lengths[c]["lost_at_plies"], default=5) >= 5  # 4 opening plies, then a move
    wins_at_once = 0
    for i in range(N):
        state = jax.tree_util.tree_map(lambda x: jnp.asarray(x[i]), starts)
        assert int(state.current_player) == 0
        legal = np.flatnonzero(np.asarray(state.legal_action_mask))
        wins_at_once += any(float(TTT.step(state, a).rewards[0]) > 0 for a in legal)
    assert wins_at_once > 0  # the case is not empty
    assert lengths["as_second"]["lost_before_moving"] == wins_at_once
    assert lengths["as_first"]["lost_before_moving"] == 0  # A moves first after the opening


def test_swapped_colours_give_the_mirrored_result():
    greedy = make_opponent("greedy", TTT)
    ab = run_match(random_policy, greedy, TTT, games=N, opening_plies=4)
    ba = run_match(greedy, random_policy, TTT, games=N, opening_plies=4)
    assert wdl(ba["overall"]) == wdl(ab["overall"])[::-1]
    assert wdl(ba["as_first"]) == wdl(ab["as_second"])[::-1]
    assert wdl(ba["as_second"]) == wdl(ab["as_first"])[::-1]
    assert ba["overall"]["score"] == pytest.approx(1 - ab["overall"]["score"])


def first_legal(key, state):
    """A deterministic player: the lowest legal action."""
    return jnp.argmax(state.legal_action_mask).astype(jnp.int32)


def test_repeated_games_count_once_in_the_intervals():
    """Deterministic players from the start position replay one game per colour: one distinct
    opening and final position, and intervals as wide as for one game per colour."""
    out = run_match(first_legal, first_legal, R4, games=6, opening_plies=0, reports=["scores"])
    assert out["distinct_openings"] == 1 and out["games"] == 12
    for c in COLOURS:
        assert out["reports"]["scores"][c]["distinct_final_positions"] == 1
        assert out[c]["effective_games"] == 1
        lo, hi = out[c]["score_ci"]
        assert hi - lo > 0.7
    assert 1 <= out["overall"]["effective_games"] <= 2
    assert out["margin"]["lo"] is None  # one unit: no interval


def test_endings_and_scores_recount_the_final_boards():
    """greedy against random on 4x4: each colour's endings and margins, recounted from the
    final boards of a direct play_match."""
    greedy = make_opponent("greedy", R4)
    out = run_match(greedy, random_policy, R4, games=12, reports=["endings", "scores"])
    assert out["opening_plies"] == 4  # no 4x4 ladder: 4 random plies
    direct = play_match(
        greedy, random_policy, R4, openings(R4, 12, 4, 0), jax.random.PRNGKey(0), final_states=True
    )
    results = {1: "won", 0: "drawn", -1: "lost"}
    for p, c in enumerate(COLOURS):
        expect: Counter = Counter()
        margins: Counter = Counter()
        for g in np.flatnonzero(direct.a_player == p):
            board, mover = R4.to_text(
                jax.tree_util.tree_map(lambda x: x[g], direct.states)
            ).split()[:2]
            mine = board.count("XO"[p])
            theirs = board.count("XO"[1 - p])
            how = (
                "wiped out"
                if min(mine, theirs) == 0
                else "full board"
                if "-" not in board
                else "blocked"
            )
            expect[f"{results[int(direct.outcomes[g])]}: {how}"] += 1
            margins[mine - theirs] += 1
        endings = out["reports"]["endings"][c]
        assert {k: v["games"] for k, v in endings.items() if v["games"]} == dict(expect)
        assert sum(v["games"] for v in endings.values()) == 12
        assert sum(v["games"] for k, v in endings.items() if k.startswith("won")) == out[c]["wins"]
        scores = out["reports"]["scores"][c]
        assert scores["margins"] == dict(margins)
        assert 1 <= scores["distinct_final_positions"] <= 12


def test_animal_shogi_and_tic_tac_toe_endings_recount_the_final_positions():
    """random against random on animal shogi with a 24-ply limit (some games reach it; a cap
    after the opening cuts others off): each game's ending recounted from its final position's
    text (a try: the winner's lion, L or l, on its far rank; a draw of the rules before the
    limit: a repetition; a decided game otherwise: the loser had no legal move, checked with
    the rules); on tic-tac-toe a decided game made a line, a drawn one filled the board."""
    from jaxgames.games.animal_shogi import rules

    env = jaxgames.make("animal_shogi", max_steps=24)
    for max_plies, cut in ((None, 0), (12, 1)):
        out = run_match(
            random_policy, random_policy, env, games=40, max_plies=max_plies, reports=["endings"]
        )
        direct = play_match(
            random_policy, random_policy, env, openings(env, 40, 4, 0), jax.random.PRNGKey(0),
            max_plies=max_plies, final_states=True,
        )  # fmt: skip
        results = {1: "won", 0: "drawn", -1: "lost"}
        for p, c in enumerate(COLOURS):
            expect: Counter = Counter()
            for g in np.flatnonzero(direct.a_player == p):
                state = jax.tree_util.tree_map(lambda x: x[g], direct.states)
                ranks = env.to_text(state).split()[0].split("/")
                outcome = int(direct.outcomes[g])
                if not (bool(state.terminated) or bool(state.truncated)):
                    how = "cut off"
                elif bool(state.truncated):
                    how = "move limit"
                elif outcome == 0:
                    how = "repetition"
                elif "L" in ranks[0] or "l" in ranks[-1]:
                    how = "try"
                else:
                    mover = int(state.current_player)
                    view = rules.mover_view(state.board, mover)
                    assert not bool(rules.legal_action_mask(view, state.hand[mover]).any())
                    how = "no legal move"
                expect[f"{results[outcome]}: {how}"] += 1
            endings = out["reports"]["endings"][c]
            assert {k: v["games"] for k, v in endings.items() if v["games"]} == dict(expect)
            assert sum(v["games"] for k, v in endings.items() if "cut off" in k) >= cut
        if max_plies is None:
            both = {
                k for c in COLOURS for k, v in out["reports"]["endings"][c].items() if v["games"]
            }
            assert {"drawn: move limit", "won: no legal move"} <= both
    out = run_match(random_policy, random_policy, TTT, games=40, reports=["endings"])
    for c in COLOURS:
        endings = {k: v["games"] for k, v in out["reports"]["endings"][c].items() if v["games"]}
        assert set(endings) <= {"won: three in a row", "lost: three in a row", "drawn: full board"}
        assert endings.get("drawn: full board", 0) == out[c]["draws"]


class PerfectWithOracleValues:
    """Random play until 12 empty squares, then perfect play (every 4x4 position); its
    searched value is the exact result's sign, its guide's the opposite sign."""

    def __init__(self, sign: float = 1.0):
        self.play = with_exact_endgame(R4, random_policy, 12)
        self.sign = sign
        self.guide = self if sign < 0 else PerfectWithOracleValues(-1.0)

    def __call__(self, key, state):
        return self.play(key, state)

    def value(self, state):
        return self.sign * jnp.sign(solve_endgame(R4, state, 12)[0]).astype(jnp.float32)


def from_text(env, text: str) -> RefReversi:
    board, mover = text.split()[:2]
    g = RefReversi(env.size)
    n = env.size
    g.board = [["-XO".index(ch) for ch in board[r * n : (r + 1) * n]] for r in range(n)]
    g.player = "XO".index(mover)
    return g


def test_exact_report_against_brute_force():
    """On 4x4 at 12 empties every opening is solved: the exact results agree with a plain
    negamax, a perfect player never throws a game away, and the value heads' agreement with
    the exact sign is 100% (the oracle) and 0% (its negation)."""
    a = PerfectWithOracleValues()
    out = run_match(a, random_policy, R4, games=12, opening_plies=2, reports=["exact:12"])
    starts = openings(R4, 12, 2, 0)
    margins = []  # the mover's perfect-play margin of each opening (player 0 moves after 2 plies)
    for i in range(12):
        g = from_text(R4, R4.to_text(jax.tree_util.tree_map(lambda x: x[i], starts)))
        assert g.player == 0
        margins.append(ref_solve(g, {}, [False]))
    sign = np.sign(margins)
    both = jax.tree_util.tree_map(lambda x: np.concatenate([x, x]), starts)
    a_player = np.repeat([0, 1], 12)
    np.testing.assert_array_equal(
        exact_outcomes(R4, both, a_player, 12), np.concatenate([sign, -sign])
    )
    rep = out["reports"]["exact:12"]
    for c, s in zip(COLOURS, (sign, -sign)):
        r = rep[c]
        assert wdl(r["perfect"]) == wdl(Record.of(s))
        assert r["over_before"] == 0 and r["thrown_away"] == 0
        table = np.array(r["table"])  # [exact W/D/L][final W/D/L]
        assert table.sum() == 12 and np.all(np.triu(table, 1) == 0)  # never worse than exact
        assert tuple(table.sum(0)) == wdl(out[c])
        v = r["values"]
        assert r["lost_before"] == int(np.sum(s < 0))
        if v["search"]["decided"]:
            assert v["search"]["sign_agreement"] == 1.0 and v["network"]["sign_agreement"] == 0.0
        assert v["search"]["mean_abs_error"] == 0.0
    assert (
        rep["as_first"]["values"]["search"]["decided"]
        + rep["as_second"]["values"]["search"]["decided"]
        > 0
    )


def test_random_against_a_perfect_player_never_beats_the_exact_result():
    table = run_match(
        random_policy, make_opponent("solve:12:random", R4), R4, games=12, opening_plies=2,
        reports=["exact:12"],
    )["reports"]["exact:12"]  # fmt: skip
    for c in COLOURS:
        assert np.all(np.tril(np.array(table[c]["table"]), -1) == 0)  # never better than exact
        assert table[c]["values"] == {}  # a plain function has no value head


def test_games_cut_off_by_max_plies_are_neither_blocked_nor_solved():
    """max_plies stops every game before 3 empty squares: its endings are "cut off" (not
    "blocked"), and the exact report leaves them out (no perfect-play result, none thrown
    away or lost before) and counts them."""
    out = run_match(
        random_policy, random_policy, R4, games=8, opening_plies=2, max_plies=3,
        reports=["endings", "exact:3"],
    )  # fmt: skip
    for c in COLOURS:
        endings = {k: v["games"] for k, v in out["reports"]["endings"][c].items() if v["games"]}
        assert endings == {"drawn: cut off": 8}
        r = out["reports"]["exact:3"][c]
        assert wdl(r["perfect"]) == (0, 0, 0) and r["perfect"]["score"] is None
        assert (r["cut_before"], r["thrown_away"], r["lost_before"], r["over_before"]) == (
            8,
            0,
            0,
            0,
        )
    assert "cut off before (left out): 8" in format_match(out)


def test_parse_reports():
    assert parse_reports(["lengths", "exact:012", "lengths"], R4) == ("lengths", "exact:12")
    for bad, why in [
        (["exact:12", "exact:10"], "one exact:E"),
        (["exact:21"], "from 1 to 20"),
        (["exact"], "unknown report"),
        (["lengths:3"], "unknown report"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_reports(bad, R4)
    assert parse_reports(["endings"], TTT) == ("endings",)
    with pytest.raises(ValueError, match="no score margin"):
        parse_reports(["scores"], TTT)


def test_match_command(tmp_path, capsys):
    """Prints the records and reports, writes the JSON of run_match; an existing file needs
    --force."""
    path = tmp_path / "m.json"
    args = ["match", "random", "greedy", "--game", "tic_tac_toe", "--games", str(N)]
    args += ["--opening-plies", "4", "--report", "lengths", "--json", str(path)]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "A = random, B = greedy" in text and "A as second:" in text and "before A moved" in text
    data = json.loads(path.read_text())
    expect = run_match(
        random_policy, make_opponent("greedy", TTT), TTT, games=N, opening_plies=4,
        reports=["lengths"],
    )  # fmt: skip
    assert data["a"] == "random" and wdl(data["overall"]) == wdl(expect["overall"])
    assert data["reports"]["lengths"]["as_second"]["losses"] == expect["as_second"]["losses"]
    assert cli.main(args) == 2
    assert "exists; add --force" in capsys.readouterr().err
    assert cli.main(args + ["--force"]) == 0


@pytest.mark.parametrize(
    "args, why",
    [
        (["random", "greedy", "--game", "tic_tac_toe", "--games", "0"], "invalid --games=0"),
        (["random", "greedy", "--game", "tic_tac_toe", "--games", "5000001"], "5,000,000 open"),
        (["random", "greedy", "--game", "tic_tac_toe", "--batch", "0"], "invalid --batch=0"),
        (["random", "greedy", "--game", "tic_tac_toe", "--opening-plies", "-1"], "--opening-plies"),
        (["random", "greedy", "--game", "tic_tac_toe", "--opening-plies", "9"], "at most 9 plies"),
        (["random", "greedy", "--game", "tic_tac_toe", "--max-plies", "0"], "--max-plies"),
        (["random", "greedy", "--game", "tic_tac_toe", "--report", "exact:3"], "for reversi"),
        (["random", "greedy", "--game", "reversi", "--report", "exact:30"], "from 1 to 20"),
        (["random", "greedy", "--game", "tic_tac_toe", "--report", "bogus"], "unknown report"),
        (["random", "alphabeta:x", "--game", "tic_tac_toe"], "alphabeta needs an integer"),
        (["random", "greedy"], "--game is required"),
        (["random", "greedy", "--game", "chess"], "chess"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(args, why, tmp_path, capsys):
    path = tmp_path / "m.json"
    assert cli.main(["match", *args, "--json", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and why in err, err
    assert not path.exists()


def test_json_never_overwrites_a_run_folder_file(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "metrics.jsonl").write_text("x\n")
    base = ["match", "random", "greedy", "--game", "tic_tac_toe"]
    for name in ("config.json", "metrics.jsonl"):
        assert cli.main([*base, "--json", str(run / name), "--force"]) == 2
        assert "run or agent folder" in capsys.readouterr().err
    assert (run / "config.json").read_text() == "{}" and (
        run / "metrics.jsonl"
    ).read_text() == "x\n"
    assert cli.main([*base, "--json", str(tmp_path / "no" / "m.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
