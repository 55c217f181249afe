"""Optional mirrors of a run's metrics: TensorBoard and Weights & Biases (offline by default).

``metrics.jsonl`` stays the source of truth and is always written
(:mod:`jaxgames.runs.metrics`); a logger only copies each chunk's record elsewhere, after
the chunk's checkpoint is saved. Which loggers run is not part of the run's config: a run may
be resumed with another ``--logger`` choice. A logger that joins a run late (a resume with
``--logger tensorboard`` after a run without it) first writes the records already in
``metrics.jsonl``, so its view of the run starts at chunk 1.

    tensorboard   <run>/tensorboard/events.out.tfevents.*  (tensorboardX), one scalar per record
                  field, x = env_steps; ``tensorboard --logdir runs/``. After a resume from an
                  older checkpoint, the chunks computed again replace the old points (the
                  writer's ``purge_step``)
    wandb         <run>/wandb/ (``WANDB_MODE``, default ``offline``; ``wandb sync`` uploads it);
                  one W&B run per jaxgames run (its id is kept in <run>/wandb/jaxgames-run-id),
                  config = config.json's record, one history row per chunk at step env_steps

The libraries are optional (``pip install 'jaxgames[loggers]'``): :func:`parse_loggers` raises
a one-line :class:`~jaxgames.validation.MissingExtraError` when one is missing, before training.
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
    """``"jsonl,tensorboard"`` (or a list of names) -> the optional loggers to run, e.g.
    ``("tensorboard",)`` (``jsonl`` is always written, so it is implied). ``ValueError`` for an
    unknown name, :class:`~jaxgames.validation.MissingExtraError` naming the pip extra for a
    logger whose library is not installed."""
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
        # tensorboardX names files by the second and the host: a resume within the same second
        # would overwrite the previous file, so each writer gets its own index
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
    """One W&B run per jaxgames run, offline unless ``WANDB_MODE`` says otherwise (module
    docstring)."""

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
    """The loggers ``names`` (from :func:`parse_loggers`) for ``run_dir``, resuming after
    ``history`` (the records kept, up to env step ``last_step``); ``config``: the run's
    config record (``config.json``)."""
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
