"""Optional metric loggers (TensorBoard, W&B offline): read back with the real writers' formats,
resumed with another --logger choice, and a one-line error when a library is missing."""

from __future__ import annotations

import glob
import json
import os
import struct
import sys
import types

import pytest
from tiny_configs import TINY_PPO

from jaxgames.cli import main
from jaxgames.runs.metrics import MetricsLog
from jaxgames.training.driver import run_training
from jaxgames.training.loggers import parse_loggers
from jaxgames.validation import MissingExtraError

CFG = TINY_PPO


def read_events(directory: str) -> list:
    """Every event of the TFRecord files in ``directory`` (oldest first), with both CRCs
    checked: a minimal reader over tensorboardX's own protobuf classes, no TensorFlow."""
    from tensorboardX.crc32c import crc32c
    from tensorboardX.proto.event_pb2 import Event

    def masked(data: bytes) -> int:
        crc = crc32c(data)
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    events = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        data, i = open(path, "rb").read(), 0
        while i < len(data):
            header = data[i : i + 8]
            (n,) = struct.unpack("<Q", header)
            assert struct.unpack("<I", data[i + 8 : i + 12])[0] == masked(header)
            body = data[i + 12 : i + 12 + n]
            assert struct.unpack("<I", data[i + 12 + n : i + 16 + n])[0] == masked(body)
            events.append(Event.FromString(body))
            i += 16 + n
    return events


def scalars(events: list) -> dict[tuple[str, int], float]:
    """(tag, step) -> value, later events replacing earlier ones; a purge (SessionLog START at
    step p) hides earlier points at steps >= p, as TensorBoard does."""
    out: dict[tuple[str, int], float] = {}
    for ev in events:
        if ev.HasField("session_log") and ev.session_log.status == ev.session_log.START:
            out = {k: v for k, v in out.items() if k[1] < ev.step}
        for v in ev.summary.value:
            out[(v.tag, ev.step)] = v.simple_value
    return out


def test_tensorboard_and_wandb_mirror_the_jsonl(tmp_path, monkeypatch):
    tbx_writer = pytest.importorskip("tensorboardX.event_file_writer")
    # tensorboardX names its files by the second: freeze its clock so that the resumed writer
    # starts "in the same second" as the first one (a fast machine does), which must not
    # overwrite the first file
    monkeypatch.setattr(tbx_writer, "time", types.SimpleNamespace(time=lambda: 1.7e9))
    run_dir = str(tmp_path / "run")
    run_training("ppo", CFG, run_dir, progress=False, max_chunks=2, loggers="jsonl,tensorboard")
    # the newest checkpoint is lost: chunk 2 is computed again on resume, and the resumed call
    # adds wandb (a logger choice is no training parameter: the run's config is unchanged)
    ckpts = sorted(os.listdir(os.path.join(run_dir, "checkpoints")), key=int)
    os.rename(*(os.path.join(run_dir, "checkpoints", c) for c in (ckpts[-1], "moved")))
    have_wandb = True
    try:
        import wandb  # noqa: F401
    except ImportError:
        have_wandb = False
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    extra = ["wandb"] if have_wandb else []
    summary = run_training("ppo", CFG, run_dir, progress=False, loggers=["tensorboard", *extra])
    assert summary.completed and summary.chunks_run == 3  # chunks 2, 3, 4

    records = MetricsLog(run_dir).records()
    assert [r["chunk"] for r in records] == [1, 2, 3, 4]
    points = scalars(read_events(os.path.join(run_dir, "tensorboard")))
    expected = {
        (k, r["env_steps"]): v
        for r in records
        for k, v in r.items()
        if k not in ("chunk", "env_steps", "time")
    }
    assert set(points) == set(expected)
    for key, value in expected.items():  # float32 in the event file
        assert points[key] == pytest.approx(value, rel=1e-6, abs=1e-6), key

    if not have_wandb:
        pytest.skip("wandb is not installed: the TensorBoard half ran")
    runs = glob.glob(os.path.join(run_dir, "wandb", "offline-run-*", "run-*.wandb"))
    run_id = open(os.path.join(run_dir, "wandb", "jaxgames-run-id")).read().strip()
    assert len(runs) == 1 and runs[0].endswith(f"run-{run_id}.wandb")
    data = open(runs[0], "rb").read()
    # W&B's transaction log holds each history row's keys and JSON values: the backfilled
    # chunk 1 and the chunks of this call
    for r in records:
        assert json.dumps(r["train/loss"]).encode() in data
    assert b"eval/win_first" in data and b"tic_tac_toe" in data  # a metric, the config


def test_missing_library_is_one_line_naming_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # import fails as if not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'jaxgames\[loggers\]'"):
        parse_loggers("jsonl,tensorboard")
    run_dir = tmp_path / "never"
    argv = ["train", "ppo", "--runs-dir", str(tmp_path), "--run-name", "never", "--no-progress"]
    assert main([*argv, "--logger", "tensorboard"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "jaxgames[loggers]" in err and "tensorboardX" in err
    assert main([*argv, "--logger", "jsonl,tensorbord"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: invalid --logger='tensorbord'") and err.count("\n") == 1
    assert not run_dir.exists()  # nothing written
    assert parse_loggers("jsonl") == parse_loggers(["jsonl"]) == ()


@pytest.mark.parametrize("cut", [1, 2])
def test_a_mirror_cut_off_catches_up_on_resume(tmp_path, monkeypatch, cut):
    """Ctrl-C (or a kill) after a chunk's checkpoint and before its mirror's write (the
    first, when the mirror's file exists and holds nothing, or a later one): the resumed
    run's TensorBoard mirror writes the record it missed (its mark says how far it got), so
    it ends with every record of metrics.jsonl."""
    pytest.importorskip("tensorboardX")
    from jaxgames.training import loggers

    write = loggers.TensorBoardLogger.write

    def cut_off(self, record):
        if record["chunk"] == cut:
            raise KeyboardInterrupt
        write(self, record)

    run_dir = str(tmp_path / "run")
    monkeypatch.setattr(loggers.TensorBoardLogger, "write", cut_off)
    with pytest.raises(KeyboardInterrupt):
        run_training("ppo", CFG, run_dir, progress=False, loggers="tensorboard")
    monkeypatch.setattr(loggers.TensorBoardLogger, "write", write)
    assert run_training("ppo", CFG, run_dir, progress=False, loggers="tensorboard").completed
    records = MetricsLog(run_dir).records()
    steps = {step for _, step in scalars(read_events(os.path.join(run_dir, "tensorboard")))}
    assert [r["chunk"] for r in records] == [1, 2, 3, 4]
    assert steps == {r["env_steps"] for r in records}


def test_wandb_failing_to_start_is_one_line(tmp_path, monkeypatch):
    """W&B refusing its run (here a WANDB_MODE it does not know) is one ValueError line
    naming WANDB_MODE; a run-id file left empty (a kill while it was written) gets a new id."""
    pytest.importorskip("wandb")
    from jaxgames.training.loggers import WandbLogger

    run_dir = tmp_path / "run"
    (run_dir / "wandb").mkdir(parents=True)
    (run_dir / "wandb" / "jaxgames-run-id").write_text("")
    monkeypatch.setenv("WANDB_MODE", "bogus")
    with pytest.raises(ValueError, match="--logger wandb could not start its run .WANDB_MODE="):
        WandbLogger(str(run_dir), [], 0, {})
    run_id = (run_dir / "wandb" / "jaxgames-run-id").read_text()
    assert len(run_id) == 16 and int(run_id, 16) >= 0
    # the retry writes the history: the failed start wrote none of it
    assert (run_dir / "wandb" / "jaxgames-last-step").read_text() == "-1"
