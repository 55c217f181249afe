"""Every experiment script's ``main`` runs end to end in a tiny configuration (so none can rot),
and the experiments' library helpers (jaxgames.training.experiment) do what they claim.

The scripts are loaded by path (:func:`script`): nothing makes ``experiments/`` importable.
Covered elsewhere: benchmark_throughput.py and compile_flags.py (test_benchmark_smoke.py),
refresh_pretrained.py (test_pretrained.py). The tabular-Q script runs here through
reference_articles.py.
"""

import json
import os

import jax
import numpy as np
import pytest
from scripts import EXPERIMENTS, script

import jaxgames
from jaxgames.training import experiment as ex


# ----------------------------------------------------------------------------- helpers
def test_mean_band_t_interval():
    v = np.array([[0.2, 0.5], [0.4, 0.5], [0.6, 0.5]])
    mu, lo, hi = ex.mean_band(v)
    np.testing.assert_allclose(mu, [0.4, 0.5])
    half = 4.303 * 0.2 / np.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    np.testing.assert_allclose(lo, [max(0.0, 0.4 - half), 0.5], rtol=1e-4)
    np.testing.assert_allclose(hi, [min(1.0, 0.4 + half), 0.5], rtol=1e-4)
    mu1, lo1, hi1 = ex.mean_band(v[:1])
    assert (lo1 == mu1).all() and (hi1 == mu1).all()
    # printed tables' quantiles, below and past 30 degrees of freedom (not the normal 1.96)
    for df, t in ((1, 12.706), (11, 2.201), (31, 2.040), (120, 1.980)):
        assert ex.t_quantile_975(df) == pytest.approx(t, abs=1e-3), df
    # a summary's band: one seed has no interval (not a zero-width one), none is an error
    assert ex.band([[0.4]]) == {"mean": 0.4, "ci95": None}
    assert ex.band([[0.2], [0.6]])["ci95"][0] < 0.2
    with pytest.raises(ValueError, match="at least one seed"):
        ex.band(np.zeros((0, 1)))


def test_variants_follow_the_registry():
    keys = ex.variant_keys()
    assert keys == ["tic_tac_toe", "reversi6", "reversi8", "animal_shogi"]
    assert [ex.parse_variant(k) for k in keys] == jaxgames.game_variants()
    assert ex.parse_variant("reversi4") == ("reversi", {"size": 4})
    with pytest.raises(ValueError, match="unknown game 'chess'; valid: tic_tac_toe, reversi6"):
        ex.parse_variant("chess")
    # a size without a ladder of its own uses another size's
    assert ex.game_ladder(ex.make_variant("reversi4")).game == "reversi6"


def test_result_rows_count_each_colour():
    from jaxgames.evaluation.match import MatchResult

    def result(outcomes, a_player):
        n = len(outcomes)
        return MatchResult(
            np.array(outcomes, np.int8), np.array(a_player), np.arange(n), np.ones(n)
        )

    rows = ex.result_rows(
        3, [0, 1], {"random": [result([1, 0, -1, 1], [0, 0, 1, 1]), result([-1, -1], [0, 1])]}
    )
    first, second = rows
    assert (first["chunk"], first["seed"], first["opponent"]) == (3, 0, "random")
    assert (first["win_first"], first["draw_first"], first["loss_second"]) == (1, 1, 1)
    assert first["win_rate_all"] == 0.5 and first["score"] == pytest.approx(0.625)
    assert second["loss_all"] == 2 and second["score"] == 0.0
    assert first["units"] == "1 1 2"  # one game per opening: a loss, a draw, two wins
    paired = MatchResult(
        np.array([1, -1, 1, 1], np.int8), np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]), np.ones(4)
    )
    (row,) = ex.result_rows(1, [0], {"random": [paired]})
    assert row["units"] == "0 0 1 0 1"  # an opening's two games are one unit: 1 and 2 points


def test_ladder_ratings_rate_each_point_on_the_ladder():
    """Half the points against one rung is that rung's rating; a sweep of every game against
    both rungs gives a one-sided lower bound above the stronger rung."""
    ladder = ex.game_ladder(jaxgames.make("tic_tac_toe"))

    def row(seed, opponent):
        return dict(chunk=1, env_steps=10, train_seconds=1.0, seed=seed, opponent=opponent)

    rows = [
        {**row(0, "uct:300"), "win_all": 25, "draw_all": 50, "loss_all": 25},
        {**row(0, "not-a-rung"), "win_all": 40, "draw_all": 0, "loss_all": 0},  # ignored
        {**row(1, "random"), "win_all": 40, "draw_all": 0, "loss_all": 0},
        {**row(1, "greedy"), "win_all": 40, "draw_all": 0, "loss_all": 0},
    ]
    even, sweep = ex.ladder_ratings(rows, ladder)
    assert even["seed"] == 0 and even["rungs"] == "uct:300" and not even["bound"]
    assert abs(even["elo"] - ladder.elos["uct:300"]) < 0.5
    assert even["elo_lo"] < even["elo"] < even["elo_hi"]
    assert sweep["bound"] == "lower" and sweep["elo"] > ladder.elos["greedy"]
    # the same 100 games as 50 openings of one win and one loss each: the points do not vary
    # from opening to opening, so the interval is narrower than that of 100 single games
    # (with fewer openings than ladder.FEW_OPENINGS both would contain the Wilson interval)
    (paired,) = ex.ladder_ratings([{**rows[0], "units": "0 0 50 0 0"}], ladder)
    assert abs(paired["elo"] - even["elo"]) < 0.5
    assert paired["elo_hi"] - paired["elo_lo"] < even["elo_hi"] - even["elo_lo"]


def test_milestones_are_held_out_ladder_rungs():
    """Every milestone opponent is a rung of its game's ladder, and none (but the random floor)
    is a training partner of the presets."""
    from jaxgames.agents.presets import default_config

    lc = script("learning_curves")
    for key in ex.variant_keys():
        env = ex.make_variant(key)
        name, options = ex.parse_variant(key)
        partners = set()
        for algo in ("ppo", "dqn", "alphazero"):
            partners |= set(default_config(algo, name, options).partners)
        for opponent in lc.milestones(env.name):
            assert opponent in ex.game_ladder(env).specs, (key, opponent)
            assert opponent == "random" or opponent not in partners, (key, opponent)


def test_curve_opponents_are_cheap_held_out_rungs():
    from jaxgames.agents.presets import CLASSIC_PARTNERS

    lc = script("learning_curves")
    r8, ttt, r4 = (ex.make_variant(k) for k in ("reversi8", "tic_tac_toe", "reversi4"))
    # greedy (and alphabeta:2, no rung) are the presets' partners; uct:1000 and engine:3+ are slow
    assert lc.curve_opponents(r8, CLASSIC_PARTNERS) == ["random", "uct:100", "engine:1", "engine:2"]
    assert lc.curve_opponents(r8)[:2] == ["random", "greedy"]
    assert lc.curve_opponents(ttt) == ["random", "greedy", "uct:30", "uct:300", "perfect"]
    # random stays as the floor even when it is a partner
    assert lc.curve_opponents(ttt, {"random": 0.5, "uct:30": 0.2})[:2] == ["random", "greedy"]
    # a size without a ladder of its own uses the rungs of the game's other sizes
    assert lc.curve_opponents(r4, {"greedy": 0.25}) == ["random", "uct:100", "engine:1", "engine:2"]
    # evaluation games start from the ladder's random plies, tic-tac-toe's from the start
    assert [lc.opening_plies(e) for e in (r8, ttt, r4)] == [4, 0, 4]
    # without --opponents, the reversi PPO preset (partners random, greedy, alphabeta:2) is
    # measured against random and the held-out cheap rungs: greedy is not among them
    a = lc.parse_args(["--games", "reversi8", "--algos", "ppo", "--quick"])
    config = lc.make_config("reversi8", "ppo", a)
    assert "greedy" in config.partners
    assert lc.curve_opponents(config.make_env(), config.partners) == [
        "random",
        "uct:100",
        "engine:1",
        "engine:2",
    ]


def test_scripts_report_bad_input_in_one_line_and_write_nothing(tmp_path, capsys):
    """A bad input to an experiment script is one line on stderr and exit code 2, as in the
    ``jaxgames`` command (every script's ``__main__`` runs ``main`` through ``report_errors``),
    and an ``init_from`` agent of another game is refused before the script writes its folder.
    Every script imports only the installed package."""
    from jaxgames.cli import report_errors

    lc = script("learning_curves")
    out = tmp_path / "curves"
    argv = ["--games", "tic_tac_toe", "--algos", "alphazero", "--quick", "--out", str(out)]
    assert report_errors(lambda: lc.main(argv + ["--init-from=pretrained:reversi8"])) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: invalid init_from='pretrained:reversi8'") and err.count("\n") == 1
    assert report_errors(lambda: lc.main(["--games", "chess", "--out", str(out)])) == 2
    assert "unknown game 'chess'" in capsys.readouterr().err
    # an override that the second config refuses (PPO's clip_eps for DQN): before the first runs
    two = ["--games", "tic_tac_toe", "--algos", "ppo", "dqn", "--quick", "--out", str(out)]
    assert report_errors(lambda: lc.main(two + ["--clip-eps=0.1"])) == 2
    assert "unknown config field 'clip-eps' for DQNConfig" in capsys.readouterr().err
    assert not out.exists()
    ra, ra_out = script("reference_articles"), tmp_path / "articles"
    parts = ["--parts", "reversi8_ppo", "othello6_dqn", "--quick", "--out", str(ra_out)]
    assert report_errors(lambda: ra.main(parts + ["--clip-eps=0.1"])) == 2
    assert "unknown config field 'clip-eps' for DQNConfig" in capsys.readouterr().err
    assert not ra_out.exists()
    # an opponent that does not exist, a count out of range, a misspelt game, an --out that
    # is a training run (its config.json would be replaced) or inside one: refused up front
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "metrics.jsonl").write_text("")
    for name, argv, why in [
        ("quickstart", ["--quick", "--opponents", "chess"], "unknown opponent"),
        ("quickstart", ["--quick", "--total-steps", "0"], "invalid --total-steps=0"),
        ("quickstart", ["--quick", "--out", str(run / "sub")], "inside the run"),
        ("learning_curves", ["--games", "tic_tac_toe", "--opponents", "bogus"], "bogus"),
        ("learning_curves", ["--games", "tic_tac_toe", "--out", str(run)], "is the run"),
        ("tabular_q_tictactoe", ["--quick", "--seeds", "0"], "invalid --seeds=0"),
        ("tabular_q_tictactoe", ["--quick", "--out", str(run)], "is the run"),
        ("learning_curves", ["--games", "tic_tac_toe", "--eval-games", "3"], "must be even"),
        ("benchmark_throughput", ["--games", "chess", "--no-pgx"], "chess"),
        ("benchmark_throughput", ["--games", "tic_tac_toe", "--steps", "0"], "--steps=0"),
        ("benchmark_opponents", ["--games", "tic_tac_toe", "--repeats", "0"], "--repeats=0"),
        ("build_ladder", ["--game", "reversi", "--size", "4", "--runs", "-"], "no ladder for"),
        ("value_iteration_tictactoe", ["--games", "0"], "invalid --games=0"),
        ("reference_articles", ["--parts", "othello6_dqn", "--seeds", "-1"], "--seeds=-1"),
        ("reference_articles", ["--quick", "--ttt-games=0"], "invalid --ttt-games=0"),
        ("profile_selfplay", ["--quick", "--out", "/proc/x"], "cannot write in folder"),
        ("benchmark_partners", ["--game", "tic_tac_toe", "--size", "6"], "--size is for reversi"),
        ("benchmark_partners", ["--game", "tic_tac_toe", "--variants", "{bad"], "not JSON"),
    ]:
        out = tmp_path / f"{name}_out"
        argv = [str(out) if a == "-" else a for a in argv]  # build_ladder's folder: --runs
        argv = argv if {"--out", "--runs"} & set(argv) else argv + ["--out", str(out)]
        assert report_errors(lambda: script(name).main(argv)) == 2, (name, argv)
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and why in err, (name, err)
        assert not out.exists() and sorted(os.listdir(run)) == ["config.json", "metrics.jsonl"]
    for name in sorted(f for f in os.listdir(EXPERIMENTS) if f.endswith(".py")):
        with open(os.path.join(EXPERIMENTS, name)) as f:
            text = f.read()
        assert "report_errors(main)" in text, name
        for banned in ("sys.path", "noqa: E402", "from experiments", "import experiments"):
            assert banned not in text, (name, banned)


def test_learning_curves_accuracy_needs_its_oracle(tmp_path, monkeypatch, capsys):
    """``--accuracy`` on animal shogi without the solved table is refused in one line before
    the run writes anything (the accuracy rows themselves: ``test_learning_curves_tiny``)."""
    from jaxgames.cli import report_errors
    from jaxgames.evaluation import animal_shogi_solver

    lc = script("learning_curves")
    monkeypatch.setenv(animal_shogi_solver.ENV_VAR, str(tmp_path / "no_table"))
    bad = ["--games", "animal_shogi", "--algos", "ppo", "--quick", "--accuracy", "2"]
    assert report_errors(lambda: lc.main(bad + ["--out", str(tmp_path / "as")])) == 2
    assert "run 'jaxgames solve animal_shogi' first" in capsys.readouterr().err
    assert not (tmp_path / "as").exists()


# ----------------------------------------------------------------------------- scripts
def test_quickstart_tiny(tmp_path):
    quickstart = script("quickstart")
    out = str(tmp_path / "qs")
    argv = ["--total-steps", "4096", "--num-envs=32", "--net.hidden=8", "--games-per-colour"]
    argv += ["10", "--out", out, "--no-progress"]
    res = quickstart.main(argv + ["--opponents", "random", "perfect"])
    for f in ("config.json", "metrics.jsonl", "metrics.csv", "learning_curve.png", "strength.md"):
        assert os.path.exists(os.path.join(out, f)), f
    s = res["strength"]
    assert set(s) == {"random", "perfect"}
    assert s["perfect"]["overall"]["games"] == 20 and s["perfect"]["overall"]["wins"] == 0
    with open(os.path.join(out, "config.json")) as f:
        assert json.load(f)["config"]["net"]["hidden"] == 8  # --field=value reached the run
    # a second run of the same command resumes the finished run instead of failing
    res2 = quickstart.main(argv + ["--opponents", "random"])
    assert res2["total_steps"] == res["total_steps"]


def _ttt_curves_args(out: str) -> list[str]:
    argv = ["--games", "tic_tac_toe", "--algos", "ppo", "--seeds", "2"]
    argv += ["--total-steps", "3000", "--evals", "2", "--eval-games", "8", "--num-envs=16"]
    argv += ["--net.hidden=8", "--partners={'greedy': 0.25}"]
    argv += ["--opponents", "random", "greedy", "perfect", "--opening-plies", "2"]
    return argv + ["--variant", "tiny", "--accuracy", "3", "--out", out]


@pytest.fixture(scope="module")
def ttt_curves(tmp_path_factory):
    """One learning-curves run shared by the tests below (it is their slow part): tic-tac-toe
    PPO, 2 seeds in one vmap, a tiny network, greedy as a training partner (a quarter of the
    games), a named variant. Returns (out folder, summaries)."""
    out = str(tmp_path_factory.mktemp("lc"))
    return out, script("learning_curves").main(_ttt_curves_args(out))


def test_learning_curves_keep_each_point_and_only_this_runs(ttt_curves, tmp_path, monkeypatch):
    """A run killed after a point's evaluation has that point in curves.csv (written at every
    point, not at the end); a rerun keeps only its own seeds' and opponents' points."""
    import shutil

    lc = script("learning_curves")
    out = str(tmp_path / "lc")
    shutil.copytree(ttt_curves[0], out)
    d = os.path.join(out, "tic_tac_toe_ppo_tiny")
    rows = ex.read_csv(os.path.join(d, "curves.csv"))
    last = max(int(r["chunk"]) for r in rows)
    for s in (0, 1):  # as if killed before the last chunk's checkpoints and points
        shutil.rmtree(os.path.join(d, f"seed{s}", "checkpoints", str(last)))
    ex.write_csv(os.path.join(d, "curves.csv"), [r for r in rows if int(r["chunk"]) < last])
    real = lc.run_training

    def killed_after_the_last_point(*args, on_chunk, **kw):
        def point(k, state, records):
            stop = on_chunk(k, state, records)
            if k == last:
                raise KeyboardInterrupt
            return stop

        return real(*args, on_chunk=point, **kw)

    monkeypatch.setattr(lc, "run_training", killed_after_the_last_point)
    with pytest.raises(KeyboardInterrupt):
        lc.main(_ttt_curves_args(out))
    rows = ex.read_csv(os.path.join(d, "curves.csv"))
    assert sum(int(r["chunk"]) == last for r in rows) == 6  # 2 seeds x 3 opponents
    # what a rerun takes over: its own seeds' and opponents' points, none of another protocol
    with open(os.path.join(d, "experiment.json")) as f:
        info = json.load(f)
    kept, acc = lc._earlier_points(d, {**info, "seeds": [0], "opponents": ["random", "perfect"]})
    assert {(r["seed"], r["opponent"]) for r in kept} == {("0", "random"), ("0", "perfect")}
    assert {r["seed"] for r in acc} == {"0"} and len(acc) > 0
    assert lc._earlier_points(d, {**info, "eval_games": 16}) == ([], [])


def test_learning_curves_tiny(ttt_curves):
    lc = script("learning_curves")
    out, summaries = ttt_curves
    assert [s["algorithm"] for s in summaries] == ["ppo"]
    d = os.path.join(out, "tic_tac_toe_ppo_tiny")
    for f in ("experiment.json", "curves.csv", "summary.json", "learning_curves.png"):
        assert os.path.exists(os.path.join(d, f)), f
    rows = ex.read_csv(os.path.join(d, "curves.csv"))
    assert {r["seed"] for r in rows} == {"0", "1"}
    assert {r["opponent"] for r in rows} == {"random", "greedy", "perfect"}
    chunks = sorted({int(r["chunk"]) for r in rows})
    assert chunks[0] == 0 and len(chunks) >= 2  # the untrained point + evaluations in training
    for r in rows:
        assert int(r["win_all"]) + int(r["draw_all"]) + int(r["loss_all"]) == 8
        assert int(r["win_first"]) + int(r["draw_first"]) + int(r["loss_first"]) == 4
    steps = [float(r["env_steps"]) for r in rows if r["seed"] == "0" and r["opponent"] == "random"]
    assert steps == sorted(steps) and steps[-1] > 0
    with open(os.path.join(out, "index.json")) as f:
        assert [r["label"] for r in json.load(f)["runs"]] == ["tic_tac_toe_ppo_tiny"]
    table = open(os.path.join(out, "summary.md")).read()
    (row,) = [ln for ln in table.splitlines() if ln.startswith("| tic_tac_toe | ppo |")]
    assert "| tiny `--num-envs=16 --net.hidden=8 --partners={'greedy': 0.25}` | 2 |" in row
    assert "vs greedy: win (loss)" in table and row.count(" partner") == 1  # greedy only
    # the milestones: score thresholds against the held-out rungs that were played
    assert "| tic_tac_toe_ppo_tiny | 90% vs random |" in table
    assert "| tic_tac_toe_ppo_tiny | 50% vs perfect |" in table and "vs uct:300" not in table
    # Elo on the tic-tac-toe ladder at every evaluation point and seed (the games start from
    # the ladder's 2 random plies, not the curves' default 0: no Elo), and the per-game figure
    said = []
    assert lc.rating_ladder(jaxgames.make("tic_tac_toe"), 0, said.append) is None
    assert said == [
        "   no ladder Elo: the games start after 0 random plies, the tic_tac_toe ladder's after 2"
    ]
    assert lc.rating_ladder(jaxgames.make("tic_tac_toe"), 2, said.append).plies == 2
    elos = ex.read_csv(os.path.join(d, "elo.csv"))
    assert {(r["chunk"], r["seed"]) for r in elos} == {(r["chunk"], r["seed"]) for r in rows}
    for r in elos:
        assert r["rungs"] == "random greedy perfect"
        assert float(r["elo_lo"]) <= float(r["elo"]) <= float(r["elo_hi"]) or r["bound"]
    assert os.path.exists(os.path.join(out, "tic_tac_toe_elo.png"))
    # --accuracy: every point's moves judged against perfect play (value iteration here)
    accuracy = ex.read_csv(os.path.join(d, "accuracy.csv"))
    assert {(r["chunk"], r["seed"]) for r in accuracy} == {(r["chunk"], r["seed"]) for r in rows}
    for r in accuracy:
        assert r["against"] == "perfect" and int(r["moves"]) > 0
        assert 1 <= int(r["distinct_games"]) <= 6
        assert 0.0 <= float(r["lo"]) <= float(r["share"]) <= float(r["hi"]) <= 1.0
        assert 0 <= int(r["blunders"]) <= int(r["moves"])
    assert 0.0 <= summaries[0]["final_accuracy"]["mean"] <= 1.0
    assert "| accuracy |" in table
    # the figure can be redrawn from curves.csv alone
    png = os.path.join(d, "learning_curves.png")
    os.remove(png)
    assert lc.main(["--replot", d]) == [] and os.path.exists(png)
    # the seeds trained in one vmap are different agents, each an ordinary run directory
    from jaxgames.pretrained import training_facts
    from jaxgames.runs import load_agent
    from jaxgames.runs.metrics import MetricsLog

    a0, a1 = (load_agent(os.path.join(d, f"seed{s}")) for s in (0, 1))
    assert a0.config.seed == 0 and a1.config.seed == 1
    assert a0.config.partners == {"greedy": 0.25} and a0.config.net["hidden"] == 8
    l0, l1 = jax.tree_util.tree_leaves(a0.params)[0], jax.tree_util.tree_leaves(a1.params)[0]
    assert not np.allclose(np.asarray(l0), np.asarray(l1))
    logs = [MetricsLog(os.path.join(d, f"seed{s}")).records() for s in (0, 1)]
    assert [r["chunk"] for r in logs[0]] == list(range(1, len(logs[0]) + 1)) and logs[0]
    assert logs[0][-1]["env_steps"] == max(steps)
    assert [r["time"] for r in logs[0]] == [r["time"] for r in logs[1]]  # one vmapped run
    assert logs[0][-1]["train/loss"] != logs[1][-1]["train/loss"]
    # the curves' training seconds are the chunks' own, which the model card of an export reads
    train_seconds = [float(r["train_seconds"]) for r in rows if r["seed"] == "0"][-1]
    assert train_seconds == pytest.approx(sum(r["chunk_seconds"] for r in logs[0]), abs=1e-3)
    facts = training_facts(os.path.join(d, "seed0"), logs[0][-1]["chunk"])
    assert facts["env_steps"] == max(steps) and facts["wall_clock_seconds"] > 0
    assert facts["train_seconds"] == pytest.approx(train_seconds, abs=0.051)  # rounded to 0.1
    assert facts["source_run"].endswith("/tic_tac_toe_ppo_tiny/seed0")


def test_reference_articles_tiny(tmp_path):
    argv = ["--quick", "--parts", "tabular_q", "shogi_winner_imitation", "--ttt-games", "1500"]
    argv += ["--shogi-games", "64", "--vs-init-games", "8", "--eval-games", "4"]
    argv += ["--opponents", "random", "--net.hidden=8", "--out", str(tmp_path / "ra")]
    argv += ["--eval_games=0", "--eval_vs_init_games=0"]  # no evaluation inside training
    rows = script("reference_articles").main(argv)
    assert {r["experiment"] for r in rows} == {
        "tabular Q, tic-tac-toe",
        "animal shogi winner imitation",
    }
    report = open(tmp_path / "ra" / "report.md").read()
    assert "98.7%" in report and "~80%" in report and "not reached (budget)" in report
    assert len(ex.read_csv(tmp_path / "ra" / "results.csv")) == len(rows)
    with open(tmp_path / "ra" / "shogi_winner_imitation" / "seed0" / "config.json") as f:
        assert json.load(f)["config"]["net"]["hidden"] == 8  # --field=value reaches the parts


@pytest.mark.slow
def test_reference_articles_other_parts_tiny(tmp_path):
    """The two parts the fast test leaves out (their training goes through the same train_part;
    the DQN part's 320 games of 32 plies reach its quick preset's first gradient steps)."""
    argv = ["--quick", "--parts", "othello6_dqn", "reversi8_ppo", "--othello-games", "320"]
    argv += ["--reversi8-steps", "4096", "--eval-games", "4", "--opponents", "random"]
    rows = script("reference_articles").main(argv + ["--net.hidden=8", "--out", str(tmp_path)])
    assert {r["experiment"] for r in rows} == {"6x6 othello DQN", "8x8 reversi PPO"}


def test_reproduce_runs_steps_and_reports_failures(tmp_path, monkeypatch):
    """reproduce.py runs each step's script in its own process, quick runs under runs/quick/
    (relative to the working directory), records their wall clock, and a failing step is
    reported without stopping the others."""
    reproduce = script("reproduce")
    (tmp_path / "ok.py").write_text(
        "import json, sys\njson.dump(sys.argv[1:], open('argv.json', 'w'))\n"
    )
    steps = [("broken", "no_such_script.py", []), ("fine", "ok.py", ["--full"])]
    monkeypatch.setattr(reproduce, "STEPS", steps)
    monkeypatch.setattr(reproduce, "HERE", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="steps failed: broken"):
        reproduce.main(["--quick"])
    with open(tmp_path / "runs/quick/reproduce/timings.json") as f:
        done = json.load(f)["steps"]
    assert [t["step"] for t in done] == ["broken", "fine"]
    assert done[0]["status"].startswith("failed: exit code") and done[1]["status"] == "ok"
    assert json.load(open(tmp_path / "argv.json")) == ["--quick", "--out", "runs/quick/fine"]
    assert reproduce.main(["--only", "fine", "--out", "t"])["steps"][0]["status"] == "ok"
    assert json.load(open(tmp_path / "argv.json")) == ["--full"]


def test_publish_copies_what_the_docs_link_to(tmp_path):
    runs = tmp_path / "runs"
    for rel in (
        "learning_curves/reversi6_ppo/learning_curves.png",
        "learning_curves/reversi6_elo.png",
        "learning_curves/summary.md",
        "throughput/throughput.png",
        "reference_articles/report.md",
        "reproduce/timings.md",
        "ablation/summary.md",
    ):
        (runs / rel).parent.mkdir(parents=True, exist_ok=True)
        (runs / rel).write_text(rel)
    copied = script("reproduce").publish(str(tmp_path / "docs"), str(runs))
    assert sorted(os.path.basename(c) for c in copied) == [
        "ablation_reversi6_vs_random.md",
        "learning_curves_reversi6_elo.png",
        "learning_curves_reversi6_ppo.png",
        "reference_articles.md",
        "throughput.png",
    ]
    assert (tmp_path / "docs" / "learning_curves_reversi6_ppo.png").read_text() == (
        "learning_curves/reversi6_ppo/learning_curves.png"
    )


def test_benchmark_opponents_times_the_ladder_rungs(tmp_path, monkeypatch):
    """By default every rung of each game's ladder is timed at each batch size (the rungs are
    replaced by two cheap ones here: compiling uct:300 and perfect is the slow part)."""
    bench = script("benchmark_opponents")
    asked = []

    def rungs(env):
        asked.append(env.name)
        return ["random", "greedy"]

    monkeypatch.setattr(bench, "ladder_specs", rungs)
    out = str(tmp_path / "bench")
    rows = bench.main(
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
    assert len(ex.read_csv(os.path.join(out, "tic_tac_toe.csv"))) == 4
    md = open(os.path.join(out, "opponents.md")).read()
    assert "| tic_tac_toe | `greedy` |" in md and "batch 4 (per position)" in md
    with pytest.raises(SystemExit):
        bench.main(["--batch", "0", "--out", out])


def test_pgx_peer_updates_and_scores_its_games():
    """The purejaxrl-style peer on pgx's othello: an update runs and counts finished games, and
    its match against random play pays each game's result once (pgx pays on the last step)."""
    pytest.importorskip("pgx")
    peer = script("pgx_ppo_peer")
    init, update, env, net = peer.make_update(dict(num_envs=8, num_steps=64))
    state, metrics = jax.jit(update)(init(jax.random.PRNGKey(0)))
    assert np.isfinite(float(metrics["loss"])) and int(metrics["episodes"]) >= 4
    res = peer.vs_random(env, net, state[0], jax.random.PRNGKey(1), games=16)
    for side in ("first", "second"):
        rates = [res[f"{w}_{side}"] for w in ("win", "draw", "loss")]
        assert abs(sum(rates) - 1.0) < 1e-6 and res[f"draw_{side}"] < 0.5


def test_profile_selfplay_tiny(tmp_path):
    """Every piece of an AlphaZero and a PPO update is compiled, timed and shared out; the
    network piece's FLOPs (XLA's count) are at least the MLP's multiply-adds counted by hand
    and not much more (bias, activations and masking add a few per unit)."""
    prof = script("profile_selfplay")
    out = tmp_path / "profile"
    argv = ["--games", "tic_tac_toe", "--num-envs", "4", "--num-simulations", "2", "--quick"]
    argv += ["--net.hidden=8", "--replay-size=64"]  # --quick: 2 plies per update, 1 repeat
    argv += ["--out", str(out)]
    rows = prof.main(argv + ["--peak-tflops", "1", "--compile-workers", "2"])
    assert [(r["algo"], r["num_envs"], r["num_simulations"]) for r in rows] == [
        ("alphazero", 4, 2),
        ("ppo", 4, None),
    ]
    az, pp = rows
    assert set(az["seconds"]) == {"update", *prof.PIECES} - {"rollout"}
    assert set(pp["seconds"]) == {"update", "rollout", "network", "env_step", "learner"}
    assert all(v > 0 for r in rows for v in r["seconds"].values())
    assert set(az["share"]) == {"network", "env", "bookkeeping", "replay", "learner", "other"}
    assert sum(az["share"].values()) == pytest.approx(1.0)
    env = jaxgames.make("tic_tac_toe")
    d, h, a = int(np.prod(env.observation_shape)), 8, env.num_actions
    macs = d * h + 2 * h * h + h * (a + 1)  # 3 hidden layers, policy and value heads
    for r, rows_per_ply in ((az, 4 * (2 + 1)), (pp, 4)):
        assert r["net"] == {"hidden": 8, "layers": 3} and r["features"] == "observation"
        flops = r["xla_flops"]["network"]
        assert 2 * macs * rows_per_ply <= flops <= 1.5 * 2 * macs * rows_per_ply, (r["algo"], flops)
        assert r["update_flops"] > 2 * flops  # two plies of forward passes plus the learner
    # the guide called S + 1 times on B states: XLA counts the loop's body once, one call's
    assert az["xla_flops"]["network_calls"] == pytest.approx(az["xla_flops"]["network"] / 3, 0.1)
    saved = json.loads((out / "profile.json").read_text())
    assert len(saved["rows"]) == 2 and saved["peak_flops"] == 1e12
    md = (out / "profile.md").read_text()
    assert "| tic_tac_toe | alphazero | 4 | 2 |" in md and "| tic_tac_toe | ppo | 4 | - |" in md
    assert az["replay_size"] == 64 and pp["replay_size"] == 0  # an AlphaZero field only
    assert az["num_steps"] == pp["num_steps"] == 2
    with pytest.raises(ValueError, match="--num-envs must be at least 1"):
        prof.main(["--num-envs", "0", "--out", str(tmp_path / "bad")])
    with pytest.raises(ValueError, match=r"unknown config field\(s\) \['no-such'\]"):
        prof.main(["--no-such=1", "--out", str(tmp_path / "bad")])
    assert not (tmp_path / "bad").exists()


def test_profile_against_commit_pieces(tmp_path):
    """``--against-commit``: the other run gets the same arguments less ``--against-commit``
    and ``--out``; the comparison pairs configurations; a name that is no commit is a
    one-line error before anything runs."""
    prof = script("profile_selfplay")
    argv = ["--games", "reversi6", "--against-commit=HEAD~1", "--out", "x", "--quick"]
    assert prof._without(argv, "--against-commit", "--out") == ["--games", "reversi6", "--quick"]
    row = dict(game="reversi6", algo="alphazero", num_envs=8, num_simulations=4, plies_per_s=300)
    other = [dict(row, plies_per_s=200.0), dict(row, num_envs=16)]
    table = prof.compare_table([row, dict(row, algo="ppo", num_simulations=None)], other, "abc")
    assert "| reversi6 | alphazero | 8 | 4 | 200 | 300 | 1.50 |" in table
    assert "| reversi6 | ppo | 8 | - | - | 300 | - |" in table
    with pytest.raises(ValueError, match="'no-such-rev' is not a commit"):
        prof.profile_commit("no-such-rev", [], str(tmp_path))
