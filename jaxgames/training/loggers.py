"""Optional mirrors of a run's metrics: TensorBoard and Weights & Biases (offline by default).

``metrics.jsonl`` stays the source of truth; a logger copies each chunk's record elsewhere
after the chunk's checkpoint, one scalar per field at x = env_steps. Loggers are not part of
the config: a logger joining a resumed run late first writes the records already there, one
cut off (a kill between a chunk's save and its mirror's write) catches up from its mark
(:data:`MARK_FILE`), and after a resume from an older checkpoint TensorBoard's ``purge_step``
replaces the recomputed points. W&B keeps one run per jaxgames run (id in
``<run>/wandb/jaxgames-run-id``; ``WANDB_MODE``, default ``offline``). A missing library is a
one-line :class:`~jaxgames.validation.MissingExtraError` before training; W&B failing to start
its run (no API key online, a bad ``WANDB_MODE``) a one-line ``ValueError``.
"""

from __future__ import annotations

import glob
import os
import re
import secrets
from typing import Any, Protocol, Sequence

from jaxgames.validation import check_choice, require

#: every accepted ``--logger`` name; ``jsonl`` is always on
LOGGERS = ("jsonl", "tensorboard", "wandb")
#: record fields that are the x axis or bookkeeping, not curves
_NOT_SCALARS = ("chunk", "env_steps", "time")


class Logger(Protocol):
    """Receives each chunk's metrics record (``{"chunk": k, "env_steps": ..., ...}``)."""

    def write(self, record: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


def parse_loggers(text: str | Sequence[str]) -> tuple[str, ...]:
    """``"jsonl,tensorboard"`` (or a list) -> the optional loggers, e.g. ``("tensorboard",)``
    (``jsonl`` is implied); ``ValueError`` for an unknown name or a missing library."""
    names = text.split(",") if isinstance(text, str) else list(text)
    out: list[str] = []
    for name in (n.strip() for n in names):
        check_choice("--logger", name, LOGGERS)
        if name != "jsonl" and name not in out:
            out.append(name)
    for name in out:
        _library(name)
    return tuple(out)


def _library(name: str) -> Any:
    if name == "tensorboard":
        return require("tensorboardX", "loggers", "--logger tensorboard")
    return require("wandb", "loggers", "--logger wandb")


def _scalars(record: dict[str, Any]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in record.items()
        if k not in _NOT_SCALARS and isinstance(v, (int, float)) and not isinstance(v, bool)
    }


#: in each mirror's folder: the env step of the last record it wrote (a mirror cut off by an
#: interrupt or a kill between a chunk's save and its write catches up from it on resume)
MARK_FILE = "jaxgames-last-step"


def _replace_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _written_up_to(directory: str, started: bool, last_step: int) -> int:
    """The env step up to which the mirror in ``directory`` holds the run's records, and the
    mark set to it before the mirror's files are opened (a kill before its first write then
    leaves the mark, not a mirror taken for whole): its mark; a mirror ``started`` (its files
    exist) without a mark counts as whole; one not started: -1. At most ``last_step`` (points
    after the restored checkpoint are computed again)."""
    written = -1
    if started:
        try:
            with open(os.path.join(directory, MARK_FILE)) as f:
                written = int(f.read().strip())
        except (OSError, ValueError):  # files without a mark: counted as whole
            written = last_step
    written = min(written, last_step)
    os.makedirs(directory, exist_ok=True)
    _replace_text(os.path.join(directory, MARK_FILE), str(written))
    return written


class TensorBoardLogger:
    """Scalars to ``<run_dir>/tensorboard/`` with tensorboardX (see the module docstring)."""

    def __init__(self, run_dir: str, history: list[dict[str, Any]], last_step: int):
        tbx = _library("tensorboard")
        self.directory = os.path.join(run_dir, "tensorboard")
        existing = glob.glob(os.path.join(self.directory, "events.out.tfevents.*"))
        written = _written_up_to(self.directory, bool(existing), last_step)
        # points after the restored checkpoint are being computed again: hide the old ones
        purge = None if not existing else last_step + 1
        # tensorboardX names files by the second: each writer gets its own index
        self.writer = tbx.SummaryWriter(
            self.directory,
            purge_step=purge,
            flush_secs=30,
            filename_suffix=f".{len(existing)}",
        )
        for record in history:  # those the mirror lacks: all when it joins the run late
            if int(record["env_steps"]) > written:
                self.write(record)

    def write(self, record: dict[str, Any]) -> None:
        step = int(record["env_steps"])
        for tag, value in _scalars(record).items():
            self.writer.add_scalar(tag, value, global_step=step, walltime=record.get("time"))
        self.writer.flush()
        _replace_text(os.path.join(self.directory, MARK_FILE), str(step))

    def close(self) -> None:
        self.writer.close()


class WandbLogger:
    """One W&B run per jaxgames run (module docstring)."""

    def __init__(
        self, run_dir: str, history: list[dict[str, Any]], last_step: int, config: dict[str, Any]
    ) -> None:
        wandb = _library("wandb")
        self.directory = os.path.join(run_dir, "wandb")
        os.makedirs(self.directory, exist_ok=True)
        id_file = os.path.join(self.directory, "jaxgames-run-id")
        try:
            with open(id_file) as f:
                run_id = f.read().strip()
        except FileNotFoundError:
            run_id = ""
        started = re.fullmatch(r"[0-9a-f]{16}", run_id) is not None
        written = _written_up_to(self.directory, started, last_step)
        if not started:  # none yet, or cut off while written: a new W&B run
            run_id = secrets.token_hex(8)
            _replace_text(id_file, run_id)
        mode = os.environ.get("WANDB_MODE", "offline")
        try:
            self.run = wandb.init(
                dir=run_dir,
                id=run_id,
                resume="allow",
                project=os.environ.get("WANDB_PROJECT", "jaxgames"),
                name=os.path.basename(os.path.normpath(run_dir)),
                config=config,
                mode=mode,
                settings=wandb.Settings(console="off", silent=True),
            )
        except Exception as e:  # wandb's own errors (no API key, a bad mode): one line
            why = " ".join(str(e).split())[:300] or type(e).__name__
            raise ValueError(
                f"--logger wandb could not start its run (WANDB_MODE={mode!r}, WANDB_PROJECT="
                f"{os.environ.get('WANDB_PROJECT', 'jaxgames')!r}): {why}"
            ) from None
        for record in history:  # those the mirror lacks: all when it joins the run late
            if int(record["env_steps"]) > written:
                self.write(record)

    def write(self, record: dict[str, Any]) -> None:
        step = int(record["env_steps"])
        self.run.log(_scalars(record), step=step)
        _replace_text(os.path.join(self.directory, MARK_FILE), str(step))

    def close(self) -> None:
        self.run.finish()


def open_loggers(
    names: Sequence[str],
    run_dir: str,
    history: list[dict[str, Any]],
    last_step: int,
    config: dict[str, Any],
) -> list[Logger]:
    """The loggers ``names`` for ``run_dir``, resuming after ``history`` (up to env step
    ``last_step``); ``config``: the run's ``config.json`` record."""
    out: list[Logger] = []
    try:
        for name in names:
            check_choice("logger", name, LOGGERS[1:])
            if name == "tensorboard":
                out.append(TensorBoardLogger(run_dir, history, last_step))
            else:
                out.append(WandbLogger(run_dir, history, last_step, config))
    except BaseException:
        for logger in out:
            logger.close()
        raise
    return out
