"""DQN: n-step negamax targets (hand-computed), legal-only epsilon-greedy and double-DQN
selection, epsilon schedule, config errors, driver resume equivalence, CLI + load_policy."""

import dataclasses
import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxgames
from jaxgames.agents import dqn
from jaxgames.agents.common import batch_observation
from jaxgames.agents.games_batch import make_training_games
from jaxgames.agents.replay import make_trajectory_buffer
from jaxgames.runs import load_agent, load_policy


# ---------------------------------------------------------------------------- n-step returns
def test_nstep_return_hand_computed():
    g = 0.9
    # plies: X, O, X wins (done), then a fresh game X', O', X'
    r = jnp.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    d = jnp.array([0, 0, 1, 0, 0, 0], bool)
    s = jnp.array([-1.0, -1.0, 1.0, -1.0, -1.0, -1.0])

    def windows(x, t, n):
        return x[t : t + n]

    expect = {  # (start, n): (R, c)
        (0, 3): (g * g * 1.0, 0.0),  # X's move: X's own win two plies later
        (1, 2): (-g, 0.0),  # O's last move gets the loss paid on X's step
        (1, 1): (0.0, -g),  # n = 1: bootstrap from X's state, sign flipped
        (2, 3): (1.0, 0.0),  # the winning move; the next game is cut off
        (3, 3): (0.0, -(g**3)),  # three plies of the new game, odd number of sign flips
        (0, 2): (0.0, g * g),  # X to move again after two plies
    }
    for (t, n), (R, c) in expect.items():
        ret, disc = dqn.nstep_return(windows(r, t, n), windows(d, t, n), windows(g * s, t, n))
        np.testing.assert_allclose(
            [float(ret), float(disc)], [R, c], atol=1e-6, err_msg=f"start {t}, n {n}"
        )
    # a pass (the same player moves twice): A, A again, then B ends the game losing (r=-1 for B)
    ret, disc = dqn.nstep_return(
        jnp.array([0.0, 0.0, -1.0]), jnp.array([0, 0, 1], bool), g * jnp.array([1.0, -1.0, 1.0])
    )
    np.testing.assert_allclose([float(ret), float(disc)], [g * g * 1.0, 0.0], atol=1e-6)
    # batched windows
    ret, disc = dqn.nstep_return(
        jnp.stack([r[:3], r[1:4]]), jnp.stack([d[:3], d[1:4]]), g * jnp.stack([s[:3], s[1:4]])
    )
    np.testing.assert_allclose(np.asarray(ret), [g * g, -g], atol=1e-6)


def test_targets_from_a_real_game_through_the_buffer():
    """A scripted tic-tac-toe game played with record_plies (as training does), stored in the
    replay buffer, and read back as n-step transitions: hand-computed returns."""
    env = jaxgames.make("tic_tac_toe")
    games = make_training_games(env, num_envs=1)
    g = 0.9
    # X a1(0), O a2(3), X b1(1), O b2(4), X c1(2) wins; then a new game: X 4, O 0, X 8
    actions = [0, 3, 1, 4, 2, 4, 0, 8]
    buf = make_trajectory_buffer(capacity=16, num_envs=1)
    key = jax.random.PRNGKey(0)
    state = jax.vmap(env.init)(key[None])
    bstate = buf.init(
        jax.tree_util.tree_map(
            lambda x: x[0], dqn.record_plies(games, state, jnp.zeros(1, jnp.int32), key, g)[1]
        )
    )
    states = []
    record, add = jax.jit(functools.partial(dqn.record_plies, games, gamma=g)), jax.jit(buf.add)
    for i, a in enumerate(actions):
        states.append(state)
        state, trans, _ = record(state, jnp.array([a], jnp.int32), jax.random.PRNGKey(i))
        bstate = add(bstate, trans)
    np.testing.assert_array_equal(np.asarray(bstate.data.reward[:8, 0]), [0, 0, 0, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(bstate.data.done[:8, 0]), [0, 0, 0, 0, 1, 0, 0, 0])

    @functools.partial(jax.jit, static_argnums=1)
    def batch(t, n):
        return dqn.nstep_batch(buf, bstate, t + jnp.arange(n + 1)[None], jnp.zeros(1, jnp.int32))

    cases = {  # (start, n): (R, c)
        (3, 2): (-g, 0.0),  # O's last move (b2): the loss arrives through X's winning step
        (3, 1): (0.0, -g),  # ... or, with n = 1, by bootstrapping from X's winning position
        (2, 3): (g * g, 0.0),  # X's b1 leads to X's own win
        (0, 2): (0.0, g * g),  # X, O, then X to move: bootstrap with +g^2
        (1, 3): (0.0, -(g**3)),  # O's a2 ... three plies later X moves (negated)
        (4, 3): (1.0, 0.0),  # the winning move itself
        (5, 2): (0.0, g * g),  # the next game
    }
    for (t, n), (R, c) in cases.items():
        b = batch(t, n)
        np.testing.assert_allclose(
            [float(b.ret[0]), float(b.discount[0])], [R, c], atol=1e-6, err_msg=f"start {t}, n {n}"
        )
        assert int(b.action[0]) == actions[t]
        np.testing.assert_array_equal(
            np.asarray(b.obs[0]), np.asarray(batch_observation(states[t])[0])
        )
        np.testing.assert_array_equal(
            np.asarray(b.next_mask[0]), np.asarray(states[t + n].legal_action_mask[0])
        )
        np.testing.assert_array_equal(
            np.asarray(b.next_obs[0]), np.asarray(batch_observation(states[t + n])[0])
        )
    # the bootstrap: y = R + c * Q_target(s', a*) with a* the LEGAL argmax of the selector
    b = batch(3, 1)  # s' = X to move with a2, b1 taken by ... (legal: not 0, 1, 3, 4)
    q_sel = jnp.zeros((1, 9)).at[0, 0].set(9.0).at[0, 2].set(1.0)  # illegal square 0 is the largest
    q_tgt = jnp.arange(9, dtype=jnp.float32)[None] / 10
    assert not bool(b.next_mask[0, 0]) and bool(b.next_mask[0, 2])
    np.testing.assert_allclose(float(dqn.bootstrap_target(b, q_sel, q_tgt)[0]), -g * 0.2, atol=1e-6)


# ---------------------------------------------------------------------------- loss
def test_huber_hand_computed():
    """0.5 x^2 within +-delta, delta (|x| - delta / 2) outside: the two meet at |x| = delta."""
    x = jnp.array([0.5, -1.0, 1.0 + 1e-6, 3.0, -3.0])
    want = [0.125, 0.5, 0.5 + 1e-6, 2.5, 2.5]
    np.testing.assert_allclose(np.asarray(dqn.huber(x, 1.0)), want, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(dqn.huber(x, 2.0)), [0.125, 0.5, 0.5, 4.0, 4.0], atol=1e-5
    )


def random_nstep_batch(key, n=32):
    """n random tic-tac-toe n-step windows (returns -1..1, discount -0.81, centre legal next)."""
    k = jax.random.split(key, 3)
    obs, next_obs = (jax.random.uniform(kk, (n, 3, 3, 2)).round() for kk in k[:2])
    next_mask = (jax.random.uniform(k[2], (n, 9)) < 0.7).at[:, 4].set(True)
    return dqn.NStepBatch(
        obs, jnp.ones((n, 9), bool), jnp.zeros(n, jnp.int32), jnp.linspace(-1, 1, n),
        jnp.full(n, -0.81), next_obs, next_mask,
    )  # fmt: skip


def online_and_target(cfg):
    """(agent, online params, target params) of ``cfg``: two different initialisations."""
    agent = dqn.make_algorithm(cfg).agent
    return agent, agent.init_params(jax.random.PRNGKey(0)), agent.init_params(jax.random.PRNGKey(1))


@pytest.mark.parametrize("double", [True, False])
def test_loss_bootstraps_from_the_target_network(double):
    """dqn_loss's target, re-derived in numpy: y = R + c Q_target(s', a*) with a* the legal
    argmax of the online network's Q (double DQN) or of the target network's own; the loss is
    the mean Huber (delta 1) of Q(s, a) - y. The two networks pick different a* on this batch."""
    cfg = dataclasses.replace(tiny_config(), double_dqn=double)
    agent, online, target = online_and_target(cfg)
    batch = random_nstep_batch(jax.random.PRNGKey(2))
    loss, aux = dqn.dqn_loss(agent, cfg, online, target, batch)
    q_on, q_tg = (
        np.asarray(agent.apply(p, batch.next_obs)[0], np.float64) for p in (online, target)
    )
    legal = np.asarray(batch.next_mask)
    pick = [np.argmax(np.where(legal, q, -np.inf), -1) for q in (q_on, q_tg)]
    assert (pick[0] != pick[1]).any()
    a_star = pick[0] if double else pick[1]
    y = np.asarray(batch.ret) + np.asarray(batch.discount) * q_tg[np.arange(32), a_star]
    np.testing.assert_allclose(float(aux["target"]), y.mean(), rtol=1e-5, atol=1e-6)
    q_a = np.asarray(agent.apply(online, batch.obs)[0], np.float64)[:, 0]
    d = np.abs(q_a - y)
    np.testing.assert_allclose(
        float(loss), np.mean(np.where(d <= 1, 0.5 * d**2, d - 0.5)), rtol=1e-5
    )


def test_the_target_network_moves_only_when_synced():
    """gradient_steps one step at a time, target_period 3: after steps 1 and 2 the target
    network is the initial one, after step 3 (hard copy, tau 1) the online network; with tau
    0.5 and a sync every step it is the average of the two."""
    cfg = tiny_config()
    agent, online, target = online_and_target(cfg)
    buf = make_trajectory_buffer(16, 8)
    item = dqn.Transition(
        jnp.zeros((3, 3, 2)), jnp.ones(9, bool), jnp.int32(0), jnp.float32(0), jnp.bool_(False),
        jnp.float32(-0.9),
    )  # fmt: skip
    bstate = buf.init(item)
    for t in range(8):
        rows = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (8, *jnp.shape(x))), item)
        rows = rows._replace(
            obs=jax.random.uniform(jax.random.PRNGKey(10 + t), (8, 3, 3, 2)).round(),
            reward=jax.random.normal(jax.random.PRNGKey(20 + t), (8,)),
        )
        bstate = buf.add(bstate, rows)
    opt = optax.adam(1e-2)
    zero = jnp.int32(0)
    state = dqn.DQNState(
        online, target, opt.init(online), None, bstate, jax.random.PRNGKey(3), zero, zero, zero
    )

    def same(a, b):
        return all(map(np.array_equal, jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)))

    hard = dataclasses.replace(cfg, target_period=3, gradient_steps=1, target_tau=1.0)
    step = jax.jit(lambda s, k: dqn.gradient_steps(agent, opt, buf, hard, s, k)[0])
    for i in range(1, 4):
        p, t, o, g = step(state, jax.random.PRNGKey(3 + i))
        state = state.replace(params=p, target_params=t, opt_state=o, grad_steps=g)
        assert int(g) == i and not same(p, online)
        assert same(t, p) if i == 3 else same(t, target), f"after step {i}"
    soft = dataclasses.replace(cfg, target_period=1, gradient_steps=1, target_tau=0.5)
    state = state.replace(target_params=target)
    p, t, _, _ = dqn.gradient_steps(agent, opt, buf, soft, state, jax.random.PRNGKey(9))[0]
    for got, a, b in zip(*map(jax.tree_util.tree_leaves, (t, target, p))):
        np.testing.assert_allclose(
            np.asarray(got), 0.5 * np.asarray(a) + 0.5 * np.asarray(b), rtol=1e-6
        )


# ---------------------------------------------------------------------------- acting
def test_epsilon_greedy_only_legal_moves(key):
    k_mask, k_q, k_act = jax.random.split(key, 3)
    mask = jax.random.bernoulli(k_mask, 0.3, (512, 9)).at[:, 4].set(False)
    mask = mask.at[jnp.arange(512), jax.random.randint(k_q, (512,), 0, 9) % 4].set(
        True
    )  # >= 1 legal
    q = jax.random.normal(k_q, (512, 9)) + jnp.where(mask, 0.0, 100.0)  # illegal moves look best
    for eps in (0.0, 0.3, 1.0):
        for k in jax.random.split(k_act, 4):
            a = dqn.epsilon_greedy(k, q, mask, jnp.float32(eps))
            assert bool(jnp.all(jnp.take_along_axis(mask, a[:, None], 1))), eps
    greedy = dqn.epsilon_greedy(k_act, q, mask, jnp.float32(0.0))
    np.testing.assert_array_equal(
        np.asarray(greedy), np.asarray(jnp.argmax(jnp.where(mask, q, -1e9), -1))
    )
    # epsilon = 1: uniform over the legal moves of one state
    one = jnp.zeros(9, bool).at[jnp.array([1, 5, 7])].set(True)
    a = jax.vmap(lambda k: dqn.epsilon_greedy(k, q[0], one, jnp.float32(1.0)))(
        jax.random.split(key, 3000)
    )
    counts = np.bincount(np.asarray(a), minlength=9)
    assert counts[[1, 5, 7]].min() > 850 and counts.sum() == counts[[1, 5, 7]].sum()


def test_epsilon_schedule():
    cfg = dqn.DQNConfig(eps_start=1.0, eps_end=0.1, eps_decay=5000, eps_unit="games")

    def at(g, s=0):
        return float(dqn.epsilon_at(cfg, jnp.int32(g), jnp.int32(s)))

    assert (
        at(0) == pytest.approx(1.0)
        and at(2500, 10**6) == pytest.approx(0.55)
        and at(5000) == pytest.approx(0.1)
    )
    assert at(10**6) == pytest.approx(0.1)
    cfg = dqn.DQNConfig(eps_start=0.5, eps_end=0.0, eps_decay=100, eps_unit="steps")
    assert float(dqn.epsilon_at(cfg, jnp.int32(10**6), jnp.int32(50))) == pytest.approx(0.25)


def test_qpolicy_value_is_max_legal_q():
    q = jnp.array([[3.0, 1.0, 2.0], [0.5, -1.0, 9.0]])
    mask = jnp.array([[False, True, True], [False, False, False]])
    np.testing.assert_allclose(np.asarray(dqn.max_legal_q(q, mask)), [2.0, 0.0])


def test_config_errors():
    with pytest.raises(ValueError, match="eps_unit"):
        dqn.DQNConfig(eps_unit="episodes")
    with pytest.raises(ValueError, match="n_step"):
        dqn.DQNConfig(n_step=0)
    with pytest.raises(ValueError, match="target_tau"):
        dqn.DQNConfig(target_tau=0.0)
    with pytest.raises(ValueError, match="unknown config field"):
        dqn.default_config("tic_tac_toe").override(["--epsilon=0.3"])


# ---------------------------------------------------------------------------- driver
TINY = [
    "--network=mlp",
    "--net.hidden=16",
    "--net.layers=1",
    "--num-envs=8",
    "--batch-size=16",
    "--buffer-size=256",
    "--learning-starts=32",
    "--n-step=3",
    "--target-period=4",
    "--updates-per-chunk=6",
    "--eval-games=0",
    "--eps-decay=20",
]


def tiny_config():
    return dqn.default_config("tic_tac_toe").override(
        TINY + ["--total-steps=144"]
    )  # 3 chunks of 48 steps


@pytest.mark.parametrize("rollout_steps", [1, 3])
def test_the_schedule_spans_the_gradient_steps_taken(rollout_steps, key):
    """optimizer_steps (the annealed learning rate's length) counts only the updates that
    learn: none before learning_starts plies and an n-step window are stored."""
    cfg = tiny_config().override([f"--rollout-steps={rollout_steps}", "--anneal-lr=true"])
    state, metrics = jax.jit(dqn.make_train(cfg))(key)
    assert int(state.grad_steps) == cfg.optimizer_steps
    assert float(metrics["learning"][0]) < 1.0  # the first chunk waited


def test_a_run_that_ends_before_learning_starts_is_refused(key):
    """learning_starts at the run's last update's plies: that update learns; one ply more and
    no update would, which is refused with the config (before any run directory is made)."""
    cfg = tiny_config().override(["--rollout-steps=2"])
    last = cfg.num_updates * cfg.steps_per_update
    edge = cfg.override([f"--learning-starts={last}"])
    assert edge.first_learning_update == edge.num_updates
    state, _ = jax.jit(dqn.make_train(edge))(key)
    assert int(state.grad_steps) == edge.optimizer_steps == edge.gradient_steps
    with pytest.raises(ValueError, match=f"invalid learning_starts={last + 1}: the run's"):
        cfg.override([f"--learning-starts={last + 1}"])
    with pytest.raises(ValueError, match="invalid learning_starts=0: .*n-step"):  # no window
        cfg.override(["--learning-starts=0", f"--n-step={cfg.num_updates * 2}"])


@pytest.mark.parametrize("num_envs", [4, 64, 96])
def test_scaled_to_keeps_the_learning_per_ply(num_envs):
    """scaled_to: each ply is replayed as often, the ring spans the same plies of every game and
    fills as far before learning, the target is refreshed after as many new plies, the batch
    grows with the games up to the cap (then more gradient steps), the learning rate with the
    square root of the batch's growth."""
    base = tiny_config()  # 8 games, batches of 16, 1 gradient step, target every 4 steps
    cfg = base.scaled_to(num_envs, max_minibatch=64)
    growth = num_envs / base.num_envs

    def replayed_per_ply(c):
        return c.gradient_steps * c.batch_size / c.steps_per_update

    def plies_between_refreshes(c):
        return c.target_period / c.gradient_steps * c.steps_per_update

    assert cfg.num_envs == num_envs and cfg.batch_size == min(round(16 * growth), 64)
    assert replayed_per_ply(cfg) == replayed_per_ply(base)
    assert plies_between_refreshes(cfg) == plies_between_refreshes(base)
    assert cfg.buffer_rows == base.buffer_rows and cfg.buffer_size == base.buffer_rows * num_envs
    assert cfg.learning_starts / num_envs == base.learning_starts / base.num_envs
    assert cfg.learning_rate == pytest.approx(
        base.learning_rate * (cfg.batch_size / 16) ** 0.5, rel=1e-5
    )
    for name in ("rollout_steps", "n_step", "eps_decay", "eps_unit", "total_steps", "net"):
        assert getattr(cfg, name) == getattr(base, name)
    back = base.scaled_to(16).scaled_to(8)  # below the cap, the rule undoes itself
    assert dataclasses.replace(back, learning_rate=base.learning_rate) == base
    assert back.learning_rate == pytest.approx(base.learning_rate, rel=1e-5)


def test_a_scaled_config_trains_on_the_cpu(key):
    """32 games with batches capped at 32 (two gradient steps per update): one chunk on the
    CPU, every gradient step taken, finite losses."""
    cfg = tiny_config().scaled_to(32, max_minibatch=32)
    assert (cfg.batch_size, cfg.gradient_steps, cfg.target_period) == (32, 2, 2)
    algo = dqn.make_algorithm(cfg)
    state, metrics = jax.jit(algo.chunk)(algo.init(key))
    assert int(state.grad_steps) > 0 and int(state.grad_steps) % 2 == 0
    assert all(np.isfinite(np.asarray(v)).all() for v in metrics.values())


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """An uninterrupted run through the CLI (the registry makes `train dqn` exist)."""
    from jaxgames.cli import main

    runs = tmp_path_factory.mktemp("runs")
    code = main(
        [
            "train",
            "dqn",
            "--game",
            "tic_tac_toe",
            "--total-steps",
            "144",
            "--run-name",
            "full",
            "--runs-dir",
            str(runs),
            "--no-progress",
            *TINY,
        ]
    )
    assert code == 0
    return os.path.join(runs, "full")


def test_resume_is_bit_exact(cli_run, tmp_path):
    from jaxgames.runs import read_run_config
    from jaxgames.training.driver import run_training

    name, cfg = read_run_config(cli_run)
    assert name == "dqn" and cfg == tiny_config()
    run_dir = str(tmp_path / "interrupted")
    first = run_training("dqn", cfg, run_dir, progress=False, max_chunks=1, echo=lambda s: None)
    assert first.chunks_run == 1 and not first.completed
    second = run_training("dqn", cfg, run_dir, progress=False, echo=lambda s: None)
    assert second.chunks_run == 2 and second.completed
    # the whole train state (params, target, optimiser, envs, replay buffer, key) bit for bit
    from jaxgames.runs.checkpoint import CheckpointStore

    store = CheckpointStore(os.path.join(cli_run, "checkpoints"))
    try:
        template = jax.eval_shape(second.algorithm.init, jax.random.PRNGKey(cfg.seed))
        chunk, full = store.restore_latest(template)
    finally:
        store.close()
    assert chunk == 3
    for a, b in zip(
        jax.tree_util.tree_leaves(second.state), jax.tree_util.tree_leaves(full), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert load_agent(cli_run).chunk == 3
    # the runs learned something (gradient steps happened) and the buffer is part of the state
    assert int(second.state.grad_steps) > 0 and int(second.state.buffer.count) == 18


def test_dqn_run_loads_through_load_policy(cli_run, key):
    policy = load_policy(cli_run)
    assert isinstance(policy, dqn.QPolicy)
    env = jaxgames.make("tic_tac_toe")
    states = jax.vmap(env.init)(jax.random.split(key, 16))
    actions = jax.jit(jax.vmap(policy))(jax.random.split(key, 16), states)
    assert bool(jnp.all(jnp.take_along_axis(states.legal_action_mask, actions[:, None], 1)))
    # greedy = legal argmax of Q; value = largest legal Q
    state = env.step(env.init(key), jnp.int32(4))
    q, _ = policy.agent.apply(policy.params, state.observation)
    legal = state.legal_action_mask
    assert int(policy(key, state)) == int(jnp.argmax(jnp.where(legal, q, -jnp.inf)))
    np.testing.assert_allclose(
        float(policy.value(state)), float(jnp.max(jnp.where(legal, q, -jnp.inf))), rtol=1e-6
    )
