"""Orbax checkpoints of a whole train-state pytree, with fallback past corrupt ones.

The pytree is stored as its flat list of leaves (``leaf_00000``, ...) and rebuilt with the
tree structure of a template (``jax.eval_shape(algorithm.init, key)``), so any pytree of
arrays (flax/optax/game-state dataclasses) round-trips exactly. Orbax writes each step into a
temporary directory and renames it when complete, so a save interrupted by a kill never shows
up as a step; a step whose files were damaged afterwards fails to restore and
:meth:`CheckpointStore.restore_latest` falls back to the previous one with a warning.
"""

from __future__ import annotations

import os
import shutil
import time
import warnings
from typing import Any

import jax
import numpy as np


class CheckpointError(ValueError):
    """No usable checkpoint (a ``ValueError``, so callers that report bad input catch it)."""


def _leaf_dict(tree: Any) -> dict[str, Any]:
    return {f"leaf_{i:05d}": leaf for i, leaf in enumerate(jax.tree_util.tree_leaves(tree))}


class CheckpointStore:
    """Checkpoints of one run in ``directory`` (``<run>/checkpoints``), newest ``keep`` kept.

    Steps are chunk counts (1 = after the first chunk).
    """

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
        self._manager = ocp.CheckpointManager(self.directory, options=options)

    def steps(self) -> list[int]:
        """Completed checkpoint steps, ascending."""
        self._manager.reload()
        return sorted(int(s) for s in self._manager.all_steps())

    def save(self, step: int, tree: Any) -> None:
        """Save ``tree`` as ``step`` (blocking: the checkpoint is complete on return)."""
        self._manager.save(step, args=self._ocp.args.StandardSave(_leaf_dict(tree)), force=True)
        self._manager.wait_until_finished()

    def restore(self, step: int, template: Any) -> Any:
        """Restore ``step`` into the structure of ``template`` (arrays or ShapeDtypeStructs;
        a leaf's ``sharding``, if any, is the layout it is restored into).

        Raises if the files are unreadable or shapes/dtypes differ from the template.
        """
        leaves, treedef = jax.tree_util.tree_flatten(template)
        abstract = {
            k: jax.ShapeDtypeStruct(np.shape(x), x.dtype, sharding=getattr(x, "sharding", None))
            for k, x in _leaf_dict(template).items()
        }
        restored = self._manager.restore(step, args=self._ocp.args.StandardRestore(abstract))
        if set(restored) != set(abstract):
            raise ValueError(
                f"checkpoint {step} holds {len(restored)} arrays, expected {len(abstract)}"
            )
        out = []
        for k, want in abstract.items():
            got = restored[k]
            if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
                raise ValueError(
                    f"checkpoint {step}: {k} is {got.dtype}{got.shape}, expected {want.dtype}{want.shape}"
                )
            out.append(got)
        return jax.tree_util.tree_unflatten(treedef, out)

    def restore_latest(self, template: Any) -> tuple[int, Any] | None:
        """(step, tree) of the newest checkpoint that restores; ``None`` if there are none.

        Each unreadable checkpoint gives a warning (use :meth:`quarantine_after` to move them
        aside so later saves can reuse their step numbers). Raises :class:`CheckpointError` if
        checkpoints exist but none can be restored.
        """
        steps = self.steps()
        if not steps:
            return None
        errors = []
        for step in reversed(steps):
            try:
                return step, self.restore(step, template)
            except Exception as e:  # noqa: BLE001 - any failure means "not usable"
                errors.append(f"step {step}: {type(e).__name__}: {str(e)[:200]}")
                warnings.warn(
                    f"checkpoint {step} in {self.directory} is unreadable ({type(e).__name__}: {str(e)[:200]}); "
                    "falling back to the previous one",
                    stacklevel=2,
                )
        raise CheckpointError(
            f"none of the checkpoints in {self.directory} can be restored:\n  "
            + "\n  ".join(errors)
            + "\nThe run's files were left untouched; delete the run directory (or choose another run name) "
            "to start over."
        )

    def quarantine_after(self, step: int) -> None:
        """Move checkpoints newer than ``step`` (unusable ones) out of the way."""
        newer = [s for s in self.steps() if s > step]
        if not newer:
            return
        dest = os.path.join(os.path.dirname(self.directory), "corrupt_checkpoints")
        os.makedirs(dest, exist_ok=True)
        for s in newer:
            src = os.path.join(self.directory, str(s))
            shutil.move(src, os.path.join(dest, f"{s}-{int(time.time())}"))
        self._manager.reload()

    def close(self) -> None:
        self._manager.close()
