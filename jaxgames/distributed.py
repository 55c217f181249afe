"""Scale out with JAX's own SPMD machinery: one ``Mesh`` with a ``'data'`` axis.

The batch of games is split across devices, everything else (parameters, optimiser state, keys,
counters) replicated, and the training chunk compiled once for the whole mesh (``jax.jit`` with
``in_shardings``/``out_shardings``). XLA inserts the collectives: a loss averaged over a sharded
batch gives gradients all-reduced over ``'data'``. No algorithm code knows about devices::

    mesh = make_mesh()                       # all devices (or make_mesh(4) / make_mesh([d0, d1]))
    init, chunk, _ = sharded_train_fns(algo, mesh)
    state = init(jax.random.PRNGKey(0))      # env_state sharded on 'data', the rest replicated
    state, metrics = chunk(state)

Which leaves are split is an algorithm's ``partition(train_state) -> PartitionSpec`` pytree
(default :func:`default_partition`: the batched game states under ``env_state``). Random numbers
do not depend on the device count (``jax_threefry_partitionable``), so a sharded rollout plays
the same games; updates match to float tolerance.

Multi-host: :func:`initialize` on every host (``jaxgames train --distributed``); ``jax.devices()``
then spans all hosts. The train state is created inside ``jit`` with ``out_shardings``, so each
host computes and stores only the games on its devices; host data becomes global arrays with
:func:`host_local_to_global`. Orbax checkpoints are collective; process 0 writes the logs.
"""

from __future__ import annotations

import os
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
    """``None`` / ``"all"`` / ``0`` -> all of ``jax.devices()``; an int ``n`` (or its string) ->
    the first ``n``; a sequence of ``jax.Device`` -> those. ``ValueError`` for a bad count."""
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
    devices = list(devices)
    if not devices or not all(isinstance(d, jax.Device) for d in devices):
        raise ValueError(
            f"invalid devices={devices!r}: expected 'all', a count, or a list of jax.Device"
        )
    return devices


def make_mesh(devices: int | str | Sequence[Any] | None = None) -> Mesh:
    """A 1-D :class:`jax.sharding.Mesh` with axis ``'data'`` over :func:`resolve_devices`
    ``(devices)``."""
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
    """A partition function splitting leaves under a field (attribute or dict key) named like a
    keyword over ``'data'`` along the given axis; the rest (and leaves of too few dimensions)
    replicated::

        partition=partition_by_field(env_state=0, buffer=1)   # buffer data [rows, num_envs, ...]
    """

    def partition(train_state: Any) -> Any:
        def spec(path, leaf):
            for name in _path_names(path):
                if name in axes and np.ndim(leaf) > axes[name]:
                    return P(*([None] * axes[name]), DATA)
            return P()

        return jax.tree_util.tree_map_with_path(spec, train_state)

    return partition


def default_partition(train_state: Any) -> Any:
    """``partition_by_field(env_state=0)``: the batched game states split, the rest
    replicated (arrays or ``jax.eval_shape`` results)."""
    return partition_by_field(**{f: 0 for f in BATCH_FIELDS})(train_state)


def state_shardings(
    mesh: Mesh, train_state: Any, partition: Callable[[Any], Any] | None = None
) -> Any:
    """Pytree of :class:`NamedSharding` of ``train_state`` by ``partition`` (default
    :func:`default_partition`); ``ValueError`` if a split axis does not divide evenly."""
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
    """Inside jitted code under a mesh (``jax.set_mesh``): split axis ``axis`` of every leaf
    over ``'data'``; the identity otherwise. For batches rebuilt from a gather that SPMD
    propagation would replicate (PPO's shuffled minibatches, ``axis=1``); values unchanged."""
    mesh = jax.sharding.get_abstract_mesh()
    if mesh.empty or DATA not in mesh.axis_names:
        return tree
    spec = P(*([None] * axis), DATA)
    return jax.tree_util.tree_map(
        lambda x: jax.lax.with_sharding_constraint(x, spec) if np.ndim(x) > axis else x, tree
    )


def sharded_train_fns(algo: Any, mesh: Mesh, donate: bool = True) -> tuple[Callable, Callable, Any]:
    """``(init, chunk, shardings)`` of an algorithm compiled for ``mesh``: ``init(key)``
    creates the train state in its sharded layout, ``chunk(state) -> (state, metrics)`` keeps
    it (donated) and replicates the metrics; both run under ``jax.set_mesh(mesh)``."""
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
    """Join a multi-host run (``jax.distributed.initialize``, before devices are touched, on
    every host). Arguments default to ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``,
    ``JAX_PROCESS_ID`` or the cluster's auto-detection (TPU pods, SLURM, Open MPI)."""
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
