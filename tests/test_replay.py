"""On-device trajectory ring buffer: wrap-around, windows, extend == repeated add, jit +
donation."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxgames.agents.replay import make_trajectory_buffer


def item():
    return {"step": jnp.int32(0), "obs": jnp.zeros((2,), jnp.float32)}


def step_items(t, num_envs):
    """Step t of every env: step = 100 * t + env, obs = [t, env]."""
    envs = jnp.arange(num_envs)
    return {
        "step": (100 * t + envs).astype(jnp.int32),
        "obs": jnp.stack([jnp.full(num_envs, t), envs], -1).astype(jnp.float32),
    }


def test_wrap_around_keeps_the_newest_rows():
    buf = make_trajectory_buffer(capacity=4, num_envs=3)
    state = buf.init(item())
    assert int(state.count) == 0 and not bool(buf.can_sample(state, 1))
    for t in range(6):
        state = buf.add(state, step_items(t, 3))
    assert int(state.count) == 6 and int(state.pos) == 2
    # rows 0, 1 were overwritten by steps 4, 5; rows 2, 3 still hold steps 2, 3
    np.testing.assert_array_equal(np.asarray(state.data["step"][:, 0]), [400, 500, 200, 300])
    np.testing.assert_array_equal(np.asarray(state.data["step"][:, 2]), [402, 502, 202, 302])
    np.testing.assert_array_equal(np.asarray(state.data["obs"][1, 1]), [5.0, 1.0])


def test_windows_are_consecutive_in_time_and_never_straddle_the_write_position(key):
    buf = make_trajectory_buffer(capacity=5, num_envs=2)
    state = buf.init(item())
    for t in range(8):  # steps 3..7 stored; rows wrap
        state = buf.add(state, step_items(t, 2))
    windows = jax.jit(buf.sample, static_argnums=(2, 3))(state, key, 4000, 3)
    steps = np.asarray(windows["step"])  # [4000, 3]
    t, env = steps // 100, steps % 100
    assert (env == env[:, :1]).all(), "a window mixes envs"
    assert (np.diff(t, axis=1) == 1).all(), "a window is not consecutive in time"
    # valid starts: steps 3, 4, 5 (a window of 3 ending at the newest step 7)
    starts, counts = np.unique(t[:, 0], return_counts=True)
    np.testing.assert_array_equal(starts, [3, 4, 5])
    assert counts.min() > 1000, counts  # roughly uniform (expected 1333 each)
    assert set(np.unique(env)) == {0, 1}
    np.testing.assert_array_equal(np.asarray(windows["obs"][:, :, 0]), t)


def test_sample_before_wrap_uses_only_written_rows(key):
    buf = make_trajectory_buffer(capacity=10, num_envs=1)
    state = buf.init(item())
    for t in range(4):
        state = buf.add(state, step_items(t, 1))
    assert bool(buf.can_sample(state, 4)) and not bool(buf.can_sample(state, 5))
    steps = np.asarray(buf.sample(state, key, 500, 2)["step"])
    assert set(steps[:, 0] // 100) == {0, 1, 2}


def test_extend_equals_repeated_add_including_wrap_and_overflow():
    buf = make_trajectory_buffer(capacity=4, num_envs=2)
    a = b = buf.init(item())
    for t in range(3):
        a = buf.add(a, step_items(t, 2))
    b = buf.extend(
        b, jax.tree_util.tree_map(lambda *x: jnp.stack(x), *[step_items(t, 2) for t in range(3)])
    )
    for t in range(3, 10):  # T = 7 > capacity: only the newest 4 survive
        a = buf.add(a, step_items(t, 2))
    b = buf.extend(
        b,
        jax.tree_util.tree_map(lambda *x: jnp.stack(x), *[step_items(t, 2) for t in range(3, 10)]),
    )
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert int(b.count) == 10 and int(b.pos) == 2


def test_add_inside_jit_with_donation():
    buf = make_trajectory_buffer(capacity=3, num_envs=2)

    @functools.partial(jax.jit, donate_argnums=0)
    def add_many(state, t0):
        return jax.lax.fori_loop(0, 5, lambda i, s: buf.add(s, step_items(t0 + i, 2)), state)

    state = add_many(buf.init(item()), jnp.int32(0))
    np.testing.assert_array_equal(np.asarray(state.data["step"][:, 1]), [301, 401, 201])


def test_bad_sizes_and_shapes():
    with pytest.raises(ValueError, match="capacity"):
        make_trajectory_buffer(capacity=0, num_envs=2)
    with pytest.raises(ValueError, match="num_envs"):
        make_trajectory_buffer(capacity=4, num_envs=-1)
    buf = make_trajectory_buffer(capacity=4, num_envs=2)
    with pytest.raises(ValueError, match="num_envs=2"):
        buf.add(buf.init(item()), step_items(0, 3))
    with pytest.raises(ValueError, match="exceeds the buffer capacity"):
        buf.sample(buf.init(item()), jax.random.PRNGKey(0), 2, 5)
