"""Every experiment script's ``main`` runs end to end in a tiny configuration (so none can rot),
and the shared helpers of experiments/common.py do what they claim.

Scripts already covered elsewhere: benchmark_throughput.py (test_benchmark_smoke.py). The
tabular-Q and value-iteration scripts run here through reference_articles.py / directly.
"""

import csv
import json
import os
import shutil
import sys
import types

import jax
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from experiments import common  # noqa: E402


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# ----------------------------------------------------------------------------- helpers
def test_mean_band_t_interval():
    v = np.array([[0.2, 0.5], [0.4, 0.5], [0.6, 0.5]])
    mu, lo, hi = common.mean_band(v)
    np.testing.assert_allclose(mu, [0.4, 0.5])
    half = 4.303 * 0.2 / np.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    np.testing.assert_allclose(lo, [max(0.0, 0.4 - half), 0.5])
    np.testing.assert_allclose(hi, [min(1.0, 0.4 + half), 0.5])
    mu1, lo1, hi1 = common.mean_band(v[:1])
    assert (lo1 == mu1).all() and (hi1 == mu1).all()


def test_outcome_counts_by_colour():
    outcomes = np.array([[1, 0, -1, 1], [-1, -1, 0, 1]], np.int8)
    a_player = np.array([0, 0, 1, 1])
    c = common.outcome_counts(outcomes, a_player)
    assert c["win_first"].tolist() == [1, 0] and c["loss_first"].tolist() == [0, 2]
    assert c["draw_second"].tolist() == [0, 1] and c["win_second"].tolist() == [1, 1]
    assert c["games_all"].tolist() == [4, 4]


def test_parse_game():
    assert common.parse_game("reversi:6") == ("reversi", {"size": 6}, "reversi6x6")
    assert common.parse_game("tic_tac_toe") == ("tic_tac_toe", {}, "tic_tac_toe")
    with pytest.raises(ValueError, match="name:size"):
        common.parse_game("reversi:big")


def test_games_and_targets_follow_the_registry():
    import jaxgames

    specs = common.standard_games()
    assert specs == ["tic_tac_toe", "reversi:6", "reversi:8", "animal_shogi"]
    assert [common.parse_game(s)[:2] for s in specs] == jaxgames.game_variants()
    assert set(common.TARGETS) - {"default"} <= set(jaxgames.registered_games())


def test_targets_are_held_out_ladder_rungs():
    """Every target opponent is a rung of its game's ladder, and none (but the random floor) is
    a training partner of the presets."""
    import jaxgames
    from experiments.build_ladder import ladder_specs
    from jaxgames.agents import algorithm_module

    for spec in common.standard_games():
        name, options, _ = common.parse_game(spec)
        rungs = ladder_specs(jaxgames.make(name, **options))
        partners = set()
        for algo in ("ppo", "dqn", "alphazero"):
            partners |= set(algorithm_module(algo).default_config(name, options).partners)
        for opp in common.TARGETS.get(name, common.TARGETS["default"]):
            assert opp in rungs, (spec, opp)
            assert opp == "random" or opp not in partners, (spec, opp)


def test_curve_opponents_are_cheap_held_out_rungs():
    import jaxgames
    from jaxgames.agents.presets import CLASSIC_PARTNERS

    r8 = jaxgames.make("reversi", size=8)
    # greedy (and alphabeta:2, no rung) are the presets' partners; uct:1000 and engine:3+ are slow
    assert common.curve_opponents(r8, CLASSIC_PARTNERS) == [
        "random",
        "uct:100",
        "engine:1",
        "engine:2",
    ]
    assert common.curve_opponents(r8)[:2] == ["random", "greedy"]
    ttt = jaxgames.make("tic_tac_toe")
    assert common.curve_opponents(ttt) == ["random", "greedy", "uct:30", "uct:300", "perfect"]
    # random stays as the floor even when it is a partner
    assert common.curve_opponents(ttt, {"random": 0.5, "uct:30": 0.2})[:2] == ["random", "greedy"]
    # a size without a ladder of its own uses the rungs of the game's other sizes
    r4 = jaxgames.make("reversi", size=4)
    assert common.curve_opponents(r4, {"greedy": 0.25}) == [
        "random",
        "uct:100",
        "engine:1",
        "engine:2",
    ]
    # evaluation games start from the ladder's random plies, tic-tac-toe's from the start
    assert [common.eval_opening_plies(e) for e in (r8, ttt, r4)] == [4, 0, 4]
    assert common.target_line("reversi", "engine:2") == ("score", 0.5)
    assert common.target_line("tic_tac_toe", "random") == ("win", 0.75)
    assert common.target_line("tic_tac_toe", "perfect") is None  # no losses: not a rate line


def test_learning_curves_default_opponents_leave_out_partners(tmp_path, monkeypatch):
    """Without --opponents a run is measured against random and the held-out cheap rungs: the
    reversi PPO preset trains with greedy and alphabeta:2, so greedy is not among them."""
    from experiments import learning_curves

    class Stop(Exception):
        pass

    seen = []

    def fake_train_seeds(algorithm, config, seeds, opponents, *args, **kwargs):
        seen.append((dict(config.partners), list(opponents)))
        raise Stop

    monkeypatch.setattr(learning_curves, "train_seeds", fake_train_seeds)
    with pytest.raises(Stop):
        learning_curves.main(
            ["--games", "reversi:8", "--algos", "ppo", "--quick", "--out", str(tmp_path)]
        )
    (partners, opponents), *_ = seen
    assert "greedy" in partners and "random" in partners
    assert opponents == ["random", "uct:100", "engine:1", "engine:2"]


def test_scripts_report_bad_input_in_one_line_and_write_nothing(tmp_path, capsys):
    """A bad input to an experiment script is one line on stderr and exit code 2, as in the
    ``jaxgames`` command (every script's ``__main__`` runs ``main`` through
    ``report_errors``), and an ``init_from`` agent of another game is refused before the
    script writes its folder."""
    from experiments import learning_curves
    from jaxgames.cli import report_errors

    out = tmp_path / "curves"
    argv = ["--games", "tic_tac_toe", "--algos", "alphazero", "--quick", "--out", str(out)]
    argv += ["--set", "init_from=pretrained:reversi8"]
    assert report_errors(lambda: learning_curves.main(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: invalid init_from='pretrained:reversi8'") and err.count("\n") == 1
    assert not out.exists()
    scripts = [f for f in os.listdir(os.path.join(ROOT, "experiments")) if f.endswith(".py")]
    for name in sorted(set(scripts) - {"common.py", "__init__.py"}):
        with open(os.path.join(ROOT, "experiments", name)) as f:
            assert "report_errors(main)" in f.read(), name


# ----------------------------------------------------------------------------- scripts
def test_quickstart_tiny(tmp_path):
    from experiments import quickstart

    out = str(tmp_path / "qs")
    res = quickstart.main(
        [
            "--total-steps",
            "4096",
            "--set",
            "num_envs=32",
            "net.hidden=8",
            "--games-per-colour",
            "10",
            "--opponents",
            "random",
            "perfect",
            "--out",
            out,
            "--no-progress",
        ]
    )
    for f in (
        "config.json",
        "metrics.jsonl",
        "metrics.csv",
        "learning_curve.png",
        "strength.md",
        "strength.json",
    ):
        assert os.path.exists(os.path.join(out, f)), f
    s = res["strength"]
    assert set(s) == {"random", "perfect"}
    assert (
        s["perfect"]["overall"]["games"] == 20 and s["perfect"]["overall"]["wins"] == 0
    )  # nobody beats perfect
    # a second run of the same command resumes the finished run instead of failing
    res2 = quickstart.main(
        [
            "--total-steps",
            "4096",
            "--set",
            "num_envs=32",
            "net.hidden=8",
            "--games-per-colour",
            "10",
            "--opponents",
            "random",
            "--out",
            out,
            "--no-progress",
        ]
    )
    assert res2["total_steps"] == res["total_steps"]


@pytest.fixture(scope="module")
def ttt_curves(tmp_path_factory):
    """One learning-curves run shared by the tests below (it is their slow part): tic-tac-toe
    PPO, 2 seeds in one vmap, a tiny network, greedy as a training partner (a quarter of the
    games). Returns (out folder, summaries). PPO only: DQN goes through the same code path."""
    from experiments import learning_curves

    out = str(tmp_path_factory.mktemp("lc"))
    summaries = learning_curves.main(
        [
            "--games",
            "tic_tac_toe",
            "--algos",
            "ppo",
            "--seeds",
            "2",
            "--total-steps",
            "3000",
            "--evals",
            "2",
            "--eval-games",
            "8",
            "--set",
            "num_envs=16",
            "net.hidden=8",
            "partners={'greedy': 0.25}",
            "--opponents",
            "random",
            "greedy",
            "--out",
            out,
        ]
    )
    return out, summaries


def test_learning_curves_tiny(ttt_curves):
    from experiments import learning_curves

    out, summaries = ttt_curves
    assert [s["algorithm"] for s in summaries] == ["ppo"]
    d = os.path.join(out, "tic_tac_toe_ppo")
    for f in (
        "config.json",
        "curves.csv",
        "summary.json",
        "learning_curves.png",
        "learning_curves.pdf",
    ):
        assert os.path.exists(os.path.join(d, f)), f
    rows = read_csv(os.path.join(d, "curves.csv"))
    assert {r["seed"] for r in rows} == {"0", "1"}
    assert {r["opponent"] for r in rows} == {"random", "greedy"}
    chunks = sorted({int(r["chunk"]) for r in rows})
    assert chunks[0] == 0 and len(chunks) >= 2  # the untrained point + evaluations in training
    for r in rows:
        assert int(r["win_all"]) + int(r["draw_all"]) + int(r["loss_all"]) == 8
        assert int(r["win_first"]) + int(r["draw_first"]) + int(r["loss_first"]) == 4
    steps = [float(r["env_steps"]) for r in rows if r["seed"] == "0" and r["opponent"] == "random"]
    assert steps == sorted(steps) and steps[-1] > 0
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    assert [r["algorithm"] for r in index["runs"]] == ["ppo"]
    table = open(os.path.join(out, "summary.md")).read()
    assert "| tic_tac_toe | ppo | 2 |" in table and "vs greedy: win (loss)" in table
    (row,) = [ln for ln in table.splitlines() if ln.startswith("| tic_tac_toe |")]
    assert row.count(" partner") == 1 and row.rstrip(" |").endswith("partner")  # greedy only
    # Elo on the tic-tac-toe ladder at every evaluation point and seed, and the per-game figure
    elos = read_csv(os.path.join(d, "elo.csv"))
    assert {(r["chunk"], r["seed"]) for r in elos} == {(r["chunk"], r["seed"]) for r in rows}
    for r in elos:
        assert r["rungs"] == "random greedy"
        assert float(r["elo_lo"]) <= float(r["elo"]) <= float(r["elo_hi"]) or r["bound"]
    assert os.path.exists(os.path.join(out, "tic_tac_toe_elo.png"))
    assert "| Elo |" in table
    # the figure can be redrawn from curves.csv alone
    png = os.path.join(d, "learning_curves.png")
    os.remove(png)
    assert learning_curves.main(["--replot", d]) == [] and os.path.exists(png)
    # the seeds trained in one vmap are different agents, saved as loadable run directories
    from jaxgames.runs import load_agent

    a0, a1 = (load_agent(os.path.join(d, f"seed{s}")) for s in (0, 1))
    assert a0.config.seed == 0 and a1.config.seed == 1
    assert a0.config.partners == {"greedy": 0.25} and a0.config.net["hidden"] == 8
    l0, l1 = jax.tree_util.tree_leaves(a0.params)[0], jax.tree_util.tree_leaves(a1.params)[0]
    assert not np.allclose(np.asarray(l0), np.asarray(l1))
    # each seed run has its chunks' steps, clock and own training metrics, which the model
    # card of an export reads (as for a run of `jaxgames train`)
    from jaxgames.pretrained import training_facts
    from jaxgames.runs.metrics import MetricsLog

    logs = [MetricsLog(os.path.join(d, f"seed{s}")).records() for s in (0, 1)]
    assert [r["chunk"] for r in logs[0]] == list(range(1, len(logs[0]) + 1)) and logs[0]
    assert logs[0][-1]["env_steps"] == max(steps)
    assert [r["time"] for r in logs[0]] == [r["time"] for r in logs[1]]  # one vmapped run
    assert logs[0][-1]["train/loss"] != logs[1][-1]["train/loss"]
    facts = training_facts(os.path.join(d, "seed0"), logs[0][-1]["chunk"])
    assert facts["env_steps"] == max(steps) and facts["wall_clock_seconds"] > 0
    chunk_seconds = sum(r["chunk_seconds"] for r in logs[0])
    assert facts["train_seconds"] == pytest.approx(chunk_seconds, abs=0.051)  # rounded to 0.1
    assert facts["source_run"].endswith("/tic_tac_toe_ppo/seed0")


def test_elo_rows_rate_each_point_on_the_ladder():
    """Half the points against one rung is that rung's rating; a sweep of every game against
    both rungs gives a one-sided lower bound above the stronger rung."""
    import jaxgames
    from experiments.learning_curves import elo_rows
    from jaxgames.evaluation.ladder import load_ladder

    env = jaxgames.make("tic_tac_toe")
    elos = load_ladder("tic_tac_toe").elos

    def row(seed, opponent, w, d, lo):
        return dict(
            chunk=1,
            env_steps=10,
            train_seconds=1.0,
            seed=seed,
            opponent=opponent,
            win_all=w,
            draw_all=d,
            loss_all=lo,
        )

    rows = [
        row(0, "uct:300", 10, 20, 10),
        row(0, "not-a-rung", 40, 0, 0),  # ignored
        row(1, "random", 40, 0, 0),
        row(1, "greedy", 40, 0, 0),
    ]
    even, sweep = elo_rows(rows, env)
    assert even["seed"] == 0 and even["rungs"] == "uct:300" and not even["bound"]
    assert abs(even["elo"] - elos["uct:300"]) < 0.5
    assert even["elo_lo"] < even["elo"] < even["elo_hi"]
    assert sweep["bound"] == "lower" and sweep["elo"] > elos["greedy"]


def test_strength_table_search_players(ttt_curves, tmp_path):
    """Network and network + search (--search-all: also in the Elo table)."""
    from experiments import strength_table

    out, _ = ttt_curves
    st = str(tmp_path / "st")
    summary = strength_table.main(
        [
            "--from",
            out,
            "--games-per-colour",
            "6",
            "--elo-games",
            "6",
            "--opponents",
            "random",
            "--search-sims",
            "2",
            "--search-all",
            "--ladder-games",
            "0",
            "--out",
            st,
        ]
    )
    # each agent is rated as its network alone and as the network guiding 2 simulations of search
    agents = {"ppo:tic_tac_toe_ppo/seed0", "ppo:tic_tac_toe_ppo/seed0+mcts2"}
    assert set(summary["agents"]) == agents
    assert set(summary["elo"]["tic_tac_toe"]) == agents | {"random"}
    table = open(os.path.join(st, "table.md")).read()
    assert "| tic_tac_toe | ppo:tic_tac_toe_ppo/seed0 | random | held out |" in table
    assert "## Elo, tic_tac_toe" in table
    assert "| tic_tac_toe | ppo:tic_tac_toe_ppo/seed0+mcts2 | random |" in table
    # the tic-tac-toe targets are checked, not lowered
    assert ">= 95% as 1st, >= 75% as 2nd" in table
    rows = read_csv(os.path.join(st, "table.csv"))
    assert len(rows) == 2 * 1 * 2  # agents (network, network + search) x opponents x colours
    assert all(int(r["games"]) == 6 for r in rows)
    for f in ("strength.png", "strength.pdf", "elo_tic_tac_toe.csv", "elo_tic_tac_toe.png"):
        assert os.path.exists(os.path.join(st, f)), f
    assert summary["ladder"] == {} and "Ladder ratings" not in table  # --ladder-games 0
    assert summary["opening_plies"] == {"tic_tac_toe": 0}


def test_strength_table_marks_partners_and_held_out_opponents(ttt_curves, tmp_path):
    """The agent trained with a greedy partner: the table says greedy was a training partner
    (no target), adds a held-out extra opponent with its own game count; on the ladder greedy is
    not played; without --search-all the search player meets the opponents only and joins no
    Elo table and no ladder."""
    from experiments import strength_table

    out, _ = ttt_curves
    st = str(tmp_path / "st")
    summary = strength_table.main(
        [
            "--from",
            out,
            "--games-per-colour",
            "4",
            "--elo-games",
            "2",
            "--opponents",
            "greedy",
            "--extra-opponents",
            "alphabeta:1",
            "--extra-games-per-colour",
            "2",
            "--search-sims",
            "1",
            "--ladder-games",
            "2",
            "--ladder-rungs",
            "greedy,perfect",
            "--out",
            st,
        ]
    )
    name = "ppo:tic_tac_toe_ppo/seed0"
    assert set(summary["agents"]) == {name, name + "+mcts1"}
    assert set(summary["agents"][name + "+mcts1"]) == {"greedy"}
    elo = summary["elo"]["tic_tac_toe"]
    assert name + "+mcts1" not in elo and name in elo
    assert set(summary["agents"][name]) == {"greedy", "alphabeta:1"}
    assert summary["agents"][name]["alphabeta:1"]["overall"]["games"] == 4
    assert summary["agents"][name]["greedy"]["target"] == "-"  # a partner, and no target
    assert summary["agents"][name]["greedy"]["met"] is None
    table = open(os.path.join(st, "table.md")).read()
    assert f"| tic_tac_toe | {name} | greedy | partner (25% of games) |" in table
    assert f"| tic_tac_toe | {name} | alphabeta:1 | held out |" in table
    rows = read_csv(os.path.join(st, "table.csv"))
    assert {r["training_partner_share"] for r in rows if r["opponent"] == "greedy"} == {"0.25"}
    # the ladder: the network player only, on the held-out rungs
    assert set(summary["ladder"]) == {name}
    report = summary["ladder"][name]
    assert [r["rung"] for r in report["rungs"]] == ["perfect"]
    assert report["skipped_partners"] == ["greedy"] and report["games_per_rung"] == 2
    assert sum(report["rungs"][0]["overall"][k] for k in ("wins", "draws", "losses")) == 2
    assert "## Ladder ratings (held-out rungs only)" in table
    ladder_lines = [ln for ln in table.splitlines() if ln.startswith(f"| tic_tac_toe | {name} |")]
    ladder_lines = [ln for ln in ladder_lines if ln.endswith("| greedy |")]
    assert len(ladder_lines) == 1 and "| perfect |" in ladder_lines[0]  # greedy not played
    assert [r["rung"] for r in read_csv(os.path.join(st, "ladder.csv"))] == ["perfect"]


def test_strength_targets_protocol(ttt_curves, tmp_path):
    """The targets script plays each pairing with --games per colour, tests each colour (and the
    interval's lower end) against the threshold, and a search target with more than 64
    simulations is never met."""
    from experiments import strength_targets

    out, _ = ttt_curves
    run = os.path.join(out, "tic_tac_toe_ppo", "seed0")
    st = str(tmp_path / "targets")
    rows = strength_targets.main(
        ["--agent", f"tic_tac_toe={run}", "--agents", "tic_tac_toe", "--sims", "2"]
        + ["--games", "4", "--out", st]
    )
    assert [r["player"] for r in rows] == [f"mcts:2:{run}", run]
    for r in rows:
        for side in ("first", "second"):
            assert sum(map(int, r[f"{side}_wdl"].split("/"))) == 4
        losses = sum(int(r[f"{side}_wdl"].split("/")[2]) for side in ("first", "second"))
        assert r["met"] == r["clear"] == (losses == 0)
        assert r["measure"] == f"{losses} lost of 8"
    assert "never loses" in open(os.path.join(st, "table.md")).read()
    assert len(read_csv(os.path.join(st, "targets.csv"))) == 2

    score = strength_targets.Target(False, "random", "score", 0.75)
    row = strength_targets.check("reversi6", score, "engine:1", 64, 6, 0)
    sides = ("first", "second")
    assert row["met"] == all(row[f"{s}_score"] >= 0.75 for s in sides)
    assert row["clear"] == all(row[f"{s}_score_low"] >= 0.75 for s in sides)
    assert row["first_score_low"] <= row["first_score"] <= row["first_score_high"]
    assert strength_targets.Target(True, "engine:4", "score", 0.9).player("a", 64, "8/1") == (
        "mcts:64/8/1:a"
    )
    with pytest.raises(SystemExit):  # settings the spec refuses
        strength_targets.main(["--agent", f"tic_tac_toe={run}", "--settings", "0", "--out", st])
    anything = strength_targets.Target(True, "random", "score", 0.0)
    assert not strength_targets.check("tic_tac_toe", anything, run, 65, 2, 0)["met"]
    with pytest.raises(SystemExit):
        strength_targets.main(["--agents", "tic_tac_toe", "--out", st])  # no agent named
    with pytest.raises(SystemExit):  # no tic-tac-toe target plays engine:4
        strength_targets.main(
            ["--agent", f"tic_tac_toe={run}", "--agents", "tic_tac_toe", "--out", st]
            + ["--opponents", "engine:4"]
        )


def test_strength_table_ladder_helpers(capsys):
    """A game without a shipped ladder is skipped with a note; 'beats' lists the rungs scored
    more than 50% against, with the score's interval."""
    import jaxgames
    from experiments import strength_table
    from jaxgames.evaluation.elo import Record

    a = types.SimpleNamespace(ladder_rungs=None, ladder_games=2)
    r4 = jaxgames.make("reversi", size=4)
    assert strength_table.rate_on_ladder(r4, {}, {}, a, jax.random.PRNGKey(0)) is None
    assert "no ladder for reversi4: no ladder ratings" in capsys.readouterr().out

    def match(w, d, rec_loss):
        rec = Record(w, d, rec_loss)
        return types.SimpleNamespace(score=rec.score, overall=rec)

    report = types.SimpleNamespace(
        rungs=["greedy", "uct:30", "perfect"],
        matches=[match(8, 0, 2), match(4, 2, 4), match(0, 5, 5)],
    )
    assert strength_table.beaten_rungs(report) == "`greedy` 80% [49%, 94%]"
    report.matches = report.matches[1:]
    report.rungs = report.rungs[1:]
    assert strength_table.beaten_rungs(report) == "none"


def test_strength_table_targets():
    from experiments.strength_table import check_targets
    from jaxgames.evaluation.match import MatchResult

    def res(first, second):  # A's W/D/L as first and as second player
        outcomes = [o for wdl in (first, second) for o, k in zip((1, 0, -1), wdl) for _ in range(k)]
        a_player = np.repeat([0, 1], [sum(first), sum(second)])
        n = len(outcomes)
        return MatchResult(np.array(outcomes, np.int8), a_player, np.zeros(n, int), np.zeros(n))

    assert check_targets("tic_tac_toe", "random", res((96, 4, 0), (80, 20, 0)))[1] is True
    assert (
        check_targets("tic_tac_toe", "random", res((96, 4, 0), (70, 30, 0)))[1] is False
    )  # 70% as O
    assert (
        check_targets("tic_tac_toe", "perfect", res((0, 99, 1), (0, 100, 0)))[1] is False
    )  # one loss
    assert check_targets("tic_tac_toe", "uct:300", res((9, 1, 0), (0, 10, 0)))[1] is True
    assert check_targets("reversi", "random", res((99, 0, 1), (98, 1, 1)))[1] is True
    assert check_targets("reversi", "random", res((100, 0, 0), (97, 0, 3)))[1] is False
    # engine:2: at least an even score (draws count half) as each colour
    assert check_targets("reversi", "engine:2", res((50, 0, 50), (45, 10, 45))) == (
        "score >= 50% as 1st, score >= 50% as 2nd",
        True,
    )
    assert (
        check_targets("reversi", "engine:2", res((80, 0, 20), (45, 8, 47)))[1] is False
    )  # 64% overall, 49% as 2nd
    # the presets' training partners have no target; a partner never counts for one, except the
    # random floor
    assert check_targets("reversi", "greedy", res((1, 0, 0), (1, 0, 0))) == ("-", None)
    assert check_targets("reversi", "alphabeta:2", res((1, 0, 0), (1, 0, 0))) == ("-", None)
    assert check_targets("reversi", "engine:2", res((0, 0, 9), (0, 0, 9)), partner=True) == (
        "- (training partner)",
        None,
    )
    assert check_targets("reversi", "random", res((99, 0, 1), (90, 0, 10)), partner=True) == (
        ">= 98% as 1st, >= 98% as 2nd",
        False,
    )
    assert check_targets("reversi", "minimax:3", res((1, 0, 0), (1, 0, 0))) == ("-", None)


def test_reference_articles_tiny(tmp_path):
    from experiments import reference_articles

    out = str(tmp_path / "ra")
    rows = reference_articles.main(
        [
            "--quick",
            "--parts",
            "tabular_q",
            "shogi_winner_imitation",
            "--ttt-games",
            "1500",
            "--shogi-games",
            "64",
            "--vs-init-games",
            "8",
            "--eval-games",
            "4",
            "--opponents",
            "random",
            "--set",
            "net.hidden=8",
            "--out",
            out,
        ]
    )
    exps = {r["experiment"] for r in rows}
    assert exps == {"tabular Q, tic-tac-toe", "animal shogi winner imitation"}
    report = open(os.path.join(out, "report.md")).read()
    assert "98.7%" in report and "~80%" in report and "not reached (budget)" in report
    assert len(read_csv(os.path.join(out, "results.csv"))) == len(rows)
    with open(os.path.join(out, "shogi_winner_imitation", "seed0", "config.json")) as f:
        assert json.load(f)["config"]["net"]["hidden"] == 8  # --set reaches the trained parts


@pytest.mark.slow
def test_reference_articles_other_parts_tiny(tmp_path):
    """The two parts the fast test leaves out (their training goes through the same train_part)."""
    from experiments import reference_articles

    rows = reference_articles.main(
        [
            "--quick",
            "--parts",
            "othello6_dqn",
            "reversi8_ppo",
            "--othello-games",
            "20",
            "--reversi8-steps",
            "4096",
            "--eval-games",
            "4",
            "--opponents",
            "random",
            "--set",
            "net.hidden=8",
            "--out",
            str(tmp_path / "ra"),
        ]
    )
    assert {r["experiment"] for r in rows} == {"6x6 othello DQN", "8x8 reversi PPO"}


def test_ablation_tiny(tmp_path, monkeypatch):
    """One variant of the built-in study in quick mode: its learning-curves folder and a table row
    with the overrides and per-colour rates; a variant's total_steps override is ignored in quick
    mode; --set reaches every variant; an unknown variant is named; a later invocation keeps the
    earlier rows."""
    from experiments import ablation, learning_curves

    out = str(tmp_path / "abl")
    summaries = []

    def recorded_run_one(*args, **kwargs):
        summaries.append(real_run_one(*args, **kwargs))
        return summaries[-1]

    real_run_one = learning_curves.run_one
    monkeypatch.setattr(learning_curves, "run_one", recorded_run_one)
    rows = ablation.main(
        [
            "--quick",
            "--variants",
            "ppo_6M_steps",
            "--eval-games",
            "8",
            "--set",
            "net.hidden=8",
            "partners={}",  # no greedy / alphabeta:2 replies to compile into the training chunk
            "--out",
            out,
        ]
    )
    assert [(r["variant"], r["opponent"]) for r in rows] == [("ppo_6M_steps", "random")]
    r = rows[0]
    assert r["env_steps"] < 100_000 and r["games_first"] == r["games_second"] == 4
    assert abs(r["win_rate_first"] + r["draw_rate_first"] + r["loss_rate_first"] - 1) < 1e-9
    table = open(os.path.join(out, "ablation.md")).read()
    assert "| ppo_6M_steps | ppo | `total_steps=6000000` | random |" in table
    assert os.path.exists(os.path.join(out, "ppo_6M_steps", "reversi6x6_ppo", "curves.csv"))
    # the variants change the preset, not the learning curves' full-run overrides
    with open(os.path.join(out, "ppo_6M_steps", "reversi6x6_ppo", "config.json")) as f:
        trained = json.load(f)["algorithm_config"]
    assert trained["ent_coef"] == 0.03  # FULL_OVERRIDES' 0.1 is not applied
    assert trained["net"]["hidden"] == 8 and trained["partners"] == {}  # --set reached it
    assert trained["total_steps"] == 20_000
    with pytest.raises(SystemExit):
        ablation.main(["--quick", "--variants", "ppo_bigger", "--out", out])

    # a later invocation adds its rows to the table and keeps the earlier ones (in study order);
    # its training would compile the same program again, so it reuses the first one's results
    def rerun(game, algo, lc):
        d = os.path.join(lc.out, f"{summaries[0]['label']}_{algo}")
        os.makedirs(d)
        src = os.path.join(out, "ppo_6M_steps", f"{summaries[0]['label']}_{algo}", "curves.csv")
        shutil.copy(src, d)
        return summaries[0]

    monkeypatch.setattr(learning_curves, "run_one", rerun)
    ablation.main(["--quick", "--variants", "ppo_preset", "--eval-games", "8", "--out", out])
    table = open(os.path.join(out, "ablation.md")).read()
    assert table.index("| ppo_preset |") < table.index("| ppo_6M_steps |")
    assert [r["variant"] for r in read_csv(os.path.join(out, "ablation.csv"))] == [
        "ppo_preset",
        "ppo_6M_steps",
    ]


def test_reproduce_runs_steps_and_reports_failures(tmp_path, monkeypatch):
    """reproduce.py runs the chosen steps' quick modes under runs/quick/ (relative to the
    working directory), records their wall clock, and a failing step is reported without
    stopping the others."""
    from experiments import reproduce

    monkeypatch.chdir(tmp_path)
    res = reproduce.main(["--quick", "--only", "value_iteration"])
    assert [t["step"] for t in res["steps"]] == ["value_iteration"]
    assert res["steps"][0]["status"] == "ok" and res["steps"][0]["seconds"] > 0
    assert os.path.exists(tmp_path / "runs/quick/value_iteration")
    with open(tmp_path / "runs/quick/reproduce/timings.json") as f:
        assert json.load(f)["steps"][0]["step"] == "value_iteration"

    calls = []
    monkeypatch.setitem(
        sys.modules, "experiments.fake_step", types.SimpleNamespace(main=calls.append)
    )
    broken = [("broken", "no_such_experiment", []), ("value_iteration", "fake_step", [])]
    monkeypatch.setattr(reproduce, "STEPS", broken)
    monkeypatch.setattr(reproduce, "STEP_NAMES", [s[0] for s in broken])
    with pytest.raises(SystemExit, match="steps failed: broken"):
        reproduce.main(["--quick"])
    with open(tmp_path / "runs/quick/reproduce/timings.json") as f:
        steps = json.load(f)["steps"]
    assert (
        steps[0]["status"].startswith("failed: ModuleNotFoundError") and steps[1]["status"] == "ok"
    )
    assert calls == [["--quick", "--out", os.path.join("runs", "quick", "value_iteration")]]


def test_benchmark_opponents_times_the_ladder_rungs(tmp_path, monkeypatch):
    """By default every rung of each game's ladder is timed at each batch size (the rungs are
    replaced by two cheap ones here: compiling uct:300 and perfect is the slow part)."""
    from experiments import benchmark_opponents

    asked = []

    def rungs(env):
        asked.append(env.name)
        return ["random", "greedy"]

    monkeypatch.setattr(benchmark_opponents, "ladder_specs", rungs)
    out = str(tmp_path / "bench")
    rows = benchmark_opponents.main(
        ["--games", "tic_tac_toe", "--batch", "1", "4", "--repeats", "1", "--out", out]
    )
    assert asked == ["tic_tac_toe"]
    assert [(r["spec"], r["batch"]) for r in rows] == [
        ("random", 1),
        ("random", 4),
        ("greedy", 1),
        ("greedy", 4),
    ]
    assert all(r["ms_per_call"] > 0 and r["game"] == "tic_tac_toe" for r in rows)
    assert len(read_csv(os.path.join(out, "tic_tac_toe.csv"))) == 4
    md = open(os.path.join(out, "opponents.md")).read()
    assert "| tic_tac_toe | `greedy` |" in md and "batch 4 (per position)" in md
    with pytest.raises(SystemExit):
        benchmark_opponents.main(["--batch", "0", "--out", out])


def test_publish_copies_the_readme_figures(tmp_path):
    from experiments import reproduce

    runs = tmp_path / "runs"
    for rel in (
        "learning_curves/reversi6x6_ppo/learning_curves.png",
        "learning_curves/reversi6x6_elo.png",
        "strength_table/table.md",
        "strength_table/elo_reversi6.png",
        "throughput/throughput.png",
    ):
        (runs / rel).parent.mkdir(parents=True, exist_ok=True)
        (runs / rel).write_text(rel)
    copied = reproduce.publish(str(tmp_path / "docs"), str(runs))
    names = sorted(os.path.basename(c) for c in copied)
    assert names == [
        "elo_reversi6.png",
        "learning_curves_reversi6x6_elo.png",
        "learning_curves_reversi6x6_ppo.png",
        "strength_table.md",
        "throughput.png",
    ]
    assert (
        tmp_path / "docs" / "learning_curves_reversi6x6_ppo.png"
    ).read_text() == "learning_curves/reversi6x6_ppo/learning_curves.png"


def test_pgx_peer_updates_and_scores_its_games():
    """The purejaxrl-style peer on pgx's othello: an update runs and counts finished games, and
    its match against random play pays each game's result once (pgx pays on the last step)."""
    pytest.importorskip("pgx")
    from experiments import pgx_ppo_peer

    init, update, env, net = pgx_ppo_peer.make_update(dict(num_envs=8, num_steps=64))
    state, metrics = jax.jit(update)(init(jax.random.PRNGKey(0)))
    assert np.isfinite(float(metrics["loss"])) and int(metrics["episodes"]) >= 4
    res = pgx_ppo_peer.vs_random(env, net, state[0], jax.random.PRNGKey(1), games=16)
    for side in ("first", "second"):
        rates = [res[f"{w}_{side}"] for w in ("win", "draw", "loss")]
        assert abs(sum(rates) - 1.0) < 1e-6 and res[f"draw_{side}"] < 0.5


def test_reversi6_perfect_result(tmp_path):
    """The four first moves of 6x6 reversi are images of one another under the board's
    symmetries (so every game of the script starts from a position worth 20-16 for white), and
    the script counts discs and the perfect-play result per colour."""
    import jaxgames
    from experiments import reversi6_perfect_result as script
    from jaxgames.core import apply_symmetry

    env = jaxgames.make("reversi", size=6)
    start = env.init(jax.random.PRNGKey(0))
    firsts = np.flatnonzero(np.asarray(start.legal_action_mask))
    assert len(firsts) == 4
    boards = [np.asarray(env.step(start, int(a)).observation) for a in firsts]
    sym = env.symmetries
    assert sym.count == 8
    (images,) = apply_symmetry(sym, np.arange(sym.count), np.stack([boards[0]] * sym.count))
    images = {np.asarray(b).tobytes() for b in images}
    assert all(b.tobytes() in images for b in boards)

    out = script.main(
        [
            "--agent",
            "engine:2",
            "--opponent",
            "random",
            "--games",
            "4",
            "--json",
            str(tmp_path / "r.json"),
        ]
    )
    for colour, perfect in (("black", 16), ("white", 20)):
        c = out[colour]
        assert c["wins"] + c["draws"] + c["losses"] == 4 and c["perfect_discs"] == perfect
        assert 0 < c["mean_discs"] <= 36 and 1 <= c["distinct_games"] <= 4
        assert c["reached"] == round(c["reached_rate"] * 4)
        scores = {tuple(map(int, k.split("-"))): n for k, n in c["final_scores"].items()}
        assert sum(scores.values()) == 4 and all(0 < a + b <= 36 for a, b in scores)
        # the final scores agree with the target's count and the mean of the agent's discs
        assert sum(n for (a, _), n in scores.items() if a >= perfect) == c["reached"]
        assert sum(a * n for (a, _), n in scores.items()) == 4 * c["mean_discs"]
    assert json.load(open(tmp_path / "r.json"))["white"] == out["white"]


def test_reversi6_perfect_result_trace(tmp_path):
    """--trace E: one white line per first move; the exact margins of the solved positions
    chain from the first one through every change to the game's final margin, and a white
    player perfect in the solved positions loses nothing there: every change is a gift of
    the random black player."""
    from experiments import reversi6_perfect_result as script

    argv = ["--agent", "solve:6:greedy", "--opponent", "random", "--trace", "6"]
    out = script.main(argv + ["--json", str(tmp_path / "t.json")])
    lines = out["lines"]
    assert len(lines) == 4 and len({ln["first_move"] for ln in lines}) == 4
    for ln in lines:
        assert ln["first_solved_empties"] <= 6
        margin = ln["white_exact_margin"]
        for change in ln["changes"]:
            assert change["before"] == margin and change["empties"] <= 6
            assert change["mover"] == "black" and change["after"] > margin
            margin = change["after"]
        assert margin == ln["white_final_margin"]
    assert json.load(open(tmp_path / "t.json"))["lines"] == lines


def test_reversi_endings_counts_every_game_once(tmp_path):
    """Every game of each colour is a win, draw or loss, every win and loss ends in exactly
    one way, and a wipe-out's margin is all the winner's discs (the loser has none)."""
    from experiments import reversi_endings

    argv = ["--size", "4", "--a", "greedy", "--b", "random", "--games", "12"]
    out = reversi_endings.main(argv + ["--json", str(tmp_path / "e.json")])
    for colour in ("black", "white"):
        c = out[colour]
        assert c["wins"] + c["draws"] + c["losses"] == 12
        for result, n in (("won", c["wins"]), ("lost", c["losses"])):
            ends = [c[f"{result}: {how}"] for how in reversi_endings.ENDINGS]
            assert sum(e["games"] for e in ends) == n
            for e in ends:
                if e["games"]:
                    assert (e["mean_margin"] > 0) == (result == "won") and e["mean_plies"] > 0
            wiped = c[f"{result}: wiped out"]
            if wiped["games"]:  # 4x4: at most 16 discs, all the winner's
                assert 0 < abs(wiped["mean_margin"]) <= 16
    assert json.load(open(tmp_path / "e.json"))["white"] == out["white"]


def test_search_settings_plays_each_setting(ttt_curves, tmp_path):
    """One row per (considered, c_scale), each with --games games per colour, the same games
    (seed) for every setting; the table names the agent, simulations and opponent."""
    from experiments import search_settings

    out, _ = ttt_curves
    run = os.path.join(out, "tic_tac_toe_ppo", "seed0")
    dest = str(tmp_path / "settings")
    argv = ["--game", "tic_tac_toe", "--agent", run, "--sims", "4", "--considered", "2", "9"]
    argv += ["--value-scales", "0.1", "1", "--opponent", "random", "--games", "3"]
    rows = search_settings.main(argv + ["--out", dest])
    assert [(r["considered"], r["value_scale"]) for r in rows] == [
        (2, 0.1),
        (2, 1.0),
        (9, 0.1),
        (9, 1.0),
    ]
    for r in rows:
        for side in ("first", "second"):
            assert sum(map(int, r[f"{side}_wdl"].split("/"))) == 3
            assert r[f"{side}_score_low"] <= r[f"{side}_score"] <= r[f"{side}_score_high"]
    table = open(os.path.join(dest, "table.md")).read()
    assert f"`{run}` with 4 simulations per move against `random`" in table
    assert [r["spec"] for r in rows] == [f"mcts:4/2:{run}", f"mcts:4/2/1.0:{run}"] + [
        f"mcts:4/9:{run}",
        f"mcts:4/9/1.0:{run}",
    ]
    assert len(read_csv(os.path.join(dest, "settings.csv"))) == 4
    with pytest.raises(SystemExit):
        search_settings.main(argv[:-1] + ["0", "--out", dest])  # --games 0


def test_lost_games_counts_every_loss_once(tmp_path):
    """Each colour's lost games, by length, add up to its losses; a game is longer than its
    random opening; the JSON holds the same numbers."""
    from experiments import lost_games

    argv = ["--game", "reversi:4", "--a", "random", "--b", "greedy", "--games", "16"]
    out = lost_games.main(argv + ["--json", str(tmp_path / "l.json")])
    assert out["opening_plies"] >= 0
    for colour in ("first", "second"):
        c = out[colour]
        assert c["wins"] + c["draws"] + c["losses"] == 16
        assert sum(c["lost_at_plies"].values()) == c["losses"]
        assert all(n > out["opening_plies"] for n in c["lost_at_plies"])
    assert out["first"]["losses"] + out["second"]["losses"] > 0  # random loses to greedy
    assert json.load(open(tmp_path / "l.json"))["second"]["losses"] == out["second"]["losses"]


def test_lost_games_matches_the_arena_and_exact_split_is_perfect_play():
    """The script's games are arena()'s (same W/D/L, snapshot or not); with --exact, players
    that both play perfectly from E empties (engines whose exact endgame covers it) end every
    game with the result solved at E empties (after the opening); random play throws some."""
    import jaxgames
    from experiments import lost_games
    from jaxgames.evaluation.match import arena
    from jaxgames.specs import make_opponent

    env = jaxgames.make("reversi", size=4)
    games = 16
    ref = arena(
        make_opponent("random", env),
        make_opponent("greedy", env),
        env,
        2 * games,
        jax.random.PRNGKey(3),
        opening_plies=4,
    )
    base = ["--game", "reversi:4", "--games", str(games), "--seed", "3"]
    out = lost_games.main(base + ["--a", "random", "--b", "greedy", "--exact", "8"])
    for colour, record in (("first", ref.as_first), ("second", ref.as_second)):
        c = out[colour]
        assert (c["wins"], c["draws"], c["losses"]) == (record.wins, record.draws, record.losses)
        e = c["at_exact"]
        assert e["wins"] + e["draws"] + e["losses"] == games
        assert [sum(row) for row in e["table"]] == [e["wins"], e["draws"], e["losses"]]
        assert [sum(col) for col in zip(*e["table"])] == [c["wins"], c["draws"], c["losses"]]
    thrown = sum(
        out[c]["at_exact"]["table"][i][j]
        for c in ("first", "second")
        for i in range(3)
        for j in range(3)
        if i != j
    )
    assert thrown > 0  # random and greedy both throw results away in the last 8 empties
    # both engines solve exactly from 10 empties (after the 4-ply opening: <= 8)
    perfect = lost_games.main(base + ["--a", "engine:1", "--b", "engine:2", "--exact", "8"])
    for colour in ("first", "second"):
        table = perfect[colour]["at_exact"]["table"]
        assert all(table[i][j] == 0 for i in range(3) for j in range(3) if i != j), table
    with pytest.raises(ValueError, match="reversi"):
        lost_games.play("tic_tac_toe", "random", "random", 2, 0, exact=4)


def test_lost_games_scores_value_estimates_against_exact_results():
    """value_accuracy: sign agreement over decided live positions, mean |error| over live
    ones; value_estimates turns a policy's mover's-view values into A's view."""
    import types
    from typing import NamedTuple

    import jax.numpy as jnp

    from experiments.lost_games import value_accuracy, value_estimates

    class Snap(NamedTuple):
        current_player: jax.Array
        v: jax.Array

    value = np.array([0.5, -0.2, 0.9, -0.7, 0.1])
    exact = np.array([1, 1, 0, -1, -1])
    live = np.array([True, True, True, True, False])
    acc = value_accuracy(value, exact, live)
    assert acc["positions"] == 4
    assert acc["sign_agreement"] == pytest.approx(2 / 3)  # +0.5 / +1 and -0.7 / -1 agree
    assert acc["mean_abs_error"] == pytest.approx((0.5 + 1.2 + 0.9 + 0.3) / 4)
    snaps = Snap(jnp.array([0, 1, 0]), jnp.array([0.5, 0.5, -1.0]))
    net = types.SimpleNamespace(value=lambda s: s.v)
    got = value_estimates(net, snaps, np.array([0, 0, 1]))
    assert list(got) == ["network"] and np.allclose(got["network"], [0.5, -0.5, 1.0])
    search = types.SimpleNamespace(value=lambda s: 2 * s.v, guide=net)
    assert set(value_estimates(search, snaps, np.array([0, 0, 1]))) == {"search", "network"}
    assert value_estimates(object(), snaps, np.array([0, 0, 1])) == {}


def test_forced_openings_are_lost_whatever_is_played(run_bound):
    """The openings forced_openings says engine:N wins whatever is played are lost by the
    defenders tried (random, in the targets' games and with other keys), for both colours;
    they are among the openings won by force, and not every opening is decided."""
    import jax.numpy as jnp

    import jaxgames
    from experiments import forced_openings
    from jaxgames.evaluation.match import play_from
    from jaxgames.specs import make_opponent

    games = 60
    out = forced_openings.analyse(games, seed=0, depth=3, engine=2, levels=1, agent="random")
    first_conv, second_conv = out["engine_as_first_converts"], out["engine_as_second_converts"]
    assert set(first_conv) <= set(out["first_player_forced_win"])
    assert set(second_conv) <= set(out["second_player_forced_win"])
    assert set(out["engine_proves_at_first_move"]) <= set(first_conv)
    assert 0 < len(first_conv) < games  # not vacuous, not everything
    assert out["ceiling_vs_engine"]["second"] == 1 - len(first_conv) / games
    for colour, lost in (("first", second_conv), ("second", first_conv)):
        split = out["agent_games"][colour]
        assert split["lost_openings"]["losses"] == len(lost)  # every one of them lost
        assert sum(sum(r[k] for k in ("wins", "draws", "losses")) for r in split.values()) == games

    env = jaxgames.make("animal_shogi")
    states, _ = forced_openings.opening_positions(env, games, 0)
    start = jax.tree.map(lambda x: x[np.asarray(first_conv + second_conv)], states)
    defender = np.array([1] * len(first_conv) + [0] * len(second_conv), np.int32)
    rand, engine = make_opponent("random", env), make_opponent("engine:2", env)
    play = jax.jit(lambda k: play_from(rand, engine, env, start, jnp.asarray(defender), k)[1])
    for k in range(1, 4):
        total = np.asarray(play(jax.random.PRNGKey(k)))
        assert (total[np.arange(len(defender)), defender] < 0).all(), (k, total)


def _near_the_end(env, empties: int, games: int = 48, seed: int = 0):
    """Live reversi positions with 1..``empties`` empty squares, from random play."""
    import jaxgames

    step = jax.jit(jax.vmap(env.step))
    state = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(seed), games))
    cells = env.num_actions - 1
    for ply in range(cells - 4 - empties):
        state = step(
            state, jaxgames.random_action(jax.random.PRNGKey(1000 + ply), state.legal_action_mask)
        )
    discs = np.asarray(sum(common.reversi_discs(state, state.current_player)))
    # a pass leaves more empties than plies played: those are dropped (beyond the solve's reach)
    keep = np.flatnonzero(
        ~np.asarray(state.terminated) & (cells - discs >= 1) & (cells - discs <= empties)
    )
    assert len(keep) >= games // 2
    return jax.tree.map(lambda x: x[keep], state)


def test_opening_values_solver_is_exact(tmp_path, monkeypatch):
    """The C solver of opening_values.py gives the JAX engine's exact final margin on random
    6x6 and 8x8 positions near the end (its narrow window: the sign), and on 4x4, where
    engine:4 plays perfectly from the opening (8 empties, its exact endgame from 10), every
    opening it calls lost by force is lost against engine:4, for both colours."""
    import jaxgames
    from experiments import opening_values
    from jaxgames.evaluation.reversi_engine import solve_endgame

    if not (os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler to build the solver")
    for size, empties in ((6, 9), (8, 8)):
        env = jaxgames.make("reversi", size=size)
        states = _near_the_end(env, empties)
        exact = jax.jit(jax.vmap(lambda s: solve_endgame(env, s, empties)[0]))(states)
        margin, _ = opening_values.solve_states(env, states, opening_values.BOUND, jobs=1)
        np.testing.assert_array_equal(margin, np.asarray(exact))
        assert len(set(margin.tolist())) > 3  # varied positions, not one result
        sign, _ = opening_values.solve_states(env, states, 1, jobs=2)
        np.testing.assert_array_equal(sign, np.sign(np.asarray(exact)))

    path = str(tmp_path / "values.json")
    out = opening_values.main(
        ["--size", "4", "--games", "30", "--every", "1", "--agent", "random", "--json", path]
    )
    value = np.array(out["first_player_value"])
    assert out["reused"] == 0
    assert 0 < (value < 0).sum() < 30 and 0 < (value > 0).sum() < 30  # not vacuous
    ceiling = out["ceiling_vs_perfect"]
    assert ceiling["first"]["losses"] == (value < 0).sum()
    assert ceiling["second"]["score"] == pytest.approx(((1 - value) / 2).mean())
    for colour, lost in (("first", value < 0), ("second", value > 0)):
        split = out["agent_games"][colour]
        assert split["lost_openings"]["losses"] == lost.sum()  # every one of them lost
        assert sum(split["other_openings"][k] for k in ("wins", "draws", "losses")) == (~lost).sum()
    with open(path) as f:
        assert json.load(f)["first_player_value"] == value.tolist()
    # --values: the same values back, no solving; other openings are refused
    again = opening_values.main(["--size", "4", "--games", "30", "--every", "1", "--values", path])
    assert again["first_player_value"] == value.tolist() and again["reused"] == 30
    # a run stopped after 4 solves has saved them; resumed, it solves only the openings they
    # lack (one saved value altered shows it is reused, not solved again)
    part = str(tmp_path / "part.json")
    solve_states = opening_values.solve_states

    def stopped(env, states, window, jobs, on_solved):
        def stop_after_4(i, v, t):
            on_solved(i, v, t)
            if i == 3:
                raise KeyboardInterrupt

        return solve_states(env, states, window, 1, on_solved=stop_after_4)

    monkeypatch.setattr(opening_values, "solve_states", stopped)
    with pytest.raises(KeyboardInterrupt):
        opening_values.main(["--size", "4", "--games", "30", "--every", "3", "--json", part])
    monkeypatch.undo()
    with open(part) as f:
        saved = json.load(f)
    assert not saved["complete"] and saved["solved"] == [0, 3, 6, 9]
    saved["first_player_value"][1] = -saved["first_player_value"][1] or 1
    with open(part, "w") as f:
        json.dump(saved, f)
    grown = str(tmp_path / "grown.json")
    resumed = opening_values.main(
        ["--size", "4", "--games", "30", "--every", "1", "--values", part, "--json", grown]
    )
    expect = value.copy()
    expect[3] = saved["first_player_value"][1]
    assert resumed["first_player_value"] == expect.tolist() and resumed["reused"] == 4
    with pytest.raises(ValueError, match="other openings"):
        opening_values.main(["--size", "4", "--games", "20", "--every", "1", "--values", path])
    with pytest.raises(SystemExit):
        opening_values.main(["--every", "0"])
    with open(part, "w") as f:
        json.dump({"solved": [0]}, f)
    with pytest.raises(SystemExit):  # one line naming the file, not a KeyError
        opening_values.main(["--size", "4", "--games", "30", "--values", part])
