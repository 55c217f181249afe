"""An on-device trajectory replay buffer (flashbax-style: a NamedTuple of pure functions).

A time-major ring of the last ``capacity`` steps of ``num_envs`` games. Steps of one game stay
consecutive, so a sample is a window of ``length`` consecutive steps of one env (n-step
returns need ``n + 1``: the transition, the next ones, and the state to bootstrap from) and
never straddles the write position. Pure and jittable; with the train state donated, XLA
updates the storage in place.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class TrajectoryBufferState:
    """data: leaves [capacity, num_envs, *item_shape]; pos: int32[] next row to write;
    count: int32[] rows written so far (size = min(count, capacity))."""

    data: Any
    pos: jax.Array
    count: jax.Array


class TrajectoryBuffer(NamedTuple):
    """Pure functions of a trajectory ring buffer (see the module docstring)."""

    init: Callable[[Any], TrajectoryBufferState]
    add: Callable[[TrajectoryBufferState, Any], TrajectoryBufferState]
    extend: Callable[[TrajectoryBufferState, Any], TrajectoryBufferState]
    size: Callable[[TrajectoryBufferState], jax.Array]
    can_sample: Callable[[TrajectoryBufferState, int], jax.Array]
    sample_indices: Callable[
        [TrajectoryBufferState, jax.Array, int, int], tuple[jax.Array, jax.Array]
    ]
    gather: Callable[[TrajectoryBufferState, jax.Array, jax.Array], Any]
    sample: Callable[[TrajectoryBufferState, jax.Array, int, int], Any]
    capacity: int
    num_envs: int


def make_trajectory_buffer(capacity: int, num_envs: int) -> TrajectoryBuffer:
    """A ring buffer of ``capacity`` time steps x ``num_envs`` games."""
    for name, v in (("capacity", capacity), ("num_envs", num_envs)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"invalid {name}={v!r}: must be a positive integer")

    def init(item: Any) -> TrajectoryBufferState:
        """Zero-filled buffer for items shaped like ``item`` (one env, one step)."""

        def zeros(x):
            x = x if hasattr(x, "dtype") and hasattr(x, "shape") else jnp.asarray(x)
            return jnp.zeros((capacity, num_envs, *x.shape), x.dtype)

        data = jax.tree_util.tree_map(zeros, item)
        return TrajectoryBufferState(data, jnp.int32(0), jnp.int32(0))

    def extend(state: TrajectoryBufferState, items: Any) -> TrajectoryBufferState:
        """Append T steps, leaves [T, num_envs, ...], over the oldest rows."""
        leaves = jax.tree_util.tree_leaves(items)
        t = leaves[0].shape[0]
        for x in leaves:
            if x.shape[:2] != (t, num_envs):
                raise ValueError(
                    f"extend expects leaves [T, num_envs={num_envs}, ...]; got shape {x.shape}"
                )
        if t > capacity:  # only the newest `capacity` steps survive
            items = jax.tree_util.tree_map(lambda x: x[t - capacity :], items)
            return extend(
                TrajectoryBufferState(
                    state.data, (state.pos + t - capacity) % capacity, state.count + t - capacity
                ),
                items,
            )
        rows = (state.pos + jnp.arange(t, dtype=jnp.int32)) % capacity
        data = jax.tree_util.tree_map(
            lambda d, x: d.at[rows].set(x.astype(d.dtype), unique_indices=True), state.data, items
        )
        return TrajectoryBufferState(data, (state.pos + t) % capacity, state.count + t)

    def add(state: TrajectoryBufferState, items: Any) -> TrajectoryBufferState:
        """Append one time step: leaves [num_envs, ...]."""
        return extend(state, jax.tree_util.tree_map(lambda x: x[None], items))

    def size(state: TrajectoryBufferState) -> jax.Array:
        """int32[]: rows stored (``min(count, capacity)``)."""
        return jnp.minimum(state.count, capacity)

    def can_sample(state: TrajectoryBufferState, length: int) -> jax.Array:
        """bool[]: a window of ``length`` consecutive steps is stored."""
        return size(state) >= length

    def sample_indices(
        state: TrajectoryBufferState, key: jax.Array, batch_size: int, length: int
    ) -> tuple[jax.Array, jax.Array]:
        """Uniform windows (rows int32[batch_size, length], envs int32[batch_size]); only
        meaningful when :func:`can_sample`."""
        if length > capacity:
            raise ValueError(f"window length {length} exceeds the buffer capacity {capacity}")
        k_t, k_e = jax.random.split(key)
        n = size(state)
        oldest = (state.pos - n) % capacity
        starts = jax.random.randint(
            k_t, (batch_size,), 0, jnp.maximum(n - length + 1, 1), dtype=jnp.int32
        )
        rows = (oldest + starts[:, None] + jnp.arange(length, dtype=jnp.int32)[None]) % capacity
        envs = jax.random.randint(k_e, (batch_size,), 0, num_envs, dtype=jnp.int32)
        return rows, envs

    def gather(state: TrajectoryBufferState, rows: jax.Array, envs: jax.Array) -> Any:
        """Items at rows int32[B, ...] of envs int32[B]: leaves [B, ..., *item_shape]."""
        envs = envs.reshape(envs.shape + (1,) * (rows.ndim - 1))
        return jax.tree_util.tree_map(lambda d: d[rows, envs], state.data)

    def sample(state: TrajectoryBufferState, key: jax.Array, batch_size: int, length: int) -> Any:
        """Windows of ``length`` steps: leaves [batch_size, length, ...]."""
        rows, envs = sample_indices(state, key, batch_size, length)
        return gather(state, rows, envs)

    return TrajectoryBuffer(
        init, add, extend, size, can_sample, sample_indices, gather, sample, capacity, num_envs
    )
