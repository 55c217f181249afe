"""Run driver: outputs, bit-exact resume, corrupt-checkpoint fallback, config clashes,
load_policy, and evaluation inside training."""

import dataclasses
import json
import os
import re
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from tiny_configs import TINY_PPO

import jaxgames
from jaxgames.agents import ppo
from jaxgames.core import random_policy
from jaxgames.evaluation.match import evaluate_vs
from jaxgames.runs import load_agent, load_policy
from jaxgames.runs.checkpoint import CheckpointError
from jaxgames.training.driver import run_training

CFG = TINY_PPO


def leaves_equal(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(
        np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb)
    )


def strip_times(records):
    return [
        {k: v for k, v in r.items() if k not in ("time", "chunk_seconds", "steps_per_sec")}
        for r in records
    ]


def corrupt(step_dir):
    for root, _, files in os.walk(step_dir):
        for f in files:
            with open(os.path.join(root, f), "wb") as fh:
                fh.write(b"\x00garbage")


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp("runs") / "full")
    summary = run_training("ppo", CFG, run_dir, progress=False)
    return run_dir, summary


def test_run_outputs(full_run):
    run_dir, summary = full_run
    assert summary.completed and summary.chunks_run == 4
    with open(os.path.join(run_dir, "config.json")) as f:
        data = json.load(f)
    assert data["algorithm"] == "ppo" and ppo.PPOConfig.from_dict(data["config"]) == CFG
    lines = open(os.path.join(run_dir, "metrics.jsonl")).read().splitlines()
    assert [json.loads(line)["chunk"] for line in lines] == [1, 2, 3, 4]
    rec = json.loads(lines[-1])
    assert rec["env_steps"] == 4 * 64
    for side in ("first", "second"):
        total = sum(rec[f"eval/{o}_{side}"] for o in ("win", "draw", "loss"))
        assert abs(total - 1.0) < 1e-6
    assert os.path.exists(os.path.join(run_dir, "metrics.csv"))
    assert os.path.exists(os.path.join(run_dir, "learning_curve.png"))
    assert sorted(os.listdir(os.path.join(run_dir, "checkpoints"))) == [
        "3",
        "4",
    ]  # keep_checkpoints=2


def test_interrupted_run_resumes_bit_exactly(full_run, tmp_path):
    ref_dir, ref = full_run
    run_dir = str(tmp_path / "resumed")
    part = run_training("ppo", CFG, run_dir, progress=False, max_chunks=2)  # "killed" after chunk 2
    assert not part.completed and part.chunks_run == 2
    msgs = []
    rest = run_training("ppo", CFG, run_dir, progress=False, echo=msgs.append)
    assert rest.completed and rest.chunks_run == 2 and "from chunk 2/4" in msgs[0]
    assert leaves_equal(rest.state, ref.state)  # params, optimiser, envs, key: bit for bit
    assert strip_times(rest.records) == strip_times(ref.records)
    # a finished run reruns as a no-op
    again = run_training("ppo", CFG, run_dir, progress=False, echo=msgs.append)
    assert again.chunks_run == 0 and leaves_equal(again.state, ref.state)


def test_an_old_run_with_a_retired_field_resumes(full_run, tmp_path):
    """A run whose config.json holds a field jaxgames has removed since (score_utility, at its
    old default) loads and resumes bit for bit; at any other value it is refused in one line."""
    _, ref = full_run
    run_dir = str(tmp_path / "old")
    run_training("ppo", CFG, run_dir, progress=False, max_chunks=2)
    path = os.path.join(run_dir, "config.json")
    with open(path) as f:
        record = json.load(f)

    def write_retired(value):
        with open(path, "w") as f:
            json.dump({**record, "config": {**record["config"], "score_utility": value}}, f)

    write_retired(0.0)
    assert load_agent(run_dir).config == CFG
    rest = run_training("ppo", CFG, run_dir, progress=False)
    assert rest.completed and rest.chunks_run == 2 and leaves_equal(rest.state, ref.state)
    write_retired(0.25)
    why = r"config field 'score_utility' was removed from jaxgames \(value 0.25 given\)"
    with pytest.raises(ValueError, match=f"cannot be resumed: {why}"):
        run_training("ppo", CFG, run_dir, progress=False)
    with pytest.raises(ValueError, match=why):
        load_agent(run_dir)


def test_corrupt_latest_checkpoint_falls_back(full_run, tmp_path):
    _, ref = full_run
    run_dir = str(tmp_path / "corrupt")
    run_training("ppo", CFG, run_dir, progress=False, max_chunks=3)
    corrupt(os.path.join(run_dir, "checkpoints", "3"))
    with pytest.warns(UserWarning, match="checkpoint 3 .* unreadable"):
        out = run_training("ppo", CFG, run_dir, progress=False)
    assert out.completed and out.chunks_run == 2
    assert leaves_equal(out.state, ref.state)
    assert os.listdir(os.path.join(run_dir, "corrupt_checkpoints"))
    assert [r["chunk"] for r in out.records] == [1, 2, 3, 4]


def test_no_usable_checkpoint_is_an_error_and_touches_nothing(full_run, tmp_path):
    run_dir = str(tmp_path / "broken")
    shutil.copytree(full_run[0], run_dir)
    for step in os.listdir(os.path.join(run_dir, "checkpoints")):
        corrupt(os.path.join(run_dir, "checkpoints", step))
    before = open(os.path.join(run_dir, "metrics.jsonl")).read()
    with pytest.warns(UserWarning), pytest.raises(CheckpointError, match="none of the checkpoints"):
        run_training("ppo", CFG, run_dir, progress=False)
    assert open(os.path.join(run_dir, "metrics.jsonl")).read() == before
    with pytest.warns(UserWarning), pytest.raises(CheckpointError):
        load_policy(run_dir)
    # checkpoints deleted but metrics present: refuse to start over on top of them
    shutil.rmtree(os.path.join(run_dir, "checkpoints"))
    with pytest.raises(CheckpointError, match="no checkpoint"):
        run_training("ppo", CFG, run_dir, progress=False)


def test_different_config_or_foreign_dir_is_refused(full_run, tmp_path):
    run_dir, _ = full_run
    with pytest.raises(ValueError, match=r"different config \(learning_rate: 0.0003 -> 0.001\)"):
        run_training("ppo", CFG.override({"learning_rate": 1e-3}), run_dir, progress=False)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty and has no config.json"):
        run_training("ppo", CFG, str(foreign), progress=False)
    assert os.listdir(foreign) == ["notes.txt"]
    # a process killed while creating config.json leaves its draft (and its lock): rerunning
    # the command starts the run, and the draft goes
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "config.json.4242.tmp").write_text('{"algorithm": "pp')
    (cut / ".lock").write_text("4242 nowhere\n")
    run_training("ppo", CFG, str(cut), progress=False, max_chunks=1)
    assert not [n for n in os.listdir(cut) if n.endswith(".tmp")]


def test_load_policy(full_run):
    run_dir, ref = full_run
    loaded = load_agent(run_dir)
    assert loaded.chunk == 4 and loaded.algorithm == "ppo" and loaded.config == CFG
    assert leaves_equal(loaded.params, ref.state.params)
    env = jaxgames.make("tic_tac_toe")
    state = env.step(env.init(jax.random.PRNGKey(0)), 4)
    for greedy in (True, False):
        pol = load_policy(run_dir, greedy=greedy)
        a = pol(jax.random.PRNGKey(1), state)
        assert a.dtype == jnp.int32 and a.shape == () and bool(state.legal_action_mask[a])
        batch = jax.tree_util.tree_map(lambda x: jnp.stack([x] * 5), state)
        acts = jax.jit(jax.vmap(pol))(jax.random.split(jax.random.PRNGKey(2), 5), batch)
        assert bool(jnp.all(state.legal_action_mask[acts]))
    v = pol.value(state)
    assert v.shape == () and -1.0 <= float(v) <= 1.0
    assert pol.probs(state)[4] == 0.0


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_policy(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="does not exist"):  # also a ValueError for callers
        load_policy(str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="no config.json"):
        load_policy(str(tmp_path))
    with pytest.raises(ValueError, match=r"jaxgames.load_pretrained\('reversi6'\)"):
        load_policy("pretrained:reversi6")  # a spec, not a folder: where to go instead
    for seed in (0, 1):  # a parent of --seeds runs: name them
        (tmp_path / f"seed{seed}").mkdir()
        (tmp_path / f"seed{seed}" / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="holds the runs of seeds: seed0, seed1"):
        load_policy(str(tmp_path))
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="corrupt"):
        load_policy(str(tmp_path))
    (tmp_path / "config.json").write_text(json.dumps({"algorithm": "ppo", "config": CFG.to_dict()}))
    with pytest.raises(CheckpointError, match="no checkpoints"):
        load_policy(str(tmp_path))


def first_legal(key, state):
    return jnp.argmax(state.legal_action_mask).astype(jnp.int32)


def test_evaluate_vs_counts_each_side():
    env = jaxgames.make("tic_tac_toe")
    # X: 0, 2, 4, 6 / O: 1, 3, 5 -> X completes the 2-4-6 diagonal on ply 7, every game
    rates = jax.jit(lambda k: evaluate_vs(env, first_legal, first_legal, k, 3))(
        jax.random.PRNGKey(0)
    )
    assert float(rates["win_first"]) == 1.0 and float(rates["loss_second"]) == 1.0
    rates = jax.jit(lambda k: evaluate_vs(env, random_policy, random_policy, k, 1000))(
        jax.random.PRNGKey(1)
    )
    # random vs random tic-tac-toe: X wins ~58.5%, O ~28.8%, draws ~12.7%
    assert (
        abs(float(rates["win_first"]) - 0.585) < 0.05
        and abs(float(rates["win_second"]) - 0.288) < 0.05
    )
    with pytest.raises(ValueError, match="n_games"):
        evaluate_vs(env, random_policy, random_policy, jax.random.PRNGKey(0), 0)


def test_run_directory_as_opponent_spec(full_run):
    from jaxgames.evaluation import arena
    from jaxgames.specs import make_opponent

    run_dir, _ = full_run
    env = jaxgames.make("tic_tac_toe")
    res = arena(
        make_opponent(run_dir, env), make_opponent("random", env), env, 20, jax.random.PRNGKey(0)
    )
    assert res.overall.games == 20
    with pytest.raises(ValueError, match="was trained on jaxgames.make\\('tic_tac_toe'\\), not on"):
        make_opponent(run_dir, jaxgames.make("reversi", size=6))


def test_init_from_starts_a_run_from_an_agents_parameters(full_run, tmp_path):
    ref_dir, ref = full_run
    cfg = dataclasses.replace(CFG, init_from=ref_dir, seed=1)
    run_dir = str(tmp_path / "warm")
    msgs = []
    start = run_training("ppo", cfg, run_dir, progress=False, max_chunks=0, echo=msgs.append)
    fresh = jax.jit(ppo.make_algorithm(CFG).init)(jax.random.PRNGKey(1))
    assert leaves_equal(start.state.params, ref.state.params)  # the agent's network...
    assert leaves_equal(start.state.opt_state, fresh.opt_state)  # ...with a fresh optimiser
    assert leaves_equal(start.state.env_state, fresh.env_state)  # and fresh games
    assert msgs == [f"starting from the parameters of {ref_dir}"]
    with open(os.path.join(run_dir, "config.json")) as f:
        assert json.load(f)["config"]["init_from"] == ref_dir
    # it resumes from its own checkpoint (bit for bit), not from init_from again
    part = run_training("ppo", cfg, run_dir, progress=False, max_chunks=2)
    rest = run_training("ppo", cfg, run_dir, progress=False)
    whole = run_training("ppo", cfg, str(tmp_path / "whole"), progress=False)
    assert part.chunks_run == 2 and rest.completed
    assert leaves_equal(rest.state, whole.state)
    assert not leaves_equal(whole.state.params, ref.state.params)  # and it trained


def test_init_from_a_narrower_mlp_widens_it(full_run, tmp_path):
    """A 16-wide agent starts a 24-wide run: the same policy and value at the start (the new
    units' outgoing weights are zero), the run's own seed draws the new units, and a network
    of another depth is still refused."""
    ref_dir, ref = full_run
    cfg = dataclasses.replace(CFG, init_from=ref_dir, net={"hidden": 24, "layers": 1}, seed=1)
    msgs = []
    start = run_training(
        "ppo", cfg, str(tmp_path / "wide"), progress=False, max_chunks=0, echo=msgs.append
    )
    assert msgs == [
        "widening its network to {'hidden': 24, 'layers': 1} (it computes the same function)",
        f"starting from the parameters of {ref_dir}",
    ]
    assert start.state.params["params"]["Dense_0"]["kernel"].shape[1] == 24
    narrow, wide = ppo.make_algorithm(CFG).agent, ppo.make_algorithm(cfg).agent
    obs = jax.random.uniform(jax.random.PRNGKey(0), (16, *wide.observation_shape))
    for got, want in zip(wide.apply(start.state.params, obs), narrow.apply(ref.state.params, obs)):
        np.testing.assert_allclose(got, want, atol=1e-6)
    deeper = dataclasses.replace(cfg, net={"hidden": 24, "layers": 2})
    with pytest.raises(ValueError, match="does not fit this run's"):
        run_training("ppo", deeper, str(tmp_path / "deep"), progress=False)
    # the same shapes computing another function: ReLU weights in a tanh MLP
    tanh = dataclasses.replace(cfg, net={"hidden": 16, "layers": 1, "activation": "tanh"})
    with pytest.raises(ValueError, match="is not this run's .*: activation differ"):
        run_training("ppo", tanh, str(tmp_path / "tanh"), progress=False)


def test_dqn_starts_both_networks_from_the_agent():
    from jaxgames.agents import dqn

    algo = dqn.make_algorithm(dqn.default_config("tic_tac_toe"))
    init = jax.jit(algo.init)
    state = init(jax.random.PRNGKey(0))
    other = algo.params(init(jax.random.PRNGKey(1)))
    started = algo.start_from(state, other)
    assert leaves_equal(started.params, other) and leaves_equal(started.target_params, other)


@pytest.mark.parametrize(
    "init_from, why",
    [
        ("pretrained:reversi6", "it plays reversi"),
        ("random", "must be a run directory or 'pretrained:<name>'"),
        ("mcts:8:pretrained:tic_tac_toe", "must be a run directory"),
        ("pretrained:nope", "unknown pretrained agent"),
        ("runs/does-not-exist", "does not exist"),
        ("NET", "does not fit this run's (mlp {'hidden': 8, 'layers': 1})"),  # narrower
    ],
)
def test_init_from_errors_write_nothing(full_run, tmp_path, init_from, why):
    init_from = full_run[0] if init_from == "NET" else init_from
    cfg = dataclasses.replace(CFG, init_from=init_from, net={"hidden": 8, "layers": 1})
    run_dir = str(tmp_path / "bad")
    with pytest.raises(
        ValueError, match=re.escape(f"invalid init_from={init_from!r}: ") + f".*{re.escape(why)}"
    ):
        run_training("ppo", cfg, run_dir, progress=False)
    assert not os.path.exists(run_dir)


def test_init_from_must_be_a_clean_string():
    with pytest.raises(ValueError, match="invalid init_from="):
        dataclasses.replace(CFG, init_from=" runs/x")


_SAVE_ON_ANOTHER_DEVICE = """
import sys
import jax, jax.numpy as jnp
from jaxgames.runs.checkpoint import CheckpointStore
tree = {"w": jnp.arange(6.0).reshape(2, 3), "n": jnp.int32(7)}
tree = jax.device_put(tree, jax.devices()[2])  # a device the restoring process lacks
store = CheckpointStore(sys.argv[1], keep=1)
store.save(1, tree)
store.close()
"""


def test_checkpoint_saved_on_other_devices_restores_here(tmp_path):
    """A checkpoint records the devices it was saved from; loading it (``load_agent``'s
    template has no layout) must not need them: a run trained on a CPU is read on a GPU
    machine, and the reverse. Saved in a process with 3 CPU devices, on the third (read here
    on this process's default device: the CPU, or the GPU of a GPU machine)."""
    import subprocess
    import sys

    from jaxgames.runs.checkpoint import CheckpointStore

    ckpt = str(tmp_path / "ckpt")
    env = dict(
        os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=3"
    )
    subprocess.run(
        [sys.executable, "-c", _SAVE_ON_ANOTHER_DEVICE, ckpt], env=env, check=True, timeout=120
    )
    assert len(jax.devices()) < 3
    template = jax.eval_shape(lambda: {"w": jnp.zeros((2, 3)), "n": jnp.int32(0)})
    store = CheckpointStore(ckpt, keep=1)
    try:
        step, tree = store.restore_latest(template)
    finally:
        store.close()
    assert step == 1
    np.testing.assert_array_equal(tree["w"], np.arange(6.0).reshape(2, 3))
    assert int(tree["n"]) == 7
    assert tree["w"].devices() == {jax.devices()[0]}


# ----------------------------------------------------------------------------- seeds
SEEDS = [0, 1]


def seed_slice(tree, i):
    return jax.tree_util.tree_map(lambda x: x[i], tree)


def test_jit_vmap_init_equals_the_unbatched_init():
    """jit(vmap(init)) over 3 seeds finishes (the orthogonal initialisers run the keys one at
    a time: no batched QR to deadlock XLA:CPU, docs/known_issues/jit_vmap_init_hang.py) and
    gives each seed the unbatched init's values, bit for bit. Two hidden layers and both
    orthogonal heads: the shape that hung."""
    algo = ppo.make_algorithm(CFG.override({"net": {"hidden": 16, "layers": 2}}))
    keys = jnp.stack([jax.random.PRNGKey(s) for s in range(3)])
    batched = jax.jit(jax.vmap(algo.init))(keys)
    one = jax.jit(algo.init)
    for s in range(3):
        assert leaves_equal(seed_slice(batched, s), one(keys[s]))


@pytest.fixture(scope="module")
def seeds_run(tmp_path_factory):
    run_dir = str(tmp_path_factory.mktemp("runs") / "seeds")
    return run_dir, run_training("ppo", CFG, run_dir, seeds=SEEDS, progress=False)


def test_seeds_train_as_single_runs_do(full_run, seeds_run, tmp_path):
    """Each seed of one vmapped run is the single run of that seed: the same records (the
    evaluation games exactly) and the same train state to float tolerance, not bit for bit:
    vmapped, the networks' matmuls are batched ones, which sum in another order. Integer
    leaves (games, counters, keys) are equal."""
    run_dir, multi = seeds_run
    assert multi.completed and multi.chunks_run == 4 and multi.seeds == SEEDS
    single = {0: full_run[1], 1: run_training("ppo", CFG.override({"seed": 1}), str(tmp_path))}
    for i, s in enumerate(SEEDS):
        mine, ref = seed_slice(multi.state, i), single[s].state
        for a, b in zip(jax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(ref)):
            if jnp.issubdtype(a.dtype, jnp.floating):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        got, want = strip_times(multi.records[i]), strip_times(single[s].records)
        assert [{k: v for k, v in r.items() if k.startswith("eval/")} for r in got] == [
            {k: v for k, v in r.items() if k.startswith("eval/")} for r in want
        ]
        for r, w in zip(got, want):
            assert r == pytest.approx(w, rel=1e-4, abs=1e-6)
    assert not leaves_equal(seed_slice(multi.state, 0).params, seed_slice(multi.state, 1).params)


def test_a_seed_directory_is_an_ordinary_run(seeds_run):
    run_dir, multi = seeds_run
    for i, s in enumerate(SEEDS):
        seed_dir = os.path.join(run_dir, f"seed{s}")
        loaded = load_agent(seed_dir)
        assert loaded.chunk == 4 and loaded.config == CFG.override({"seed": s})
        assert leaves_equal(loaded.params, seed_slice(multi.state, i).params)
        lines = open(os.path.join(seed_dir, "metrics.jsonl")).read().splitlines()
        assert [json.loads(line)["chunk"] for line in lines] == [1, 2, 3, 4]
        assert os.path.exists(os.path.join(seed_dir, "learning_curve.png"))
        # keep_checkpoints=2, and one more: a run stopped between two seeds' saves resumes
        assert sorted(os.listdir(os.path.join(seed_dir, "checkpoints"))) == ["2", "3", "4"]
    assert sorted(os.listdir(run_dir)) == ["seed0", "seed1"]


def test_seeds_resume_from_their_newest_common_checkpoint(seeds_run, tmp_path):
    """Stopped by on_chunk after chunk 2, and as if killed after seed 0 saved chunk 2 and
    before seed 1 did: rerun, both seeds resume from chunk 1 and end bit for bit where the
    uninterrupted run did."""
    _, ref = seeds_run
    run_dir = str(tmp_path / "seeds")
    seen = []

    def stop_after_2(k, state, records):
        seen.append(
            (k, [r.get("chunk") for r in records], jax.tree_util.tree_leaves(state)[0].shape[0])
        )
        return k == 2

    part = run_training("ppo", CFG, run_dir, seeds=SEEDS, progress=False, on_chunk=stop_after_2)
    assert not part.completed and part.chunks_run == 2
    assert seen == [(0, [None, None], 2), (1, [1, 1], 2), (2, [2, 2], 2)]
    shutil.rmtree(os.path.join(run_dir, "seed1", "checkpoints", "2"))
    msgs = []
    rest = run_training("ppo", CFG, run_dir, seeds=SEEDS, progress=False, echo=msgs.append)
    assert rest.completed and rest.chunks_run == 3
    assert any("from chunk 1/4" in m for m in msgs)
    assert leaves_equal(rest.state, ref.state)
    for got, want in zip(rest.records, ref.records):
        assert strip_times(got) == strip_times(want)
    again = run_training("ppo", CFG, run_dir, seeds=SEEDS, progress=False)
    assert again.chunks_run == 0 and leaves_equal(again.state, ref.state)


def test_seeds_refuse_a_different_config_and_bad_seeds(seeds_run, tmp_path):
    run_dir, _ = seeds_run
    before = sorted(os.listdir(os.path.join(run_dir, "seed0")))
    with pytest.raises(ValueError, match=r"different config \(learning_rate: 0.0003 -> 0.001\)"):
        run_training("ppo", CFG.override({"learning_rate": 1e-3}), run_dir, seeds=SEEDS)
    assert sorted(os.listdir(os.path.join(run_dir, "seed0"))) == before
    # a seed added to the finished run: refused before any checkpoint is moved
    with pytest.raises(CheckpointError, match=r"share no chunk \(seed0 chunks 2-4, .*seed2 none"):
        run_training("ppo", CFG, run_dir, seeds=[*SEEDS, 2], progress=False)
    for s in SEEDS:
        seed_dir = os.path.join(run_dir, f"seed{s}")
        assert sorted(os.listdir(os.path.join(seed_dir, "checkpoints"))) == ["2", "3", "4"]
        assert sorted(os.listdir(seed_dir)) == before
    assert load_agent(os.path.join(run_dir, "seed0")).chunk == 4
    # a seed's folder trained on alone past the others: named as such, nothing moved
    apart = str(tmp_path / "apart")
    shutil.copytree(run_dir, apart)
    checkpoints = os.path.join(apart, "seed1", "checkpoints")
    for c in ("3", "4"):
        shutil.rmtree(os.path.join(checkpoints, c))
    os.rename(os.path.join(checkpoints, "2"), os.path.join(checkpoints, "1"))
    with pytest.raises(CheckpointError, match=r"seed0 chunks 2-4, seed1 chunks 1-1\): a seed's"):
        run_training("ppo", CFG, apart, seeds=SEEDS, progress=False)
    assert sorted(os.listdir(checkpoints)) == ["1"]
    for bad, why in (([], "at least one"), ([1, 1], "distinct"), (["a"], "integers")):
        with pytest.raises(ValueError, match=f"invalid seeds=.*{why}"):
            run_training("ppo", CFG, str(tmp_path / "bad"), seeds=bad)
    with pytest.raises(ValueError, match="invalid seed=-1"):
        run_training("ppo", CFG, str(tmp_path / "bad"), seeds=[-1])
    assert not os.path.exists(tmp_path / "bad")


def test_train_command_takes_seeds(tmp_path, capsys, monkeypatch):
    """``jaxgames train ... --seeds 0 1 2`` passes the seeds to the driver and names the run
    after them; --seed and --seeds together are refused in one line."""
    from jaxgames import cli
    from jaxgames.cli import train as train_cli
    from jaxgames.training.driver import RunSummary

    calls = []

    def fake(algorithm, config, run_dir, **kw):
        calls.append((run_dir, kw["seeds"]))
        return RunSummary(run_dir, None, None, [[], [], []], True, 0, kw["seeds"])

    monkeypatch.setattr(train_cli, "run_training", fake)
    base = ["train", "ppo", "--game", "tic_tac_toe", "--runs-dir", str(tmp_path), "--no-progress"]
    assert cli.main(base + ["--seeds", "0", "1", "2"]) == 0
    assert calls == [(os.path.join(str(tmp_path), "tic_tac_toe-ppo-seeds0-1-2"), [0, 1, 2])]
    assert "tic_tac_toe-ppo-seeds0-1-2/seed2" in capsys.readouterr().out
    assert cli.main(base + ["--seeds", "0", "1", "--seed", "3"]) == 2
    assert "--seed or --seeds" in capsys.readouterr().err
