"""Sharding over several devices (jaxgames.distributed) gives the single-device results.

The checks need 4 devices, so they run in ONE subprocess started with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (4 CPU devices), leaving the rest of
the suite on its single device. The child runs every check, catches its failure, and prints
one JSON line per check; each test below asserts one of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N_DEV = 4


# ----------------------------------------------------------------------------- child side
def _leaves_equal(a, b) -> bool:
    import jax
    import numpy as np

    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(
        np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb)
    )


def _is_split(x, n: int) -> bool:
    """x lives on n devices, each holding a different slice of the leading axis."""
    return len(x.sharding.device_set) == n and not x.sharding.is_fully_replicated


def check_rollout(game: str, options: dict) -> None:
    """Random self-play with auto-reset: 4-device sharded batch == one device, bit for bit."""
    import jax
    import numpy as np

    import jaxgames
    from jaxgames import distributed
    from jaxgames.agents.common import batch_observation

    env = jaxgames.make(game, **options)
    batch, plies = 8, 70  # > one game of 8x8 reversi, so auto-resets happen too

    def play(states, key):
        def ply(carry, k):
            s = carry
            k_act, k_reset = jax.random.split(k)
            act = jax.vmap(jaxgames.random_action)(
                jax.random.split(k_act, batch), s.legal_action_mask
            )
            out = jax.vmap(lambda st, a, kk: jaxgames.step_autoreset(env, st, a, kk))(
                s, act, jax.random.split(k_reset, batch)
            )
            return out.state, (act, out.rewards, out.terminated, batch_observation(s))

        return jax.lax.scan(ply, states, jax.random.split(key, plies))

    k_init, k_play = jax.random.split(jax.random.PRNGKey(7))
    states = jax.vmap(env.init)(jax.random.split(k_init, batch))
    single = jax.jit(play)(jax.device_put(states, jax.devices()[0]), k_play)

    mesh = distributed.make_mesh(N_DEV)
    assert distributed.mesh_size(mesh) == N_DEV
    sharded_states = distributed.shard_batch(states, mesh)
    assert _is_split(sharded_states.current_player, N_DEV)
    # one process: the multi-host constructor gives the same global arrays, split the same way
    assert _leaves_equal(
        distributed.host_local_to_global(jax.device_get(states), mesh), sharded_states
    )
    assert (
        distributed.host_local_to_global(states, mesh).current_player.sharding
        == sharded_states.current_player.sharding
    )
    sharded = jax.jit(play)(sharded_states, k_play)
    final, (act, rewards, term, obs) = sharded
    assert _is_split(final.current_player, N_DEV), final.current_player.sharding
    assert int(np.asarray(term).sum()) > 0, "no game finished: the test would not cover resets"
    assert _leaves_equal(single, sharded), "sharded rollout differs from the single-device one"


def check_ppo_update() -> None:
    """One PPO chunk (one update) on 4 devices == on 1 device, to float tolerance."""
    import jax
    import numpy as np

    from jaxgames import distributed
    from jaxgames.agents import ppo

    cfg = ppo.default_config(
        "tic_tac_toe",
        num_envs=8,
        num_steps=4,
        num_minibatches=2,
        update_epochs=2,
        updates_per_chunk=1,
        total_steps=32,
        net={"hidden": 16, "layers": 1},
        eval_games=0,
    )
    algo = ppo.make_algorithm(cfg)
    key = jax.random.PRNGKey(3)
    results = {}
    for n in (1, N_DEV):
        init, chunk, _ = distributed.sharded_train_fns(algo, distributed.make_mesh(n), donate=False)
        s0 = init(key)
        s1, m = chunk(s0)
        results[n] = (jax.device_get(s0), jax.device_get(s1), jax.device_get(m))
        if n == N_DEV:
            assert _is_split(s1.env_state.current_player, N_DEV)
            p = jax.tree_util.tree_leaves(s1.params)[0]
            assert len(p.sharding.device_set) == N_DEV and p.sharding.is_fully_replicated
    (a0, a1, am), (b0, b1, bm) = results[1], results[N_DEV]
    assert _leaves_equal(a0, b0), "initial states differ"
    # the rollout uses the same (initial) parameters: the same games, bit for bit
    assert _leaves_equal(a1.env_state, b1.env_state), "games differ"
    assert _leaves_equal(a1.key, b1.key)
    moved = max(
        float(np.abs(np.asarray(x) - np.asarray(y)).max())
        for x, y in zip(jax.tree_util.tree_leaves(a0.params), jax.tree_util.tree_leaves(a1.params))
    )
    assert moved > 1e-4, "the update did not change the parameters"
    for x, y in zip(
        jax.tree_util.tree_leaves((a1.params, a1.opt_state)),
        jax.tree_util.tree_leaves((b1.params, b1.opt_state)),
    ):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-5, atol=1e-6)
    for k in am:
        np.testing.assert_allclose(bm[k], am[k], rtol=1e-4, atol=1e-6, err_msg=k)


def check_dqn_update() -> None:
    """One DQN chunk (rollout + gradient steps from the env-split buffer) on 4 devices == on 1."""

    from jaxgames.agents import dqn

    cfg = dqn.default_config(
        "tic_tac_toe",
        num_envs=8,
        rollout_steps=4,
        gradient_steps=2,
        batch_size=8,
        buffer_size=64,
        learning_starts=0,
        n_step=2,
        updates_per_chunk=3,
        total_steps=96,
        net={"hidden": 16, "layers": 1},
        eval_games=0,
    )
    _one_chunk_alike(dqn.make_algorithm(cfg), 4)


def _one_chunk_alike(algo, seed: int):
    """One chunk of ``algo`` on 1 and on 4 devices -> (the 1-device state, the 4-device
    state) after checking: the same initial state, the games split by device, a gradient step
    taken, the parameters equal to float tolerance."""
    import jax
    import numpy as np

    from jaxgames import distributed

    results = {}
    for n in (1, N_DEV):
        init, chunk, _ = distributed.sharded_train_fns(algo, distributed.make_mesh(n), donate=False)
        s0 = init(jax.random.PRNGKey(seed))
        s1, _ = chunk(s0)
        if n == N_DEV:
            assert _is_split(s1.env_state.current_player, N_DEV)
        results[n] = (jax.device_get(s0), s1 if n == N_DEV else jax.device_get(s1))
    (a0, a1), (b0, b1) = results[1], results[N_DEV]
    assert _leaves_equal(a0, b0), "initial states differ"
    moved = max(
        float(np.abs(np.asarray(x) - np.asarray(y)).max())
        for x, y in zip(jax.tree_util.tree_leaves(a0.params), jax.tree_util.tree_leaves(a1.params))
    )
    assert moved > 1e-5, "no gradient step happened"
    for x, y in zip(jax.tree_util.tree_leaves(a1.params), jax.tree_util.tree_leaves(b1.params)):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-4, atol=1e-5)
    return a1, b1


def check_alphazero_update() -> None:
    """One AlphaZero chunk (searched rollout, replay ring split by game on axis 1, minibatches
    sampled from it) on 4 devices == on 1: the same games bit for bit, parameters to float
    tolerance."""
    import jax
    import numpy as np

    from jaxgames.agents import alphazero

    cfg = alphazero.default_config(
        "tic_tac_toe",
        num_envs=8,
        num_steps=4,
        num_minibatches=2,
        update_epochs=1,
        updates_per_chunk=2,
        total_steps=64,
        num_simulations=4,
        replay_size=8 * 8,
        partners={},
        net={"hidden": 16, "layers": 1},
        eval_games=0,
    )
    a1, b1 = _one_chunk_alike(alphazero.make_algorithm(cfg), 5)
    value = b1.buffer.data.value  # [rows, num_envs]: split by game, as env_state
    assert len(value.sharding.device_set) == N_DEV and not value.sharding.is_fully_replicated
    assert _leaves_equal(a1.env_state, jax.device_get(b1.env_state)), "games differ"
    assert int(a1.buffer.count) == 8, "the ring did not fill"
    np.testing.assert_allclose(b1.buffer.data.policy, a1.buffer.data.policy, rtol=1e-5, atol=1e-6)


def check_driver_resume_other_device_count(tmp: str) -> None:
    """run_training on 4 devices, then resumed on 2: the checkpoint reshards, the run completes."""
    import jax

    from jaxgames.agents import ppo
    from jaxgames.training.driver import run_training

    cfg = ppo.default_config(
        "tic_tac_toe",
        num_envs=8,
        num_steps=4,
        num_minibatches=2,
        update_epochs=1,
        updates_per_chunk=1,
        total_steps=64,
        net={"hidden": 16, "layers": 1},
        eval_games=0,
    )
    run = os.path.join(tmp, "run")
    first = run_training(
        "ppo", cfg, run, progress=False, max_chunks=1, devices=N_DEV, echo=lambda s: None
    )
    assert first.chunks_run == 1 and not first.completed
    assert _is_split(first.state.env_state.current_player, N_DEV)
    rest = run_training("ppo", cfg, run, progress=False, devices=2, echo=lambda s: None)
    assert rest.completed and rest.chunks_run == 1
    assert len(rest.state.env_state.current_player.sharding.device_set) == 2
    try:
        run_training(
            "ppo",
            cfg.override({"num_envs": 6, "num_minibatches": 1}),
            os.path.join(tmp, "bad"),
            progress=False,
            devices=N_DEV,
        )
    except ValueError as e:
        assert "multiple of the number of devices" in str(e), e
        assert not os.path.exists(os.path.join(tmp, "bad")), (
            "a rejected run left a directory behind"
        )
    else:
        raise AssertionError("num_envs=6 on 4 devices was accepted")
    del jax


def child(tmp: str) -> None:
    import jax

    assert len(jax.devices()) == N_DEV, jax.devices()
    checks = {
        "rollout_tic_tac_toe": lambda: check_rollout("tic_tac_toe", {}),
        "rollout_reversi": lambda: check_rollout("reversi", {"size": 8}),
        "ppo_update": check_ppo_update,
        "dqn_update": check_dqn_update,
        "alphazero_update": check_alphazero_update,
        "driver_resume": lambda: check_driver_resume_other_device_count(tmp),
    }
    for name, fn in checks.items():
        try:
            fn()
            print(json.dumps({"check": name, "ok": True}), flush=True)
        except Exception:  # noqa: BLE001 - reported to the parent
            print(
                json.dumps({"check": name, "ok": False, "error": traceback.format_exc()[-3000:]}),
                flush=True,
            )


# ----------------------------------------------------------------------------- parent side
@pytest.fixture(scope="module")
def child_results(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("distributed"))
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={N_DEV}"
    ).strip()
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), tmp],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[r["check"]] = r
    if not results:
        pytest.fail(
            f"the {N_DEV}-device child failed (rc {proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    return results


@pytest.mark.parametrize(
    "check",
    [
        "rollout_tic_tac_toe",
        "rollout_reversi",
        "ppo_update",
        "dqn_update",
        "alphazero_update",
        "driver_resume",
    ],
)
def test_sharded_matches_single_device(child_results, check):
    r = child_results.get(check)
    assert r is not None, f"check {check} did not run (child crashed?)"
    assert r["ok"], r.get("error")


def test_resolve_devices_errors():
    import jax

    from jaxgames import distributed

    assert len(distributed.resolve_devices()) == len(jax.devices())
    assert len(distributed.resolve_devices("all")) == len(jax.devices())
    assert len(distributed.resolve_devices("1")) == 1
    with pytest.raises(ValueError, match="between 1 and"):
        distributed.resolve_devices(len(jax.devices()) + 1)
    with pytest.raises(ValueError, match="'all' or a positive integer"):
        distributed.resolve_devices("many")
    for bad in (2.0, True, object()):  # one line naming the value, not a TypeError
        with pytest.raises(ValueError, match="expected 'all', a count, or a list"):
            distributed.resolve_devices(bad)
    with pytest.raises(ValueError, match="listed twice"):
        distributed.make_mesh([jax.devices()[0]] * 2)


def test_partition_specs():
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    from jaxgames import distributed

    state = {
        "params": {"w": jnp.zeros((8, 3))},
        "env_state": {"board": jnp.zeros((8, 9)), "n": jnp.int32(0)},
        "buffer": {"data": jnp.zeros((5, 8, 2)), "count": jnp.int32(0)},
    }
    assert distributed.default_partition(state) == {
        "params": {"w": P()},
        "env_state": {"board": P("data"), "n": P()},
        "buffer": {"data": P(), "count": P()},
    }
    custom = distributed.partition_by_field(env_state=0, buffer=1)(state)
    assert (
        custom["buffer"] == {"data": P(None, "data"), "count": P()} and custom["params"]["w"] == P()
    )
    mesh = distributed.make_mesh(1)
    sh = distributed.state_shardings(mesh, state)
    assert sh["env_state"]["board"].spec == P("data") and sh["params"]["w"].spec == P()


def test_benchmark_scaling_efficiency():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "benchmark_throughput", os.path.join(ROOT, "experiments", "benchmark_throughput.py")
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = [
        dict(game="g", impl="jaxgames", batch=64, devices=n, steps_per_s=v)
        for n, v in ((1, 100.0), (2, 150.0), (4, 400.0))
    ]
    eff = {r["devices"]: (r["speedup"], r["efficiency"]) for r in bench.scaling_rows(rows)}
    assert eff == {1: (1.0, 1.0), 2: (1.5, 0.75), 4: (4.0, 1.0)}


if __name__ == "__main__":
    child(sys.argv[1])
