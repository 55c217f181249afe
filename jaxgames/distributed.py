"""Scale out with JAX's own SPMD machinery: one ``Mesh`` with a ``'data'`` axis.

The batch of games is split across devices (an algorithm's ``partition``; default the
batched game states), the rest replicated, and the chunk compiled once for the mesh; XLA
inserts the collectives (a loss averaged over a sharded batch all-reduces its gradients). No
algorithm code knows about devices, and random numbers do not depend on the device count
(``jax_threefry_partitionable``). Multi-host: :func:`initialize` on every host; the train
state is created inside ``jit``, so each host holds only its games; process 0 writes the logs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

#: name of the mesh axis the batch of games is split over
DATA = "data"
#: field name whose leaves :func:`default_partition` shards (the batched game states)
BATCH_FIELDS = ("env_state",)


def resolve_devices(devices: int | str | Sequence[Any] | None = None) -> list[Any]:
    """``None`` / ``"all"`` / ``0``: all devices; ``n`` (or its string): the first ``n``; a
    sequence of ``jax.Device``: those. ``ValueError`` for a bad count."""
    available = jax.devices()
    if devices is None or (isinstance(devices, str) and devices.strip().lower() in ("all", "")):
        return list(available)
    if isinstance(devices, str):
        try:
            devices = int(devices)
        except ValueError:
            raise ValueError(
                f"invalid devices={devices!r}: must be 'all' or a positive integer"
            ) from None
    if isinstance(devices, (int, np.integer)) and not isinstance(devices, bool):
        n = int(devices)
        if n == 0:
            return list(available)
        if n < 0 or n > len(available):
            raise ValueError(
                f"invalid devices={n}: must be between 1 and the {len(available)} "
                f"{jax.default_backend()} device(s) present "
                f"(on CPU, XLA_FLAGS=--xla_force_host_platform_device_count=N fakes N)"
            )
        return list(available[:n])
    what = "expected 'all', a count, or a list of distinct jax.Device"
    if isinstance(devices, bool) or not isinstance(devices, Iterable):
        raise ValueError(f"invalid devices={devices!r}: {what}")
    devices = list(devices)
    if not devices or not all(isinstance(d, jax.Device) for d in devices):
        raise ValueError(f"invalid devices={devices!r}: {what}")
    if len(set(devices)) < len(devices):  # a mesh holds each device once
        raise ValueError(f"invalid devices={devices!r}: a device is listed twice; {what}")
    return devices


def make_mesh(devices: int | str | Sequence[Any] | None = None) -> Mesh:
    """A 1-D mesh with axis ``'data'`` over :func:`resolve_devices`."""
    return Mesh(np.array(resolve_devices(devices)), (DATA,))


def mesh_size(mesh: Mesh) -> int:
    """Number of devices along the ``'data'`` axis."""
    return int(mesh.shape[DATA])


def _path_names(path) -> list[str]:
    names = []
    for k in path:
        for attr in ("name", "key"):
            if hasattr(k, attr):
                names.append(str(getattr(k, attr)))
                break
    return names


def partition_by_field(**axes: int) -> Callable[[Any], Any]:
    """A partition splitting the leaves under each field (attribute or key) named by a keyword
    over ``'data'`` along its axis, e.g. ``partition_by_field(env_state=0, buffer=1)``; the
    rest replicated."""

    def partition(train_state: Any) -> Any:
        def spec(path, leaf):
            for name in _path_names(path):
                if name in axes and np.ndim(leaf) > axes[name]:
                    return P(*([None] * axes[name]), DATA)
            return P()

        return jax.tree_util.tree_map_with_path(spec, train_state)

    return partition


def default_partition(train_state: Any) -> Any:
    """``partition_by_field(env_state=0)``: the batched game states split."""
    return partition_by_field(**{f: 0 for f in BATCH_FIELDS})(train_state)


def state_shardings(
    mesh: Mesh, train_state: Any, partition: Callable[[Any], Any] | None = None
) -> Any:
    """:class:`NamedSharding` s of ``train_state`` by ``partition``; ``ValueError`` if a split
    axis does not divide evenly."""
    specs = (partition or default_partition)(train_state)
    n = mesh_size(mesh)

    def to_sharding(path, leaf, spec):
        for axis, name in enumerate(spec):
            if name is not None and np.shape(leaf)[axis] % n:
                where = "/".join(_path_names(path))
                raise ValueError(
                    f"cannot split {where} (axis {axis} of shape {np.shape(leaf)}) "
                    f"over {n} devices: num_envs must be a multiple of the number of devices"
                )
        return NamedSharding(mesh, spec)

    return jax.tree_util.tree_map_with_path(to_sharding, train_state, specs)


def replicated(mesh: Mesh) -> NamedSharding:
    """The fully replicated sharding on ``mesh`` (parameters, keys, metrics)."""
    return NamedSharding(mesh, P())


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """Leading axis split over ``'data'``, the other axes whole."""
    return NamedSharding(mesh, P(DATA))


def shard_batch(tree: Any, mesh: Mesh) -> Any:
    """Place a batch (every leaf ``[B, ...]``) split over the mesh on its leading axis."""
    n = mesh_size(mesh)
    for leaf in jax.tree_util.tree_leaves(tree):
        if np.ndim(leaf) == 0 or np.shape(leaf)[0] % n:
            raise ValueError(
                f"cannot split a leaf of shape {np.shape(leaf)} over {n} devices "
                "on its leading axis"
            )
    return jax.device_put(tree, batch_sharding(mesh))


def constrain_batch(tree: Any, mesh: Mesh) -> Any:
    """Inside ``jit``: constrain ``tree``'s leading axis to be split over ``'data'``."""
    sh = batch_sharding(mesh)
    return jax.tree_util.tree_map(
        lambda x: jax.lax.with_sharding_constraint(x, sh) if np.ndim(x) else x, tree
    )


def constrain_data(tree: Any, axis: int = 0) -> Any:
    """Under a mesh, split axis ``axis`` of every leaf over ``'data'`` (batches rebuilt from a
    gather, which SPMD propagation would replicate); the identity otherwise."""
    mesh = jax.sharding.get_abstract_mesh()
    if mesh.empty or DATA not in mesh.axis_names:
        return tree
    spec = P(*([None] * axis), DATA)
    return jax.tree_util.tree_map(
        lambda x: jax.lax.with_sharding_constraint(x, spec) if np.ndim(x) > axis else x, tree
    )


def sharded_train_fns(algo: Any, mesh: Mesh, donate: bool = True) -> tuple[Callable, Callable, Any]:
    """``(init, chunk, shardings)`` compiled for ``mesh``: the state made in its sharded
    layout and kept (donated) by ``chunk``, metrics replicated."""
    template = jax.eval_shape(algo.init, jax.random.PRNGKey(0))
    shardings = state_shardings(mesh, template, getattr(algo, "partition", None))
    init_jit = jax.jit(algo.init, out_shardings=shardings)
    chunk_jit = jax.jit(
        algo.chunk,
        in_shardings=(shardings,),
        out_shardings=(shardings, replicated(mesh)),
        donate_argnums=0 if donate else (),
    )

    def init(key):
        with jax.set_mesh(mesh):
            return init_jit(key)

    def chunk(state):
        with jax.set_mesh(mesh):
            return chunk_jit(state)

    def lower(state):
        with jax.set_mesh(mesh):
            return chunk_jit.lower(state)

    chunk.lower = lower  # as a jitted function's: to compile ahead of the first chunk
    return init, chunk, shardings


def abstract_state(template: Any, shardings: Any) -> Any:
    """``template`` (``jax.eval_shape``) with each leaf's sharding, to restore into."""
    return jax.tree_util.tree_map(
        lambda t, s: jax.ShapeDtypeStruct(t.shape, t.dtype, sharding=s), template, shardings
    )


def host_local_to_global(local_tree: Any, mesh: Mesh) -> Any:
    """Multi-host: each process's games (leaves ``[B_local, ...]``) as global arrays
    ``[B_local * num_processes, ...]`` split over ``'data'``."""
    sh = batch_sharding(mesh)
    return jax.tree_util.tree_map(
        lambda x: jax.make_array_from_process_local_data(sh, np.asarray(x)), local_tree
    )


def is_primary() -> bool:
    """True on process 0, which writes logs and plots."""
    return jax.process_index() == 0


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
) -> None:
    """Join a multi-host run on every host before devices are touched; arguments default to
    ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID`` or auto-detection."""
    if jax.distributed.is_initialized():
        return
    env = os.environ
    kwargs: dict[str, Any] = {}
    addr = coordinator_address or env.get("JAX_COORDINATOR_ADDRESS")
    if addr:
        kwargs["coordinator_address"] = addr
    n = num_processes if num_processes is not None else env.get("JAX_NUM_PROCESSES")
    if n is not None:
        kwargs["num_processes"] = int(n)
    pid = process_id if process_id is not None else env.get("JAX_PROCESS_ID")
    if pid is not None:
        kwargs["process_id"] = int(pid)
    jax.distributed.initialize(**kwargs)
