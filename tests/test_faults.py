"""Fault injection: kills at several points of a run, damaged newest checkpoints (truncated,
emptied, bit-flipped, a wrong checksum, an empty newer step), two writers, non-finite config
and training, a damaged metrics line, the one-line errors of the command line, and a player
that calls the host on one CPU.

Every fault must end in a clear message (one line, no traceback) and lose nothing that was
saved: a resumed run ends bit for bit where an uninterrupted one does. Kills are real
(``SIGKILL`` from inside a subprocess, at a patched point of the driver or of orbax's commit
rename); everything else runs in this process, on one tiny config compiled once. The
subprocesses share a JAX compilation cache, so only the first one compiles.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tiny_configs import TINY_FIELDS

import jaxgames
from jaxgames import cli, distributed
from jaxgames.agents.registry import algorithm_module
from jaxgames.runs import CONFIG_FILE, PARAMS_FILE, checkpoint, load_agent, read_run_config
from jaxgames.runs.checkpoint import DIGEST_KEY, CheckpointWarning
from jaxgames.runs.outputs import check_output_path, is_run_folder
from jaxgames.training import driver

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# orbax's "Event loop is closed" noise after a failed read must not reach the hook either
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")

# 8 games x 4 plies = 32 steps per update, one update per chunk, 128 steps -> 4 chunks
TINY = [
    "train",
    "ppo",
    "--game",
    "tic_tac_toe",
    "--total-steps=128",
    "--num-envs=8",
    "--num-steps=4",
    "--num-minibatches=1",
    "--update-epochs=1",
    "--updates-per-chunk=1",
    "--eval-games=0",
    "--keep-checkpoints=3",
    "--net.hidden=8",
    "--net.layers=1",
    "--no-progress",
]

# run in a subprocess: SIGKILL itself at a chosen point, then the command line
KILLER = r"""
import json, os, signal, sys
from jaxgames.runs import checkpoint, metrics

point, chunk = sys.argv[1], int(sys.argv[2])

def die():
    os.kill(os.getpid(), signal.SIGKILL)

if point == "before_save":  # the chunk's metrics are written, its checkpoint is not
    save = checkpoint.CheckpointStore.save
    def patched(self, step, tree):
        if step == chunk:
            die()
        return save(self, step, tree)
    checkpoint.CheckpointStore.save = patched
elif point == "torn_metrics":  # killed half-way through writing the chunk's metrics line
    append = metrics.MetricsLog.append
    def patched(self, record):
        if record["chunk"] == chunk:
            with open(self.path, "a") as f:
                f.write(json.dumps(record)[:50])
            die()
        return append(self, record)
    metrics.MetricsLog.append = patched
elif point == "mid_save":  # orbax wrote the step to its temporary folder, not yet renamed
    rename = os.rename
    def patched(src, dst, *args, **kwargs):
        if os.path.basename(str(dst)) == str(chunk) and "tmp" in os.path.basename(str(src)):
            die()
        return rename(src, dst, *args, **kwargs)
    os.rename = patched

from jaxgames.cli import main
sys.exit(main(sys.argv[3:]))
"""

# the command line in a process of its own
CLI = r"""
import sys
from jaxgames.cli import main
sys.exit(main(sys.argv[1:]))
"""

HOLDER = r"""
import sys, time
from jaxgames.runs.lock import RunLock
lock = RunLock(sys.argv[1]).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def env_vars(cache_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    env["JAX_PLATFORMS"] = "cpu"
    env["JAX_COMPILATION_CACHE_DIR"] = cache_dir
    env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
    return env


def train_args(runs: str, name: str, *extra: str) -> list[str]:
    """The tiny run's command line with ``extra`` in place of the tiny fields it sets (a field
    given twice is refused)."""
    field = lambda a: a.split("=")[0].replace("_", "-")  # noqa: E731
    given = {field(e) for e in extra if "=" in e}
    tiny = [a for a in TINY if "=" not in a or field(a) not in given]
    return [*tiny, "--runs-dir", runs, "--run-name", name, *extra]


def run_cli(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def params_of(run_dir: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CheckpointWarning)
        loaded = load_agent(run_dir)
    return loaded.chunk, jax.tree_util.tree_leaves(loaded.params)


def same_leaves(a, b) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b)
    )


def strip_times(path: str) -> list[dict]:
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    return [
        {k: v for k, v in r.items() if k not in ("time", "chunk_seconds", "steps_per_sec")}
        for r in rows
    ]


def tree_bytes(path: str) -> dict[str, bytes]:
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = fh.read()
    return out


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """An uninterrupted run (4 chunks; checkpoints 2, 3, 4), trained in this process."""
    runs = str(tmp_path_factory.mktemp("ref"))
    assert cli.main(train_args(runs, "ref")) == 0
    run_dir = os.path.join(runs, "ref")
    chunk, leaves = params_of(run_dir)
    assert chunk == 4
    return run_dir, leaves


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("jax_cache"))


def copy_run(ref_dir: str, dest) -> str:
    run_dir = str(dest / "run")
    shutil.copytree(ref_dir, run_dir)
    return run_dir


# ----------------------------------------------------------------------------- kills
def test_kills_at_several_points_lose_nothing(ref, cache_dir, tmp_path, capsys):
    """Killed after a chunk's metrics but before its checkpoint, half-way through a metrics
    line, and inside orbax's commit: each rerun takes the dead process's lock over, resumes
    from the newest complete checkpoint, and the run ends bit for bit as the reference."""
    ref_dir, ref_leaves = ref
    runs, name = str(tmp_path), "killed"
    run_dir = os.path.join(runs, name)
    metrics = os.path.join(run_dir, "metrics.jsonl")
    env = env_vars(cache_dir)

    def killed_run(point: str, chunk: int) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-c", KILLER, point, str(chunk), *train_args(runs, name)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
        return proc

    killed_run("before_save", 2)
    assert [r["chunk"] for r in strip_times(metrics)] == [1, 2]
    assert sorted(os.listdir(os.path.join(run_dir, "checkpoints"))) == ["1"]
    assert os.path.exists(os.path.join(run_dir, ".lock"))  # left by the killed process

    proc = killed_run("torn_metrics", 3)
    assert "taking over the lock of process" in proc.stdout
    assert "resuming" in proc.stdout and "from chunk 1/4" in proc.stdout
    with open(metrics) as f:
        assert not f.read().endswith("\n")  # a torn last line

    proc = killed_run("mid_save", 4)
    assert "from chunk 2/4" in proc.stdout
    steps = os.listdir(os.path.join(run_dir, "checkpoints"))
    assert "4" not in steps and any("tmp" in s for s in steps)  # a half-committed step

    rc, out, err = run_cli(capsys, train_args(runs, name))
    assert rc == 0, err
    assert "taking over the lock" in out and "from chunk 3/4" in out
    assert strip_times(metrics) == strip_times(os.path.join(ref_dir, "metrics.jsonl"))
    chunk, leaves = params_of(run_dir)
    assert chunk == 4 and same_leaves(leaves, ref_leaves)
    assert not os.path.exists(os.path.join(run_dir, ".lock"))


# ----------------------------------------------------------------------------- checkpoints
def _data_file(step_dir: str) -> str:
    """The file orbax reads the arrays from (the largest under ``default/d``)."""
    d = os.path.join(step_dir, "default", "d")
    return max((os.path.join(d, f) for f in os.listdir(d)), key=os.path.getsize)


def truncate(step_dir: str) -> None:
    path = _data_file(step_dir)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def empty(step_dir: str) -> None:
    shutil.rmtree(step_dir)
    os.mkdir(step_dir)


def drop_data(step_dir: str) -> None:
    shutil.rmtree(os.path.join(step_dir, "default"))


def flip_bytes(step_dir: str) -> None:
    path = _data_file(step_dir)
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        chunk = f.read(4)
        f.seek(os.path.getsize(path) // 2)
        f.write(bytes(b ^ 0xFF for b in chunk))


def wrong_checksum(step_dir: str) -> None:
    """What a flip the file format cannot see leaves: data that no longer matches its digest."""
    path = os.path.join(step_dir, "_CHECKPOINT_METADATA")
    with open(path) as f:
        meta = json.load(f)
    digest = meta["custom_metadata"][DIGEST_KEY]
    meta["custom_metadata"][DIGEST_KEY] = ("0" if digest[0] != "0" else "1") + digest[1:]
    with open(path, "w") as f:
        json.dump(meta, f)


def truncate_metadata(step_dir: str) -> None:
    """orbax reads a broken metadata file as none: a step from before digests, unchecked."""
    path = os.path.join(step_dir, "_CHECKPOINT_METADATA")
    with open(path, "r+") as f:
        f.truncate(os.path.getsize(path) // 2)


def drop_metadata(step_dir: str) -> None:
    os.remove(os.path.join(step_dir, "_CHECKPOINT_METADATA"))


@pytest.mark.parametrize(
    "damage, why",
    [
        (truncate_metadata, "_CHECKPOINT_METADATA is unreadable"),
        (drop_metadata, "_CHECKPOINT_METADATA is unreadable"),
        (truncate, "unreadable|does not match its checksum"),
        (empty, "empty"),
        (drop_data, "without its data folder"),
        (flip_bytes, "unreadable|does not match its checksum"),
        (wrong_checksum, "does not match its checksum"),
    ],
)
def test_damaged_newest_checkpoint_falls_back(ref, tmp_path, damage, why):
    ref_dir, ref_leaves = ref
    run_dir = copy_run(ref_dir, tmp_path)
    damage(os.path.join(run_dir, "checkpoints", "4"))
    with pytest.warns(CheckpointWarning, match=f"checkpoint 4 .* damaged: .*({why})") as rec:
        loaded = load_agent(run_dir)
    assert loaded.chunk == 3 and len(rec) == 1 and "\n" not in str(rec[0].message)


def test_damaged_checkpoint_then_train_and_eval(ref, cache_dir, tmp_path):
    """The command line, each command in a process of its own as a user runs it: ``eval``
    uses chunk 3 with one ``warning:`` line per skipped step and no orbax noise (absl lines,
    asyncio's unretrieved futures, "Event loop is closed" tracebacks, which tensorstore's
    threads can deliver any time after a failed read, so only a fresh process tells whose
    they are); ``train`` moves the damaged step aside (kept, not deleted) and recomputes it
    exactly; an empty newer step folder is skipped the same way."""
    ref_dir, ref_leaves = ref
    run_dir = copy_run(ref_dir, tmp_path)
    flip_bytes(os.path.join(run_dir, "checkpoints", "4"))
    os.mkdir(os.path.join(run_dir, "checkpoints", "6"))
    env = env_vars(cache_dir)

    def command(*argv: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-c", CLI, *argv]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)

    def assert_no_noise(err: str) -> None:
        for noise in ("Traceback", "Exception ignored", "Event loop", "absl", "never retrieved"):
            assert noise not in err, err[-2000:]

    proc = command("eval", "--a", run_dir, "--b", "random", "--games", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("warning: checkpoint ") for line in lines)
    assert "checkpoint 6" in lines[0] and "checkpoint 4" in lines[1]
    assert_no_noise(proc.stderr)

    proc = command(*train_args(os.path.dirname(run_dir), "run"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "from chunk 3/4" in proc.stdout and "moved the damaged checkpoint aside" in proc.stdout
    assert_no_noise(proc.stderr)
    assert len(os.listdir(os.path.join(run_dir, "corrupt_checkpoints"))) == 2
    chunk, leaves = params_of(run_dir)
    assert chunk == 4 and same_leaves(leaves, ref_leaves)


# ----------------------------------------------------------------------------- two writers
def test_second_writer_is_refused_and_stale_lock_taken_over(ref, cache_dir, tmp_path, capsys):
    ref_dir, ref_leaves = ref
    runs = str(tmp_path)
    run_dir = os.path.join(runs, "busy")
    os.makedirs(run_dir)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, run_dir],
        env=env_vars(cache_dir),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        for extra in ([], ["--learning-rate=0.01"]):  # the same command, or another config
            rc, out, err = run_cli(capsys, train_args(runs, "busy", *extra))
            assert rc == 2 and err.count("\n") == 1
            assert f"in use by process {holder.pid}" in err
        assert os.listdir(run_dir) == [".lock"]  # nothing written: no config.json, no metrics
    finally:
        holder.kill()  # SIGKILL: its lock file stays behind, stale
        holder.wait()
    rc, out, err = run_cli(capsys, train_args(runs, "busy"))
    assert rc == 0, err
    assert f"taking over the lock of process {holder.pid}" in out
    assert same_leaves(params_of(run_dir)[1], ref_leaves)
    assert not os.path.exists(os.path.join(run_dir, ".lock"))


# ----------------------------------------------------------------------------- non-finite
def test_non_finite_config_is_refused(tmp_path, capsys):
    for bad in ("--vf-coef=1e999", "--learning-rate=nan", "--max-grad-norm=inf"):
        rc, out, err = run_cli(capsys, train_args(str(tmp_path), "nf", bad))
        assert rc == 2 and "finite" in err and err.count("\n") == 1, err
    assert not os.listdir(tmp_path)


def test_diverging_training_stops_without_saving_it(ref, tmp_path, capsys, monkeypatch):
    """Parameters that turn NaN in chunk 3: exit 2 naming the chunk and the last good
    checkpoint; nothing of chunk 3 is written; the fixed run resumes to the reference."""
    ref_dir, ref_leaves = ref
    runs = str(tmp_path)
    argv = train_args(runs, "nan")
    # the driver's cached entry for this config (the reference run's; other tests in the same
    # process may have compiled configs with the same network, so look it up by config)
    name, config = read_run_config(ref_dir)
    compiled = driver._compiled(algorithm_module(name), name, config, distributed.make_mesh(None))
    tag = next(t for t, c in driver._COMPILED.items() if c is compiled)
    calls = {"n": 0}

    def poisoned(state):
        state, metrics = compiled.chunk(state)
        calls["n"] += 1
        if calls["n"] == 3:
            state = jax.tree_util.tree_map(
                lambda x: x * np.nan if jnp.issubdtype(x.dtype, jnp.floating) else x, state
            )
        return state, metrics

    monkeypatch.setitem(driver._COMPILED, tag, compiled._replace(chunk=poisoned))
    # the poisoned chunk runs as it is, not compiled ahead from the jitted one it wraps
    monkeypatch.setattr(driver, "_compile_ahead", lambda compiled, *args, **kwargs: compiled)
    rc, out, err = run_cli(capsys, argv)
    assert rc == 2 and err.count("\n") == 1
    assert "training diverged in chunk 3/4" in err and "last good checkpoint is chunk 2" in err
    run_dir = os.path.join(runs, "nan")
    assert sorted(os.listdir(os.path.join(run_dir, "checkpoints"))) == ["1", "2"]
    assert [r["chunk"] for r in strip_times(os.path.join(run_dir, "metrics.jsonl"))] == [1, 2]
    monkeypatch.setitem(driver._COMPILED, tag, compiled)
    rc, out, err = run_cli(capsys, argv)
    assert rc == 0, err
    assert same_leaves(params_of(run_dir)[1], ref_leaves)


# ----------------------------------------------------------------------------- metrics
def test_damaged_metrics_line_is_an_error_and_nothing_changes(ref, tmp_path, capsys):
    ref_dir, _ = ref
    run_dir = copy_run(ref_dir, tmp_path)
    path = os.path.join(run_dir, "metrics.jsonl")
    with open(path) as f:
        lines = f.readlines()
    lines[1] = lines[1][:30] + "\x00garbage" + lines[1][30:]
    with open(path, "w") as f:
        f.writelines(lines)
    before = tree_bytes(run_dir)
    rc, out, err = run_cli(capsys, train_args(str(tmp_path), "run"))
    assert rc == 2 and err.count("\n") == 1
    assert "metrics.jsonl, line 2, is damaged" in err and "nothing was changed" in err
    assert tree_bytes(run_dir) == before


def test_metrics_lost_mid_run_are_noticed_on_resume(ref, tmp_path, capsys):
    """``metrics.jsonl`` deleted while the run trained (outside the guarantees): the rerun
    says which chunks have no metrics instead of reporting a complete run in silence."""
    run_dir = copy_run(ref[0], tmp_path)
    path = os.path.join(run_dir, "metrics.jsonl")
    with open(path) as f:
        last = f.readlines()[-1]
    with open(path, "w") as f:  # what a run deleted mid-way leaves: its last chunk alone
        f.write(last)
    for _ in range(2):  # said on every resume, never dropped in silence
        with pytest.warns(UserWarning, match=r"no metrics for chunk\(s\) 1-3 of the 4 trained"):
            assert run_cli(capsys, train_args(str(tmp_path), "run"))[0] == 0


# ----------------------------------------------------------------------------- one-line errors
def test_one_line_errors(tmp_path, capsys):
    """Each of these used to end in a traceback (or be accepted)."""
    runs = str(tmp_path)
    for content in ("[1, 2]", "null", '{"algorithm": [1], "config": {}}'):
        bad = tmp_path / f"bad{len(content)}"
        bad.mkdir()
        (bad / "config.json").write_text(content)
        rc, _, err = run_cli(capsys, ["eval", "--a", str(bad), "--b", "random"])
        assert rc == 2 and "config.json is corrupt" in err and err.count("\n") == 1, err
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    ladder = tmp_path / "ladder.json"
    ladder.write_text('{"format": 1}')
    listed = tmp_path / "listed"
    listed.mkdir()
    (listed / "config.json").write_text('{"algorithm": "ppo", "config": {"game": ["x"]}}')
    cases = [
        (train_args(str(a_file), "x"), "is a file, not a directory"),
        (train_args(runs, ""), "invalid --run-name=''"),
        (train_args(runs, "../escape"), "invalid --run-name='../escape'"),
        (train_args(runs, "x", "--net.hidden=1000000", "--net.layers=3"), "of memory"),
        (train_args(runs, "x", "--net.layers=100000"), "at most"),
        (
            [
                "eval",
                "--game",
                "tic_tac_toe",
                "--a",
                "random",
                "--json",
                str(tmp_path / "no/x.json"),
            ],
            "does not exist",
        ),
        (["eval", "--game", "tic_tac_toe", "--a", "random", "--json", runs], "is a directory"),
        (train_args(runs, "x", "--seed", str(2**70)), "invalid seed="),
        (train_args(runs, "x", "--num-envs=1000000000"), "invalid num_envs="),
        (["eval", "--game", "tic_tac_toe", "--a", "random", "--seed", str(2**70)], "--seed"),
        (["play", "--game", "tic_tac_toe", "--seed", str(2**40)], "--seed"),
        (["rate", "random", "--game", "tic_tac_toe", "--ladder", runs], "cannot be read"),
        (["rate", "random", "--game", "tic_tac_toe", "--ladder", str(ladder)], "no field 'rungs'"),
        (["eval", "--a", str(listed), "--b", "random"], "invalid game=\"['x']\""),
        (["eval", "--game", "tic_tac_toe", "--a", "alphabeta:99999999999"], "at most 12"),
        (["eval", "--game", "tic_tac_toe", "--a", "minimax:12"], "at most 8"),
        (
            ["eval", "--game", "tic_tac_toe", "--a", "random", "--opening-plies", "50"],
            "must be less than a game's length",
        ),
    ]
    for argv, fragment in cases:
        rc, _, err = run_cli(capsys, argv)
        assert rc == 2 and fragment in err and err.count("\n") == 1, (argv, err)
    assert not os.path.exists(os.path.join(runs, "x")) and not os.path.exists(tmp_path / "escape")
    # a 10 MB move line: the message quotes a little of it, on one line
    record = tmp_path / "huge.txt"
    record.write_text("game: tic_tac_toe\n\n" + "b" * 10_000_000 + "\n")
    rc, _, err = run_cli(capsys, ["replay", str(record), "--auto"])
    assert rc == 2 and err.count("\n") == 1 and len(err) < 1000, len(err)
    assert "(10,000,000 characters)" in err


# ----------------------------------------------------------------------------- written paths
def test_outputs_never_overwrite_saved_data(ref, tmp_path, capsys, monkeypatch):
    """Every command that writes refuses, before any work, a run's own files, the input it
    reads, a path that cannot be created and (without --force) an existing file; each such
    probe used to overwrite saved data with exit 0 or end in a traceback."""
    from jaxgames.cli import eval as eval_cli

    run_dir = copy_run(ref[0], tmp_path)
    before = tree_bytes(run_dir)
    record = tmp_path / "rec.txt"
    record.write_text("game: tic_tac_toe\n\nb2 a1\n")
    ttt = ["--game", "tic_tac_toe", "--games", "2"]
    cases = [
        (["eval", "--a", run_dir, "--games", "2", "--json", f"{run_dir}/config.json"], "inside"),
        (
            [
                "rate",
                run_dir,
                "--games-per-rung",
                "2",
                "--rungs",
                "random",
                "--json",
                f"{run_dir}/metrics.jsonl",
            ],
            "inside",
        ),  # fmt: skip
        (
            ["match", run_dir, "random", "--games", "1", "--json", f"{run_dir}/checkpoints/x"],
            "inside",
        ),  # fmt: skip
        (["export", run_dir, f"{run_dir}/checkpoints/99"], "inside"),
        (["export", run_dir, f"{run_dir}/exported"], "inside"),  # a new folder too
        (["export", run_dir, run_dir], "is the run or agent folder"),
        (["export", run_dir, "/proc/exp"], "cannot write in folder '/proc'"),
        (["export", run_dir, ""], "give a folder name"),
        (["export", run_dir, str(tmp_path / "e"), "--name", ""], "invalid --name=''"),
        (["export", run_dir, str(tmp_path / "e"), "--name", " x"], "invalid --name=' x'"),
        (["render", str(record), "--svg", str(record)], "is the input being read"),
        (["render", str(record), "--svg", f"{run_dir}/learning_curve.png"], "inside"),
        (["replay", str(record), "--svg", f"{run_dir}/checkpoints"], "inside"),
        (train_args(f"{run_dir}/checkpoints", "x"), "--runs-dir"),
        (train_args("/proc/nope", "x"), "cannot write in folder '/proc'"),
        (["eval", "--a", "random", *ttt, "--json", "/proc/x.json"], "cannot write in folder"),
        (["eval", "--a", "random", *ttt, "--json", str(record)], "exists; add --force"),
        (["render", str(record), "--grid", str(record)], "is the input being read"),
    ]
    # refused before any game is played: the evaluation must not start
    monkeypatch.setattr(eval_cli, "arena", lambda *a, **k: pytest.fail("evaluated first"))
    for argv, fragment in cases:
        rc, _, err = run_cli(capsys, argv)
        assert rc == 2 and fragment in err and err.count("\n") == 1, (argv, err)
    assert tree_bytes(run_dir) == before
    assert record.read_text() == "game: tic_tac_toe\n\nb2 a1\n"
    assert not (tmp_path / "e").exists()
    monkeypatch.undo()
    # a new file of its own name beside a run's files is fine; an existing one needs --force
    out = f"{run_dir}/eval.json"
    assert run_cli(capsys, ["eval", "--a", "random", *ttt, "--json", out])[0] == 0
    assert run_cli(capsys, ["eval", "--a", "random", *ttt, "--json", out])[0] == 2
    assert run_cli(capsys, ["eval", "--a", "random", *ttt, "--json", out, "--force"])[0] == 0
    # export --force still replaces an exported agent (and only that)
    exported = str(tmp_path / "agent")
    assert run_cli(capsys, ["export", run_dir, exported])[0] == 0
    assert run_cli(capsys, ["export", run_dir, exported])[0] == 2
    assert run_cli(capsys, ["export", run_dir, exported, "--force"])[0] == 0


def test_the_input_is_refused_as_an_output_however_it_is_spelt(tmp_path, monkeypatch):
    """The record being read is refused as an output, even with --force, whether the output
    names it relatively, through '..' or through a symlink (the real paths are compared);
    another existing file is fine with --force."""
    record = tmp_path / "rec.txt"
    record.write_text("game: tic_tac_toe\n\nb2 a1\n")
    (tmp_path / "sub").mkdir()
    os.symlink(record, tmp_path / "link.txt")
    monkeypatch.chdir(tmp_path)
    for out in ("rec.txt", str(tmp_path / "sub" / ".." / "rec.txt"), str(tmp_path / "link.txt")):
        with pytest.raises(ValueError, match="is the input being read"):
            check_output_path(out, "--svg", force=True, inputs=[str(record)])
    (tmp_path / "other.txt").write_text("x")
    check_output_path(str(tmp_path / "other.txt"), "--svg", force=True, inputs=[str(record)])


def test_an_exported_agents_files_are_never_overwritten(tmp_path):
    """A folder with config.json and the parameters file (an exported agent: no metrics, no
    checkpoints) is a run folder: its files are refused even with --force, a new file beside
    them is fine; config.json alone does not make a folder a run."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / CONFIG_FILE).write_text("{}")
    (agent / PARAMS_FILE).write_bytes(b"\0")
    assert is_run_folder(str(agent))
    for name in (PARAMS_FILE, CONFIG_FILE):
        with pytest.raises(ValueError, match="inside the run or agent folder"):
            check_output_path(str(agent / name), "--json", force=True)
    check_output_path(str(agent / "eval.json"), "--json")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / CONFIG_FILE).write_text("{}")
    assert not is_run_folder(str(plain))


def test_play_save_never_replaces_another_file(tmp_path):
    """``save FILE`` in ``play`` writes a new file or one this session saved, nothing else."""
    import io

    from jaxgames.terminal import TerminalGame

    other = tmp_path / "other.txt"
    other.write_text("keep me")
    mine = tmp_path / "mine.txt"
    script = f"b2\nsave {mine}\nsave {mine}\nsave {other}\nquit\n"
    stdout = io.StringIO()
    game = TerminalGame(
        jaxgames.make("tic_tac_toe"), "random", 0, stdin=io.StringIO(script), stdout=stdout
    )
    game.run()
    text = stdout.getvalue()
    assert text.count(f"to {mine}") == 2 and "exists; choose another name" in text
    assert other.read_text() == "keep me" and "game: tic_tac_toe" in mine.read_text()


# ----------------------------------------------------------------------------- bounds, options
def test_out_of_range_values_are_refused_before_a_run_exists(ref, tmp_path, capsys):
    """Integers past what jitted code counts, conflicting or empty options: one line naming the
    field and its range, exit 2, and no run directory, so the corrected command then runs."""
    runs = str(tmp_path)
    record = tmp_path / "rec.txt"
    record.write_text("game: tic_tac_toe\n\nb2 a1\n")
    ev = ["eval", "--games", "2", "--a", "random"]
    cases = [
        (train_args(runs, "x", "--total-steps", "9" * 23), "invalid total_steps=" + "9" * 23),
        (train_args(runs, "x", "--update-epochs=2147483647"), "optimiser steps"),
        (train_args(runs, "x", "--num-steps=99999999999"), "must be at most 2147483647"),
        (train_args(runs, "x", "--devices", "0"), "invalid --devices='0'"),
        (train_args(runs, "x", "--devices", "-1"), "invalid --devices='-1'"),
        (train_args(runs, "x", "--game-option", "size=4", "--size", "6"), "give it once"),
        (
            [*ev, "--game", "animal_shogi", "--game-option", "max_steps=99999999999"],
            "invalid max_steps=99999999999: must be an integer in 1..65536",
        ),  # fmt: skip
        ([*ev, "--game", "reversi", "--size", "6", "--game-option", "size=8"], "give it once"),
        (
            [*ev, "--game", "reversi", "--game-option", "size=6", "--game-option", "size=8"],
            "given twice",
        ),  # fmt: skip
        (["eval", "--game", "tic_tac_toe", "--a", " random"], "leading or trailing spaces"),
        (["eval", "--game", "tic_tac_toe", "--a", "random", "--b", "greedy "], "spaces"),
        ([*ev, "--game", "tic_tac_toe", "--games", str(2**40)], "invalid --games="),
        (
            ["rate", "random", "--game", "tic_tac_toe", "--games-per-rung", str(2**40)],
            "invalid --games-per-rung=",
        ),  # fmt: skip
        (
            ["render", str(record), "--animate", str(tmp_path / "a.svg"), "--seconds", "inf"],
            "invalid --seconds=inf",
        ),  # fmt: skip
        (
            ["render", str(record), "--animate", str(tmp_path / "a.svg"), "--seconds", "nan"],
            "invalid --seconds=nan",
        ),  # fmt: skip
        (
            ["render", str(record), "--grid", str(tmp_path / "g.svg"), "--every", str(2**40)],
            "invalid --every=",
        ),  # fmt: skip
    ]
    for argv, fragment in cases:
        rc, _, err = run_cli(capsys, argv)
        assert rc == 2 and fragment in err and err.count("\n") == 1, (argv, err)
    assert os.listdir(tmp_path) == ["rec.txt"]
    with pytest.raises(ValueError, match="max_steps"):
        jaxgames.make("animal_shogi", max_steps=2**40)
    # the corrected command is not refused as a "different config"
    bad = train_args(runs, "fixed", "--total-steps", "9" * 23)
    assert run_cli(capsys, bad)[0] == 2 and not os.path.exists(os.path.join(runs, "fixed"))
    rc, _, err = run_cli(capsys, train_args(runs, "fixed"))
    assert rc == 0, err


def test_file_system_errors_are_one_line_naming_the_path(ref, tmp_path, capsys, monkeypatch):
    """Unreadable records and ladders, and a run directory that stops accepting writes mid-run,
    end in one ``error:`` line naming the file; the rerun then finishes as the reference."""
    from jaxgames.runs import metrics

    binary = tmp_path / "image.txt"
    binary.write_bytes(b"\x89PNG\xa4\x00\xff")
    for argv in (
        ["replay", str(binary), "--auto"],
        ["render", str(binary)],
        ["play", "--load", str(binary)],
    ):
        rc, _, err = run_cli(capsys, argv)
        assert rc == 2 and str(binary) in err and "not a text game record" in err, (argv, err)
        assert err.count("\n") == 1
    rc, _, err = run_cli(capsys, ["replay", str(tmp_path / "missing.txt"), "--auto"])
    assert rc == 2 and "missing.txt" in err and err.count("\n") == 1
    rc, _, err = run_cli(capsys, ["rate", "random", "--game", "tic_tac_toe", "--ladder",
                                  "/nonexistent.json"])  # fmt: skip
    assert rc == 2 and "no ladder file '/nonexistent.json'" in err and "tic_tac_toe" in err
    assert "proc" not in err  # not the files of / as "packaged ladders"
    # the run's folder refuses writes after chunk 2's metrics (root ignores chmod: patched)
    runs = str(tmp_path)
    append = metrics.MetricsLog.append

    def refused(self, record):
        if record["chunk"] == 3:
            raise PermissionError(13, "Permission denied", self.path)
        return append(self, record)

    monkeypatch.setattr(metrics.MetricsLog, "append", refused)
    rc, _, err = run_cli(capsys, train_args(runs, "ro"))
    assert rc == 2 and err.count("\n") == 1, err
    assert "metrics.jsonl" in err and "Permission denied" in err
    monkeypatch.undo()
    rc, _, err = run_cli(capsys, train_args(runs, "ro"))
    assert rc == 0, err
    assert same_leaves(params_of(os.path.join(runs, "ro"))[1], ref[1])


def test_ctrl_c_while_starting_up_exits_cleanly(cache_dir):
    """Ctrl-C in the first second of ``play`` (while JAX is being imported) gives exit 130 and
    one line, never a traceback from half-imported extension modules."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxgames.cli", "play", "--game", "tic_tac_toe"],
        env=env_vars(cache_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # interrupt while the heavy imports run: once numpy is loaded (Linux: its library shows in
    # the process's memory map), else after a moment
    maps = f"/proc/{proc.pid}/maps"
    deadline = time.monotonic() + (60 if os.path.exists(maps) else 0.5)
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with open(maps) as f:
                if "numpy" in f.read():
                    break
        except OSError:
            pass
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "interrupted"


def test_metrics_log_reading_rules(tmp_path):
    from jaxgames.runs.metrics import MetricsError, MetricsLog

    log = MetricsLog(str(tmp_path))
    good = ['{"chunk": 1, "x": 0.5}', '{"chunk": 2, "x": NaN}']
    cases = [
        ("\n".join(good) + "\n", [1, 2]),
        ("\n".join(good), [1, 2]),  # a complete last record without its newline is kept
        ("\n".join(good) + '\n{"chunk": 3, "x"', [1, 2]),  # torn by a kill: dropped
        ("\n".join(good) + "\n\n", [1, 2]),
    ]
    for text, chunks in cases:
        (tmp_path / "metrics.jsonl").write_text(text)
        assert [r["chunk"] for r in log.records()] == chunks
    for text, why in [
        (good[0] + "\n{broken\n" + good[1] + "\n", "line 2, is damaged (not JSON"),
        (good[1] + "\n" + good[0] + "\n", "chunk 1 after chunk 2"),
        ("[1, 2]\n" + good[1] + "\n", "not a JSON object"),
        ('{"x": 1}\n' + good[1] + "\n", "no integer 'chunk'"),
        ("x" * 10_000_000 + "\n" + good[1] + "\n", "(10,000,000 characters)"),
    ]:
        (tmp_path / "metrics.jsonl").write_text(text)
        with pytest.raises(MetricsError, match=re.escape(why)) as info:
            log.truncate(5)
        assert len(str(info.value)) < 1000
        assert (tmp_path / "metrics.jsonl").read_text() == text  # nothing rewritten


def test_lock_is_exclusive_within_a_process_too(tmp_path):
    from jaxgames.runs.lock import RunLock, RunLockedError

    with RunLock(str(tmp_path)):
        with pytest.raises(RunLockedError, match=f"in use by process {os.getpid()}"):
            RunLock(str(tmp_path)).acquire()
    assert not os.listdir(tmp_path)
    with RunLock(str(tmp_path)) as lock:  # free again after release
        assert lock.held and lock.stale_pid is None
    # a lock file a process on another machine left (a shared folder): named as such
    (tmp_path / ".lock").write_text("pid=4242\nhost=elsewhere\nsince=2026-01-01\n")
    with RunLock(str(tmp_path)) as lock:
        assert (lock.stale_pid, lock.stale_host) == (4242, "elsewhere")


def test_orbax_noise_filters_drop_only_the_noise(monkeypatch):
    """The three ways a failed tensorstore read's leftovers reach the user, each dropped only
    when it is that noise: a worker thread's "Event loop is closed" through sys.excepthook
    (the main thread's still shows), the same error as an unraisable, and asyncio's
    "Task/Future exception was never retrieved" about the read's DATA_LOSS."""
    seen = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, value, tb: seen.append(("hook", value)))
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(("unraisable", u.exc_value)))
    checkpoint._drop_orbax_noise()
    closed, other = RuntimeError("Event loop is closed"), RuntimeError("something else")

    def from_worker(value):
        t = threading.Thread(target=lambda: sys.excepthook(type(value), value, None))
        t.start()
        t.join()

    from_worker(closed)
    from_worker(other)
    sys.excepthook(type(closed), closed, None)  # main thread: not the read's noise
    for value in (closed, other):
        sys.unraisablehook(type("U", (), {"exc_value": value})())
    assert seen == [("hook", other), ("hook", closed), ("unraisable", other)]
    # an orbax array read left unfinished (its coroutine, by name), and only that
    seen.clear()

    async def _read_array_index_and_device_put():
        pass

    async def mine():
        pass

    for coro in (_read_array_index_and_device_put(), mine()):
        sys.unraisablehook(type("U", (), {"exc_value": other, "object": coro})())
        coro.close()
    assert seen == [("unraisable", other)]

    log = logging.getLogger("asyncio")
    keep = [f for f in log.filters if isinstance(f, checkpoint._UnretrievedReadErrors)]
    assert len(keep) == 1

    def passes(msg: str) -> bool:
        return keep[0].filter(logging.LogRecord("asyncio", 40, "", 0, msg, None, None))

    assert not passes("Task exception was never retrieved\nfuture: <Task ... DATA_LOSS: ...>")
    assert not passes("Future exception was never retrieved\nfuture: <tensorstore.Future>")
    assert passes("Task exception was never retrieved\nfuture: <Task ... ValueError('mine')>")
    assert passes("Unclosed client session")


def test_ctrl_c_during_a_save_lets_it_finish(tmp_path):
    """SIGINT while a checkpoint is written: the save completes (the step restores), then
    KeyboardInterrupt; nothing of the write is left half-way for orbax's threads."""
    store = checkpoint.CheckpointStore(str(tmp_path / "ckpt"), keep=2)
    tree = {"w": jnp.arange(6.0), "n": jnp.int32(3)}
    manager_save = store._manager.save

    def save_then_interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # arrives in the middle of the write
        return manager_save(*args, **kwargs)

    store._manager.save = save_then_interrupted
    with pytest.raises(KeyboardInterrupt):
        store.save(1, tree)
    assert store.steps() == [1]
    restored = store.restore(1, tree)
    np.testing.assert_array_equal(restored["w"], tree["w"])
    store.close()


def test_ctrl_c_during_one_seeds_save_lets_every_seed_save(tmp_path, monkeypatch):
    """SIGINT while the first of two seeds' checkpoints of a chunk is written: the driver
    lets both seeds save the chunk, then stops (one seed's chunk alone would be a seed ahead
    of the others, moved aside on resume)."""
    from jaxgames.agents import ppo

    save = checkpoint.CheckpointStore.save
    sent = []

    def save_then_interrupted(self, step, tree):
        if not sent:
            sent.append(step)
            os.kill(os.getpid(), signal.SIGINT)
        return save(self, step, tree)

    monkeypatch.setattr(checkpoint.CheckpointStore, "save", save_then_interrupted)
    config = ppo.PPOConfig(**TINY_FIELDS, total_steps=64)
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        driver.run_training("ppo", config, str(run_dir), seeds=[0, 1], progress=False)
    steps = [os.listdir(run_dir / f"seed{s}" / "checkpoints") for s in (0, 1)]
    assert sent == [1] and steps == [["1"], ["1"]]


# the perfect animal-shogi player (a host callback) judged move by move on a one-CPU machine
ONE_CPU_ACCURACY = """
import os, sys
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
sys.path.insert(0, sys.argv[1])
import jaxgames
from jaxgames.evaluation import animal_shogi_solver as solver
from jaxgames.evaluation.accuracy import move_accuracy
from test_animal_shogi_solver import endgame_starts
table, env, starts = endgame_starts()
perfect = solver.perfect_policy(table)
rand = lambda key, state: jaxgames.random_action(key, state.legal_action_mask)
out = move_accuracy(perfect, rand, env, table, starts=starts)
print("moves", out["overall"]["moves"])
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity")
def test_move_accuracy_finishes_on_one_cpu():
    """A player that calls the host (the solved table's perfect player) judged move by move
    in a process pinned to one CPU, with the suite's compile flags: importing jaxgames made
    JAX's CPU dispatch synchronous there (core: under asynchronous dispatch the callback
    waited for good on the worker its own computation held)."""
    tests = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, "-c", ONE_CPU_ACCURACY, tests]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, cwd=REPO)
    except subprocess.TimeoutExpired:
        pytest.fail("move_accuracy hung on one CPU")
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"moves [1-9]", done.stdout), done.stdout
