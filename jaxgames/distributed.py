"""Scale out with JAX's own SPMD machinery: one ``Mesh`` with a ``'data'`` axis.

The batch of games is split across devices, everything else (parameters, optimiser state,
PRNG keys, counters) is replicated, and the jitted training chunk is compiled once for the
whole mesh (``jax.jit`` with ``in_shardings``/``out_shardings``). XLA's SPMD partitioner
inserts the collectives: a loss that is a mean over a sharded batch yields gradients
all-reduced (averaged) over ``'data'``, so every device applies the same update to its
replica of the parameters. No algorithm code knows about devices::

    mesh = make_mesh()                       # all devices (or make_mesh(4) / make_mesh([d0, d1]))
    init, chunk = sharded_train_fns(algo, mesh)
    state = init(jax.random.PRNGKey(0))      # env_state sharded on 'data', the rest replicated
    state, metrics = chunk(state)            # same program as on one device, run on all of them

Which leaves are split is decided by a partition function ``train_state -> pytree of
PartitionSpec`` (:attr:`jaxgames.agents.algorithm.Algorithm.partition`). The default,
:func:`default_partition`, shards every leaf stored under a field named ``env_state`` (the
batched game states ``[num_envs, ...]`` of PPO, DQN, winner imitation) on its leading axis and
replicates everything else -- always correct; an algorithm may also shard e.g. a per-env replay
buffer by supplying its own function.

Random numbers do not depend on the device count (``jax_threefry_partitionable``, the default
since JAX 0.5), so a sharded rollout plays exactly the same games as a single-device one; the
learning update matches to float tolerance (reductions are summed in a different order).

Multi-host (several machines, each with its own accelerators)
--------------------------------------------------------------
Call :func:`initialize` (``jax.distributed.initialize()``) at the start of the SAME script on
every host -- ``jaxgames train ... --distributed`` does it. Cloud TPU pods, SLURM and
Open MPI are detected automatically; elsewhere set ``JAX_COORDINATOR_ADDRESS=host:port``,
``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` (or pass them as arguments). ``jax.devices()`` then
lists the devices of ALL hosts and :func:`make_mesh` spans them. Because the train state is
created inside ``jit`` with ``out_shardings`` (:func:`sharded_train_fns`), each host only ever
computes and stores the games on its own devices: each host owns its local games, and nothing
is gathered to one host. Data that starts on the hosts (numpy batches, e.g. positions for
imitation) becomes one global array with :func:`host_local_to_global`
(``jax.make_array_from_process_local_data``). Orbax checkpoints are collective: every host
calls ``save``/``restore`` and orbax writes each shard once (the driver's metrics files are
written by process 0 only). ``num_envs`` must be divisible by the total number of devices.
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
    """The devices to use: ``None`` / ``"all"`` / ``0`` -> all of ``jax.devices()``; an int ``n``
    (or its string) -> the first ``n``; a sequence of ``jax.Device`` -> those.

    ``ValueError`` for a count that is not positive or exceeds the devices present.
    """
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
    """A partition function: leaves under a field (attribute or dict key, anywhere in the tree)
    named like a keyword are split over ``'data'`` along the given axis, the rest replicated.
    Leaves with too few dimensions (e.g. a buffer's scalar counters) stay replicated::

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
    """``P('data')`` for every leaf under a field named ``env_state`` (anywhere in the tree),
    ``P()`` (replicated) for the rest (``partition_by_field(env_state=0)``). Works on arrays or
    ``jax.eval_shape`` results."""
    return partition_by_field(**{f: 0 for f in BATCH_FIELDS})(train_state)


def state_shardings(
    mesh: Mesh, train_state: Any, partition: Callable[[Any], Any] | None = None
) -> Any:
    """Pytree of :class:`NamedSharding` matching ``train_state`` (arrays or ShapeDtypeStructs).

    ``partition(train_state)`` returns a pytree of ``PartitionSpec`` (default
    :func:`default_partition`). ``ValueError`` if a sharded leading axis is not divisible by
    the number of devices (e.g. ``num_envs`` 6 on 4 devices).
    """
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
    """Place a batch (e.g. ``vmap(env.init)(keys)``: every leaf ``[B, ...]``) with its leading
    axis split over the mesh. ``B`` must be divisible by the device count."""
    n = mesh_size(mesh)
    for leaf in jax.tree_util.tree_leaves(tree):
        if np.ndim(leaf) == 0 or np.shape(leaf)[0] % n:
            raise ValueError(
                f"cannot split a leaf of shape {np.shape(leaf)} over {n} devices "
                "on its leading axis"
            )
    return jax.device_put(tree, batch_sharding(mesh))


def constrain_batch(tree: Any, mesh: Mesh) -> Any:
    """Inside ``jit``: ask for ``tree``'s leading axis to be split over ``'data'``
    (``jax.lax.with_sharding_constraint``); leaves of rank 0 are left alone."""
    sh = batch_sharding(mesh)
    return jax.tree_util.tree_map(
        lambda x: jax.lax.with_sharding_constraint(x, sh) if np.ndim(x) else x, tree
    )


def constrain_data(tree: Any, axis: int = 0) -> Any:
    """Inside an algorithm's jitted code: split axis ``axis`` of every leaf over ``'data'`` when
    it runs under a mesh (:func:`sharded_train_fns` / the driver set one with ``jax.set_mesh``);
    the identity otherwise, so algorithms stay device-agnostic.

    Use it where a batch is rebuilt from a gather that SPMD propagation would otherwise
    replicate, e.g. PPO's shuffled minibatches ``[num_minibatches, mb, ...]`` (``axis=1``): each
    device then computes the loss on its slice and the gradient is all-reduced (averaged), instead
    of every device computing the whole minibatch. The values are unchanged.
    """
    mesh = jax.sharding.get_abstract_mesh()
    if mesh.empty or DATA not in mesh.axis_names:
        return tree
    spec = P(*([None] * axis), DATA)
    return jax.tree_util.tree_map(
        lambda x: jax.lax.with_sharding_constraint(x, spec) if np.ndim(x) > axis else x, tree
    )


def shard_state(train_state: Any, mesh: Mesh, partition: Callable[[Any], Any] | None = None) -> Any:
    """``device_put`` an existing train state with :func:`state_shardings` (e.g. after restore)."""
    return jax.device_put(train_state, state_shardings(mesh, train_state, partition))


def sharded_train_fns(algo: Any, mesh: Mesh, donate: bool = True) -> tuple[Callable, Callable, Any]:
    """(init, chunk, shardings) of an :class:`~jaxgames.agents.algorithm.Algorithm` compiled
    for ``mesh``.

    init(key) -> train_state   created directly in its sharded layout (``out_shardings``)
    chunk(state) -> (state, metrics)
                               the algorithm's chunk, state in and out with the same
                               shardings (donated), metrics replicated
    shardings                  pytree of NamedSharding of the train state

    Both run (and trace) under ``jax.set_mesh(mesh)``, so :func:`constrain_data` hints inside
    the algorithm apply.
    """
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
    """``template`` (``jax.eval_shape`` result) with each leaf's sharding attached, so that a
    checkpoint restores straight into the sharded layout."""
    return jax.tree_util.tree_map(
        lambda t, s: jax.ShapeDtypeStruct(t.shape, t.dtype, sharding=s), template, shardings
    )


def host_local_to_global(local_tree: Any, mesh: Mesh) -> Any:
    """Multi-host: each process passes ITS games (leaves ``[B_local, ...]``, numpy or arrays);
    returns global arrays ``[B_local * num_processes, ...]`` split over ``'data'``
    (``jax.make_array_from_process_local_data``). On one host it equals :func:`shard_batch`."""
    sh = batch_sharding(mesh)
    return jax.tree_util.tree_map(
        lambda x: jax.make_array_from_process_local_data(sh, np.asarray(x)), local_tree
    )


def is_primary() -> bool:
    """True on the process that writes logs and plots (process 0; always true on one host)."""
    return jax.process_index() == 0


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
) -> None:
    """Join a multi-host run: ``jax.distributed.initialize`` (call before anything touches
    devices, on every host). Arguments default to ``JAX_COORDINATOR_ADDRESS``,
    ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID`` or to the cluster's auto-detection (TPU pods,
    SLURM, Open MPI). A no-op if already initialised."""
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
