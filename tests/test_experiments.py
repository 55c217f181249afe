"""Every experiment script's ``main`` runs end to end in a tiny configuration (so none can rot),
and the shared helpers of experiments/common.py do what they claim.

Scripts already covered elsewhere: benchmark_throughput.py (test_benchmark_smoke.py). The
tabular-Q and value-iteration scripts run here through reference_articles.py / directly.
"""

import csv
import json
import os
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


def test_learning_curves_then_strength_table(tmp_path):
    from experiments import learning_curves, strength_table

    out = str(tmp_path / "lc")
    # PPO only (DQN goes through the same code path; its compile would double the test's time)
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
            "--opponents",
            "random",
            "greedy",
            "--out",
            out,
        ]
    )
    assert [s["algorithm"] for s in summaries] == ["ppo"]
    for algo in ("ppo",):
        d = os.path.join(out, f"tic_tac_toe_{algo}")
        for f in (
            "config.json",
            "curves.csv",
            "summary.json",
            "learning_curves.png",
            "learning_curves.pdf",
        ):
            assert os.path.exists(os.path.join(d, f)), (algo, f)
        rows = read_csv(os.path.join(d, "curves.csv"))
        assert {r["seed"] for r in rows} == {"0", "1"} and {r["opponent"] for r in rows} == {
            "random",
            "greedy",
        }
        chunks = sorted({int(r["chunk"]) for r in rows})
        assert (
            chunks[0] == 0 and len(chunks) >= 2
        )  # the untrained point + evaluations during training
        for r in rows:
            assert int(r["win_all"]) + int(r["draw_all"]) + int(r["loss_all"]) == 8
            assert int(r["win_first"]) + int(r["draw_first"]) + int(r["loss_first"]) == 4
        steps = [
            float(r["env_steps"]) for r in rows if r["seed"] == "0" and r["opponent"] == "random"
        ]
        assert steps == sorted(steps) and steps[-1] > 0
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    assert [r["algorithm"] for r in index["runs"]] == ["ppo"]
    table = open(os.path.join(out, "summary.md")).read()
    assert "| tic_tac_toe | ppo | 2 |" in table and "vs greedy: win (loss)" in table
    # the figure can be redrawn from curves.csv alone
    png = os.path.join(out, "tic_tac_toe_ppo", "learning_curves.png")
    os.remove(png)
    assert learning_curves.main(["--replot", os.path.dirname(png)]) == [] and os.path.exists(png)
    # the seeds trained in one vmap are different agents, saved as loadable run directories
    from jaxgames.agents import load_agent

    a0, a1 = (load_agent(os.path.join(out, "tic_tac_toe_ppo", f"seed{s}")) for s in (0, 1))
    assert a0.config.seed == 0 and a1.config.seed == 1
    l0, l1 = jax.tree_util.tree_leaves(a0.params)[0], jax.tree_util.tree_leaves(a1.params)[0]
    assert not np.allclose(np.asarray(l0), np.asarray(l1))

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
            "--out",
            st,
        ]
    )
    # each agent is rated as its network alone and as the network guiding 2 simulations of search
    agents = {"ppo:tic_tac_toe_ppo/seed0", "ppo:tic_tac_toe_ppo/seed0+mcts2"}
    assert set(summary["agents"]) == agents
    assert set(summary["elo"]["tic_tac_toe"]) == agents | {"random"}
    table = open(os.path.join(st, "table.md")).read()
    assert (
        "| tic_tac_toe | ppo:tic_tac_toe_ppo/seed0 | random |" in table
        and "## Elo, tic_tac_toe" in table
    )
    assert "| tic_tac_toe | ppo:tic_tac_toe_ppo/seed0+mcts2 | random |" in table
    assert (
        ">= 95% as 1st, >= 75% as 2nd" in table
    )  # the tic-tac-toe targets are checked, not lowered
    rows = read_csv(os.path.join(st, "table.csv"))
    assert len(rows) == 2 * 1 * 2  # agents (network, network + search) x opponents x colours
    assert all(int(r["games"]) == 6 for r in rows)
    for f in ("strength.png", "strength.pdf", "elo_tic_tac_toe.csv", "elo_tic_tac_toe.png"):
        assert os.path.exists(os.path.join(st, f)), f


def test_strength_table_marks_partners_and_held_out_opponents(tmp_path):
    """A reversi agent trained with a greedy partner: the table says greedy was a training
    partner, adds the held-out alphabeta:3 with its own game count, and checks the per-colour
    targets."""
    from experiments import learning_curves, strength_table

    out = str(tmp_path / "lc")
    learning_curves.main(
        [
            "--games",
            "reversi:4",
            "--algos",
            "ppo",
            "--seeds",
            "1",
            "--total-steps",
            "2000",
            "--evals",
            "1",
            "--eval-games",
            "4",
            "--opponents",
            "greedy",
            "--no-plot",
            "--out",
            out,
            "--set",
            "num_envs=16",
            "partners={'greedy': 0.25}",
        ]
    )
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
            "alphabeta:3",
            "--extra-games-per-colour",
            "2",
            "--search-sims",
            "1",
            "--out",
            st,
        ]
    )
    name = "ppo:reversi4x4_ppo/seed0"
    # without --search-all the search player meets the target opponents only, and no Elo
    assert set(summary["agents"]) == {name, name + "+mcts1"}
    assert set(summary["agents"][name + "+mcts1"]) == {"greedy"}
    assert (
        name + "+mcts1" not in summary["elo"]["reversi:4"] and name in summary["elo"]["reversi:4"]
    )
    assert set(summary["agents"][name]) == {"greedy", "alphabeta:3"}
    assert summary["agents"][name]["alphabeta:3"]["overall"]["games"] == 4
    assert summary["agents"][name]["greedy"]["target"] == ">= 90% as 1st, >= 90% as 2nd"
    table = open(os.path.join(st, "table.md")).read()
    assert f"| reversi:4 | {name} | greedy | yes (25% of games) |" in table
    assert f"| reversi:4 | {name} | alphabeta:3 | no |" in table
    rows = read_csv(os.path.join(st, "table.csv"))
    assert {r["training_partner_share"] for r in rows if r["opponent"] == "greedy"} == {"0.25"}


def test_strength_targets():
    from experiments.strength_table import check_targets
    from jaxgames.evaluation.arena import ArenaResult, Record

    def res(first, second):
        e = np.zeros(0)
        return ArenaResult(
            Record(*(a + b for a, b in zip(first, second))),
            Record(*first),
            Record(*second),
            e,
            e,
            e,
        )

    assert check_targets("tic_tac_toe", "random", res((96, 4, 0), (80, 20, 0)))[1] is True
    assert (
        check_targets("tic_tac_toe", "random", res((96, 4, 0), (70, 30, 0)))[1] is False
    )  # 70% as O
    assert (
        check_targets("tic_tac_toe", "perfect", res((0, 99, 1), (0, 100, 0)))[1] is False
    )  # one loss
    assert check_targets("reversi", "alphabeta:2", res((80, 0, 20), (76, 0, 24)))[1] is True
    assert (
        check_targets("reversi", "alphabeta:2", res((80, 0, 20), (70, 0, 30)))[1] is False
    )  # 75% overall, 70% as 2nd
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
            "256",
            "--vs-init-games",
            "8",
            "--eval-games",
            "4",
            "--opponents",
            "random",
            "--out",
            out,
        ]
    )
    exps = {r["experiment"] for r in rows}
    assert exps == {"tabular Q, tic-tac-toe", "animal shogi winner imitation"}
    report = open(os.path.join(out, "report.md")).read()
    assert "98.7%" in report and "~80%" in report and "not reached (budget)" in report
    assert len(read_csv(os.path.join(out, "results.csv"))) == len(rows)
    assert os.path.exists(os.path.join(out, "shogi_winner_imitation", "seed0", "config.json"))


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
            "--out",
            str(tmp_path / "ra"),
        ]
    )
    assert {r["experiment"] for r in rows} == {"6x6 othello DQN", "8x8 reversi PPO"}


def test_ablation_tiny(tmp_path):
    """One variant of the built-in study in quick mode: its learning-curves folder and a table row
    with the overrides and per-colour rates; a variant's total_steps override is ignored in quick
    mode; an unknown variant is named."""
    from experiments import ablation

    out = str(tmp_path / "abl")
    rows = ablation.main(
        ["--quick", "--variants", "ppo_6M_steps", "--eval-games", "8", "--out", out]
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
    assert trained["ent_coef"] == 0.03 and trained["partners"]["random"] == 0.125
    with pytest.raises(SystemExit):
        ablation.main(["--quick", "--variants", "ppo_bigger", "--out", out])
    # a later invocation adds its rows to the table and keeps the earlier ones (in study order)
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


def test_publish_copies_the_readme_figures(tmp_path):
    from experiments import reproduce

    runs = tmp_path / "runs"
    for rel in (
        "learning_curves/reversi6x6_ppo/learning_curves.png",
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
        "learning_curves_reversi6x6_ppo.png",
        "strength_table.md",
        "throughput.png",
    ]
    assert (
        tmp_path / "docs" / "learning_curves_reversi6x6_ppo.png"
    ).read_text() == "learning_curves/reversi6x6_ppo/learning_curves.png"
