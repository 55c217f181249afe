"""Optional mirrors of a run's metrics: TensorBoard and Weights & Biases (offline by default).

``metrics.jsonl`` stays the source of truth; a logger copies each chunk's record elsewhere
after the chunk's checkpoint, one scalar per field at x = env_steps. Loggers are not part of
the config: a logger joining a resumed run late first writes the records already there, and
after a resume from an older checkpoint TensorBoard's ``purge_step`` replaces the recomputed
points. W&B keeps one run per jaxgames run (id in ``<run>/wandb/jaxgames-run-id``;
``WANDB_MODE``, default ``offline``). A missing library is a one-line
:class:`~jaxgames.validation.MissingExtraError` before training.
"""

from __future__ import annotations

import glob
import os
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


class TensorBoardLogger:
    """Scalars to ``<run_dir>/tensorboard/`` with tensorboardX (see the module docstring)."""

    def __init__(self, run_dir: str, history: list[dict[str, Any]], last_step: int):
        tbx = _library("tensorboard")
        self.directory = os.path.join(run_dir, "tensorboard")
        existing = glob.glob(os.path.join(self.directory, "events.out.tfevents.*"))
        joined = not existing
        # points after the restored checkpoint are being computed again: hide the old ones
        purge = None if joined else last_step + 1
        # tensorboardX names files by the second: each writer gets its own index
        self.writer = tbx.SummaryWriter(
            self.directory,
            purge_step=purge,
            flush_secs=30,
            filename_suffix=f".{len(existing)}",
        )
        if joined:
            for record in history:
                self.write(record)

    def write(self, record: dict[str, Any]) -> None:
        step = int(record["env_steps"])
        for tag, value in _scalars(record).items():
            self.writer.add_scalar(tag, value, global_step=step, walltime=record.get("time"))
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class WandbLogger:
    """One W&B run per jaxgames run (module docstring)."""

    def __init__(self, run_dir: str, history: list[dict[str, Any]], config: dict[str, Any]) -> None:
        wandb = _library("wandb")
        directory = os.path.join(run_dir, "wandb")
        os.makedirs(directory, exist_ok=True)
        id_file = os.path.join(directory, "jaxgames-run-id")
        joined = not os.path.exists(id_file)
        if joined:
            with open(id_file, "w") as f:
                f.write(secrets.token_hex(8))
        with open(id_file) as f:
            run_id = f.read().strip()
        self.run = wandb.init(
            dir=run_dir,
            id=run_id,
            resume="allow",
            project=os.environ.get("WANDB_PROJECT", "jaxgames"),
            name=os.path.basename(os.path.normpath(run_dir)),
            config=config,
            mode=os.environ.get("WANDB_MODE", "offline"),
            settings=wandb.Settings(console="off", silent=True),
        )
        if joined:
            for record in history:
                self.write(record)

    def write(self, record: dict[str, Any]) -> None:
        self.run.log(_scalars(record), step=int(record["env_steps"]))

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
                out.append(WandbLogger(run_dir, history, config))
    except BaseException:
        for logger in out:
            logger.close()
        raise
    return out
