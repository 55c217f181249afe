"""Orbax checkpoints of a whole train-state pytree, checksummed, with fallback past damaged ones.

The pytree is stored as its flat list of leaves and rebuilt with a template's structure
(``jax.eval_shape(algorithm.init, key)``), so any pytree of arrays round-trips exactly; orbax
renames a step into place when complete, so a killed save never shows up. Each step records a
SHA-256 digest of its leaves, checked on restore (older steps: finite floats), so damaged
bytes are found even where they decode into plausible numbers; ``restore_latest`` falls back
past each damaged step with a one-line :class:`CheckpointWarning`.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import logging
import os
import shutil
import sys
import threading
import time
import warnings
from typing import Any, Iterator

import jax
import numpy as np

from jaxgames.signals import interrupts_held

#: key of the digest in each step's orbax custom metadata
DIGEST_KEY = "jaxgames_sha256"
#: orbax's metadata file of a step (its custom metadata, the digest among it)
METADATA_FILE = "_CHECKPOINT_METADATA"


class CheckpointError(ValueError):
    """No usable checkpoint (a ``ValueError``, so callers that report bad input catch it)."""


class CheckpointDamagedError(CheckpointError):
    """One checkpoint step is damaged (unreadable, checksum mismatch, non-finite values)."""


class CheckpointWarning(UserWarning):
    """A damaged checkpoint was skipped (one line, naming the step and why)."""


def _leaf_dict(tree: Any) -> dict[str, Any]:
    return {f"leaf_{i:05d}": leaf for i, leaf in enumerate(jax.tree_util.tree_leaves(tree))}


def _host_leaves(leaves: list[Any]) -> list[np.ndarray] | None:
    """Host copies of ``leaves``; ``None`` when some leaf lives partly on other hosts."""
    if not all(getattr(x, "is_fully_addressable", True) for x in leaves):
        return None
    return [np.asarray(x) for x in jax.device_get(leaves)]


def tree_digest(leaves: list[np.ndarray]) -> str:
    """SHA-256 (hex) of arrays: each one's dtype, shape and bytes, in order."""
    h = hashlib.sha256()
    for x in leaves:
        x = np.ascontiguousarray(x)
        h.update(f"{x.dtype.str}{x.shape};".encode())
        h.update(x.tobytes())
    return h.hexdigest()


def _first_non_finite(leaves: dict[str, np.ndarray]) -> str | None:
    for k, x in leaves.items():
        if np.issubdtype(x.dtype, np.inexact) and not np.all(np.isfinite(x)):
            return k
    return None


#: orbax's coroutine reading one array; after a failed read its leftovers can end unawaited
_ORBAX_READ = "_read_array_index_and_device_put"


def _orbax_noise(unraisable: Any) -> bool:
    """The errors orbax's asyncio machinery leaves behind after a failed read: a tensorstore
    callback that still fires, on another thread, into the event loop orbax already closed,
    or one of its array reads left unfinished."""
    exc = unraisable.exc_value
    if isinstance(exc, RuntimeError) and str(exc) == "Event loop is closed":
        return True
    return getattr(getattr(unraisable, "object", None), "__name__", None) == _ORBAX_READ


class _UnretrievedReadErrors(logging.Filter):
    """Drops asyncio's "Future (or Task) exception was never retrieved" about a failed
    tensorstore read (the failure :meth:`CheckpointStore.restore_latest` already reported)."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        unretrieved = text.startswith(
            ("Future exception was never retrieved", "Task exception was never retrieved")
        )
        return not (unretrieved and ("tensorstore" in text or "DATA_LOSS" in text))


def _drop_orbax_noise() -> None:
    """Filter a failed read's stragglers (tensorstore threads calling into the closed loop,
    at any time later) out of ``sys.unraisablehook``, ``sys.excepthook`` (worker threads only)
    and the asyncio log; everything else passes through."""
    current = sys.unraisablehook
    if not getattr(current, "_drops_orbax_noise", False):

        def hook(unraisable: Any) -> None:
            if not _orbax_noise(unraisable):
                current(unraisable)

        hook._drops_orbax_noise = True  # type: ignore[attr-defined]
        sys.unraisablehook = hook
    excepthook = sys.excepthook
    if not getattr(excepthook, "_drops_orbax_noise", False):

        def thread_hook(kind: Any, value: Any, tb: Any) -> None:
            in_worker = threading.current_thread() is not threading.main_thread()
            noise = isinstance(value, RuntimeError) and str(value) == "Event loop is closed"
            if not (in_worker and noise):
                excepthook(kind, value, tb)

        thread_hook._drops_orbax_noise = True  # type: ignore[attr-defined]
        sys.excepthook = thread_hook
    log = logging.getLogger("asyncio")
    if not any(isinstance(f, _UnretrievedReadErrors) for f in log.filters):
        log.addFilter(_UnretrievedReadErrors())


@contextlib.contextmanager
def _quiet_orbax() -> Iterator[None]:
    """Silence what orbax prints about a damaged step (absl lines and asyncio noise); the
    damage is reported in one warning instead."""
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.CRITICAL)
    _drop_orbax_noise()
    try:
        yield
    except Exception:
        gc.collect()  # the failed read's abandoned futures go now
        raise
    finally:
        absl.setLevel(level)


def _short(e: BaseException) -> str:
    """``Type: message`` of ``e`` on one line, at most 200 characters of the message."""
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text[:200]}{'...' if len(text) > 200 else ''}"


class CheckpointStore:
    """Checkpoints of one run in ``directory``, the newest ``keep`` kept; steps are chunks."""

    def __init__(self, directory: str, keep: int = 3):
        # imported here, not at the top: orbax takes seconds to import and most users of
        # this module's package (configs, metrics) never touch a checkpoint
        import orbax.checkpoint as ocp
        from orbax.checkpoint import checkpoint_managers

        self.directory = os.path.abspath(directory)
        self.keep = keep
        self._ocp = ocp
        options = ocp.CheckpointManagerOptions(
            preservation_policy=checkpoint_managers.LatestN(keep),
            create=True,
            enable_async_checkpointing=False,
        )
        # an explicit item handler: else orbax infers every step's layout from the newest
        # step directory, and one damaged step would make all of them unreadable
        with _quiet_orbax():
            self._manager = ocp.CheckpointManager(
                self.directory, options=options, item_handlers=ocp.StandardCheckpointHandler()
            )

    def steps(self) -> list[int]:
        """Completed checkpoint steps, ascending."""
        with _quiet_orbax():
            self._manager.reload()
            return sorted(int(s) for s in self._manager.all_steps())

    def save(self, step: int, tree: Any) -> None:
        """Save ``tree`` as ``step`` with its digest (blocking: complete on return). Ctrl-C
        waits for the save to finish, then interrupts."""
        items = _leaf_dict(tree)
        host = _host_leaves(list(items.values()))
        meta = {} if host is None else {DIGEST_KEY: tree_digest(host)}
        # quiet: a step folder a killed save left is replaced (orbax logs it through absl)
        with interrupts_held() as interrupted, _quiet_orbax():
            self._manager.save(
                step, args=self._ocp.args.StandardSave(items), custom_metadata=meta, force=True
            )
            self._manager.wait_until_finished()
        if interrupted:
            raise KeyboardInterrupt

    def restore(self, step: int, template: Any) -> Any:
        """Restore ``step`` into ``template``'s structure (each leaf onto its ``sharding``, else
        the default device); :class:`CheckpointDamagedError` if unreadable, off its digest, or
        of other shapes or dtypes."""
        leaves, treedef = jax.tree_util.tree_flatten(template)
        # left to orbax, a leaf would go to the devices it was saved from (fails elsewhere)
        here = jax.sharding.SingleDeviceSharding(jax.devices()[0])
        abstract = {
            k: jax.ShapeDtypeStruct(
                np.shape(x), x.dtype, sharding=getattr(x, "sharding", None) or here
            )
            for k, x in _leaf_dict(template).items()
        }
        step_dir = os.path.join(self.directory, str(step))
        if not os.path.isdir(os.path.join(step_dir, "default")):
            empty = not os.path.isdir(step_dir) or not os.listdir(step_dir)
            what = "empty" if empty else "without its data folder 'default'"
            raise CheckpointDamagedError(f"its directory is {what}")
        # orbax reads a missing or broken metadata file as no metadata: the step would pass
        # for one from before the digests and skip its checksum
        try:
            with open(os.path.join(step_dir, METADATA_FILE)) as f:
                if not isinstance(json.load(f), dict):
                    raise ValueError("not a JSON object")
        except (OSError, ValueError) as e:
            raise CheckpointDamagedError(f"its {METADATA_FILE} is unreadable ({_short(e)})") from e
        try:
            with _quiet_orbax():
                custom = self._manager.metadata(step).custom_metadata or {}
                restored = self._manager.restore(
                    step, args=self._ocp.args.StandardRestore(abstract)
                )
        except Exception as e:  # noqa: BLE001 - any failure to read means "damaged"
            raise CheckpointDamagedError(f"unreadable ({_short(e)})") from e
        if not isinstance(restored, dict) or set(restored) != set(abstract):
            n = len(restored) if isinstance(restored, dict) else 0
            raise CheckpointDamagedError(f"holds {n} arrays, expected {len(abstract)}")
        out = []
        for k, want in abstract.items():
            got = restored[k]
            if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
                raise CheckpointDamagedError(
                    f"{k} is {got.dtype}{got.shape}, expected {want.dtype}{want.shape}"
                )
            out.append(got)
        host = _host_leaves(out)
        if host is not None:
            expected = custom.get(DIGEST_KEY)
            if expected is not None and tree_digest(host) != expected:
                raise CheckpointDamagedError("its data does not match its checksum")
            bad = _first_non_finite(dict(zip(abstract, host))) if expected is None else None
            if bad is not None:
                raise CheckpointDamagedError(f"{bad} holds non-finite values (NaN or inf)")
        return jax.tree_util.tree_unflatten(treedef, out)

    def restore_latest(self, template: Any) -> tuple[int, Any] | None:
        """(step, tree) of the newest intact checkpoint (``None`` if there are none), warning
        once per damaged one; :class:`CheckpointError` if none is usable."""
        steps = self.steps()
        if not steps:
            return None
        errors = []
        for step in reversed(steps):
            try:
                return step, self.restore(step, template)
            except CheckpointDamagedError as e:
                errors.append(f"step {step}: {e}")
                warnings.warn(
                    f"checkpoint {step} in {self.directory} is damaged: {e}; "
                    "falling back to the previous one",
                    CheckpointWarning,
                    stacklevel=2,
                )
        raise CheckpointError(
            f"none of the checkpoints in {self.directory} can be restored ("
            + "; ".join(errors)
            + "). The run's files were left untouched; to train it again from scratch, delete "
            "the run directory or choose another run name."
        )

    def quarantine_after(self, step: int) -> list[str]:
        """Move checkpoints newer than ``step`` (damaged ones) to ``<run>/corrupt_checkpoints``;
        returns where they went."""
        newer = [s for s in self.steps() if s > step]
        moved: list[str] = []
        if not newer:
            return moved
        dest = os.path.join(os.path.dirname(self.directory), "corrupt_checkpoints")
        os.makedirs(dest, exist_ok=True)
        for s in newer:
            target = os.path.join(dest, f"{s}-{time.strftime('%Y%m%d-%H%M%S')}")
            n = 1
            while os.path.exists(target):
                target = os.path.join(dest, f"{s}-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
                n += 1
            shutil.move(os.path.join(self.directory, str(s)), target)
            moved.append(target)
        self._manager.reload()
        return moved

    def close(self) -> None:
        with _quiet_orbax():
            self._manager.close()
