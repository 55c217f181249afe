"""CLI smoke tests: train ppo on a tiny config, rerun (resume), clashing and bad overrides."""

import json
import os
import re
import subprocess
import sys

from tiny_configs import TINY_TRAIN_ARGS, train_args

from jaxgames import cli
from jaxgames.agents.config import parse_overrides

TINY = [*TINY_TRAIN_ARGS, "--no-progress"]


def test_run_directory_follows_the_options_trained_however_given(tmp_path):
    """The default run name carries the game options and seeds trained, whether the options
    came as flags or as a ``--game-options`` override."""
    from jaxgames.cli.train import run_directory, train_config

    def run_dir(*argv):
        args = train_args(["train", "ppo", "--runs-dir", str(tmp_path), *argv])
        return os.path.basename(run_directory(args, train_config(args)))

    reversi4 = "reversi-size4-ppo-seed0"
    assert run_dir("--game", "reversi", "--size", "4") == reversi4
    assert run_dir("--game", "reversi", "--game-option", "size=4") == reversi4
    assert run_dir("--game", "reversi", "--game-options.size=4") == reversi4
    assert run_dir("--game", "reversi", '--game-options={"size": 4}') == reversi4
    assert run_dir("--game", "reversi", "--seeds", "1", "2", "--quick") == (
        "reversi-ppo-seeds1-2-quick"
    )
    assert run_dir("--run-name", "mine/a") == "a"
    assert not os.listdir(tmp_path)  # naming writes nothing


def test_train_ppo_then_resume_then_clash(tmp_path, capsys):
    args = [
        "train",
        "ppo",
        "--game",
        "tic_tac_toe",
        "--seed",
        "3",
        "--runs-dir",
        str(tmp_path),
        *TINY,
    ]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    run_dir = os.path.join(str(tmp_path), "tic_tac_toe-ppo-seed3")
    assert f"-> {run_dir}" in out and "run written to" in out and "vs random" in out
    cfg = json.load(open(os.path.join(run_dir, "config.json")))["config"]
    assert cfg["seed"] == 3 and cfg["net"] == {"hidden": 8, "layers": 1} and cfg["num_envs"] == 8
    assert len(open(os.path.join(run_dir, "metrics.jsonl")).readlines()) == 2
    files_before = sorted(os.listdir(run_dir))
    # same command again: resumes (nothing left to do), same metrics
    assert cli.main(args) == 0
    assert len(open(os.path.join(run_dir, "metrics.jsonl")).readlines()) == 2
    # different config into the same run: clear error, exit code 2, files untouched
    assert cli.main(args + ["--learning-rate=0.01"]) == 2
    err = capsys.readouterr().err
    assert "different config" in err and "learning_rate" in err
    # a run named into another run's folder (its checkpoints, a seed's place) is refused
    for inside in ("checkpoints/2", "seed5"):
        name = f"tic_tac_toe-ppo-seed3/{inside}"
        assert cli.main(args + ["--run-name", name]) == 2
        assert "puts the run inside the run" in capsys.readouterr().err
    assert sorted(os.listdir(run_dir)) == files_before


def test_bad_values_and_unknown_fields(tmp_path, capsys):
    base = ["train", "ppo", "--runs-dir", str(tmp_path), "--no-progress"]
    assert cli.main(base + ["--num-envs=0"]) == 2
    assert "invalid num_envs=0" in capsys.readouterr().err
    assert cli.main(base + ["--bogus=1"]) == 2
    assert "unknown config field 'bogus'" in capsys.readouterr().err
    assert cli.main(base + ["--game", "chess"]) == 2
    assert "game='chess'" in capsys.readouterr().err
    assert cli.main(base + ["--scale-envs", "0"]) == 2
    assert "invalid --scale-envs=0" in capsys.readouterr().err
    # a field given twice (a flag and an override, or two spellings) is refused, not resolved
    for twice, why in (
        (["--total-steps", "32", "--total_steps=64"], "both set total_steps"),
        (["--learning-rate=0.1", "--learning_rate=0.2"], "set the same field"),
        (["--game", "reversi", "--size", "4", '--game-options={"size": 6}'], "give them one"),
        (["--game", "reversi", "--size", "4", "--game-options.size=6"], "give them one"),
        (["--net.hidden=8", "--net.hidden=16"], "set the same field"),
    ):
        assert cli.main(base + twice) == 2
        assert why in capsys.readouterr().err
    # a dict field's keys are kept as given: two partner folders differing in - and _ are two
    assert parse_overrides(["--partners.runs/a-b=0.5", "--partners.runs/a_b=0.5"]) == {
        "partners.runs/a-b": "0.5",
        "partners.runs/a_b": "0.5",
    }
    wi = ["train", "winner_imitation", "--game", "animal_shogi", "--runs-dir", str(tmp_path)]
    assert cli.main(wi + ["--scale-envs", "512"]) == 2
    assert "WinnerImitationConfig has no batch-scaling rule" in capsys.readouterr().err
    assert not os.listdir(tmp_path)


def test_module_entry_point_help():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root}
    out = subprocess.run(
        [sys.executable, "-m", "jaxgames.cli", "train", "ppo", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0 and "--quick" in out.stdout and "--total-steps" in out.stdout


def test_eval_command(capsys, tmp_path):
    out = tmp_path / "r.json"
    code = cli.main(
        [
            "eval",
            "--game",
            "tic_tac_toe",
            "--a",
            "perfect",
            "--b",
            "random",
            "--games",
            "200",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "A as first" in text and "loss 0.0%" in text
    data = json.loads(out.read_text())
    assert data["a"] == "perfect" and data["overall"]["losses"] == 0


def test_eval_command_bad_input(capsys):
    assert cli.main(["eval", "--game", "tic_tac_toe", "--a", "alphabeta:x"]) == 2
    assert "alphabeta needs an integer depth" in capsys.readouterr().err
    assert cli.main(["eval", "--a", "greedy"]) == 2
    assert "--game is required" in capsys.readouterr().err
    for flag, value, why in (("--games", "10000001", "at most 10,000,000 games"),
                             ("--batch", "-1", "invalid --batch=-1")):  # fmt: skip
        assert cli.main(["eval", "--game", "tic_tac_toe", "--a", "greedy", flag, value]) == 2
        assert why in capsys.readouterr().err


def test_argument_errors_are_one_line(capsys):
    """argparse's own errors (a value of the wrong type, an unknown command or flag, a missing
    command) are one ``error:`` line naming the help to read, as every other bad input is."""
    cases = (
        (["eval", "--games", "x"], "argument --games: invalid int value: 'x'", "jaxgames eval"),
        (["evl"], "invalid choice: 'evl'", "jaxgames"),
        (["eval", "--game", "tic_tac_toe", "--a", "random", "--bogus"],
         "unrecognized arguments: --bogus", "jaxgames eval"),
        ([], "the following arguments are required: COMMAND", "jaxgames"),
    )  # fmt: skip
    for argv, why, prog in cases:
        try:
            code = cli.main(argv)
        except SystemExit as e:
            code = e.code
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, (argv, err)
        assert err.startswith("error: ") and why in err and f"(see {prog} --help)" in err, err


def test_rate_command(tmp_path, capsys):
    """`jaxgames rate` places a player on the packaged tic-tac-toe ladder (a few games per
    rung) and writes JSON; a game without a packaged ladder is a one-line error."""
    out = tmp_path / "rate.json"
    args = ["rate", "greedy", "--game", "tic_tac_toe", "--games-per-rung", "4"]
    assert cli.main(args + ["--rungs", "perfect", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "greedy on the tic_tac_toe ladder" in text and "Elo " in text
    data = json.loads(out.read_text())
    assert [row["rung"] for row in data["rungs"]] == ["perfect"]
    assert cli.main(["rate", "greedy", "--game", "tic_tac_toe", "--rungs", "nobody"]) == 2
    assert "not rungs of this ladder" in capsys.readouterr().err
    assert cli.main(["rate", "greedy", "--game", "animal_shogi", "--ladder", "no_such"]) == 2
    assert "no ladder 'no_such'" in capsys.readouterr().err
    # more games than the ladder has distinct openings for: repeats are no new evidence
    assert cli.main([*args[:4], "--games-per-rung", "200", "--rungs", "perfect"]) == 2
    err = capsys.readouterr().err
    assert "have 72 distinct positions, so at most 144 games per rung" in err, err


def test_eval_counts_distinct_games(tmp_path, capsys):
    """Deterministic players from one start repeat one game: ``eval`` says how many games are
    distinct and gives no interval for a game repeated (it used to report Wilson intervals over
    all of them as if independent); random openings (the default on reversi) vary the games."""
    agent = "pretrained:tic_tac_toe"  # a greedy network: the same move in the same position
    out = tmp_path / "e.json"
    argv = ["eval", "--a", agent, "--b", agent, "--games", "6", "--json", str(out)]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "6 games (2 distinct), 0 random opening plies" in text, text
    assert text.count("one game repeated: no interval") == 2 and "note: only 2 of the 6" in text
    data = json.loads(out.read_text())
    assert data["overall"]["distinct_games"] == 2 and data["as_first"]["score_ci"] is None
    assert data["opening_plies"] == 0
    argv = ["eval", "--a", agent, "--b", agent, "--games", "8", "--opening-plies", "2"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    distinct = int(re.search(r"8 games \((\d) distinct\), 2 random opening plies", text)[1])
    assert distinct > 2 and "no interval" not in text, text


def test_ratings_never_have_a_zero_width_interval():
    """Two draws against random (or any handful of games scored alike): the bootstrap has no
    spread, so the interval is the Wilson interval of the score over the openings, in Elo;
    never ``Elo -0 [-0, -0]``."""
    from jaxgames.evaluation.elo import Record, wilson_interval
    from jaxgames.evaluation.ladder import Pairing, rate_against_ladder

    rating = rate_against_ladder(
        {"random": Pairing.from_counts("x", "random", 0, 2, 0)}, {"random": 0.0}
    )
    assert rating.lo < rating.elo < rating.hi and str(rating).startswith("0 [-")
    assert rating.hi - rating.lo > 400  # two games: the interval is wide
    # a record repeated: the intervals count its distinct games
    assert Record(5, 0, 5, distinct=1).ci("score") is None
    assert Record(6, 0, 4, distinct=5).ci("score") == wilson_interval(3, 5)  # 60% of 5 games
    assert Record(6, 0, 4, distinct=10).ci("score") == wilson_interval(6, 10)


def test_a_closed_output_pipe_ends_quietly(monkeypatch, capsys):
    """``jaxgames ... | head -1``: the reader going away ends the command without an error;
    a broken pipe to anything else (an engine) is still one."""
    read, write = os.pipe()
    os.close(read)
    out = os.fdopen(write, "w")
    monkeypatch.setattr(sys, "stdout", out)

    def chatty():
        for _ in range(10_000):
            print("a line of output")

    assert cli.report_errors(chatty) == 0
    monkeypatch.undo()
    out.close()
    assert capsys.readouterr().err == ""

    def engine_gone():
        raise BrokenPipeError(32, "Broken pipe")

    assert cli.report_errors(engine_gone) == 2
    assert capsys.readouterr().err.startswith("error:")
