"""PPO: masking, sampling, negamax GAE (hand-computed), loss on a fixed batch, vmap over seeds,
config errors."""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from tiny_configs import TINY_FIELDS

import jaxgames
from jaxgames.agents import common, ppo, presets
from jaxgames.agents.common import (
    greedy_masked,
    masked_entropy,
    masked_log_probs,
    negamax_gae,
    sample_masked,
)
from jaxgames.agents.rollout_learning import make_setup
from jaxgames.specs import make_partners


def tiny_config(**kw):
    return ppo.PPOConfig(**{**TINY_FIELDS, "total_steps": 128, "eval_games": 4, **kw})


def random_states(env, key, n, max_plies):
    """n states reached by 0..max_plies uniformly random legal plies (finished games included)."""
    k_len, k_play = jax.random.split(key)
    lengths = jax.random.randint(k_len, (n,), 0, max_plies + 1)

    def one(key, length):
        def body(i, carry):
            s, k = carry
            k, ka = jax.random.split(k)
            nxt = env.step(s, jaxgames.random_action(ka, s.legal_action_mask))
            return jax.tree_util.tree_map(lambda a, b: jnp.where(i < length, a, b), nxt, s), k

        return jax.lax.fori_loop(0, max_plies, body, (env.init(key), key))[0]

    return jax.jit(jax.vmap(one))(jax.random.split(k_play, n), lengths)


# ---------------------------------------------------------------------------- masking
@pytest.mark.parametrize("game", jaxgames.registered_games())
def test_masking_never_selects_illegal_actions(game, key):
    env = jaxgames.make(game)
    states = random_states(env, key, 128, 12)
    mask = states.legal_action_mask
    live = mask.any(-1)
    assert bool(live.any())
    # adversarial logits: illegal actions get huge (finite) logits
    k1, k2 = jax.random.split(key)
    logits = jax.random.normal(k1, mask.shape) * 5 + jnp.where(mask, 0.0, 1e30)
    for k in jax.random.split(k2, 8):
        a, logp = sample_masked(k, logits, mask)
        assert bool(jnp.all(jnp.take_along_axis(mask, a[:, None], 1)[:, 0] | ~live))
        assert bool(jnp.all(jnp.isfinite(logp)))
    g = greedy_masked(logits, mask)
    assert bool(jnp.all(jnp.take_along_axis(mask, g[:, None], 1)[:, 0] | ~live))
    p = jnp.exp(masked_log_probs(logits, mask))
    np.testing.assert_allclose(np.asarray(p.sum(-1)), 1.0, rtol=1e-5)
    assert bool(jnp.all(jnp.where(live[:, None] & ~mask, p, 0.0) == 0.0))
    ent = masked_entropy(logits, mask)
    assert bool(jnp.all(jnp.isfinite(ent))) and bool(
        jnp.all(ent <= jnp.log(jnp.maximum(mask.sum(-1), 1)) + 1e-4)
    )


def test_sample_masked_follows_the_masked_softmax():
    """Sampled frequencies match the masked softmax (chi-square, 200k draws per row), including
    tiny probabilities and a row with one legal move; illegal actions are never drawn."""
    from scipy import stats

    rng = np.random.default_rng(0)
    rows = [
        (np.array([2.0, -1.0, 0.5, 3.0, 0.0, -2.0, 1.0, 0.0]), np.array([1, 1, 0, 1, 1, 0, 1, 1])),
        (
            np.array([0.0, 9.0, -4.0, 0.0, 5.0, 1e30, -1e30, 0.0]),
            np.array([1, 1, 1, 0, 1, 0, 1, 1]),
        ),
        (np.zeros(8), np.array([0, 0, 0, 0, 0, 1, 0, 0])),
        (rng.normal(size=65) * 2, rng.random(65) < 0.2),
        (rng.normal(size=65), np.ones(65, bool)),
    ]
    n = 200_000

    def draw(key, logits, mask):
        tile = (n,) + logits.shape
        return sample_masked(key, jnp.broadcast_to(logits, tile), jnp.broadcast_to(mask, tile))

    draw = jax.jit(draw)
    for r, (logits, mask) in enumerate(rows):
        mask = np.asarray(mask, bool)
        p = np.asarray(jnp.exp(masked_log_probs(jnp.asarray(logits, jnp.float32), mask)))
        a, logp = draw(jax.random.PRNGKey(r), jnp.asarray(logits, jnp.float32), mask)
        a = np.asarray(a)
        counts = np.bincount(a, minlength=len(p))
        assert counts[~mask].sum() == 0, r
        np.testing.assert_allclose(np.asarray(logp), np.log(p[a]), rtol=1e-5, atol=1e-5)
        big = p * n >= 5  # chi-square cells; the rest must be (nearly) never drawn
        assert counts[~big].sum() <= max(5, 5 * p[~big].sum() * n), r
        if big.sum() > 1:
            expected = p[big] / p[big].sum() * counts[big].sum()
            chi2 = ((counts[big] - expected) ** 2 / expected).sum()
            assert stats.chi2.sf(chi2, big.sum() - 1) > 1e-4, (r, chi2)


def test_masked_gradients_are_finite_and_zero_on_illegal(key):
    logits = jax.random.normal(key, (4, 9))
    mask = jnp.arange(9)[None, :] % 2 == 0
    mask = jnp.broadcast_to(mask, (4, 9))
    g = jax.grad(lambda x: (masked_log_probs(x, mask)[:, 0] + masked_entropy(x, mask)).sum())(
        logits
    )
    assert bool(jnp.all(jnp.isfinite(g)))
    assert bool(jnp.all(jnp.where(mask, 0.0, g) == 0.0))


def test_policy_single_state_and_vmap_legal(key):
    env = jaxgames.make("tic_tac_toe")
    algo = ppo.make_algorithm(tiny_config())
    params = algo.agent.init_params(key)
    states = random_states(env, key, 64, 7)
    assert bool(states.legal_action_mask[0].any())
    for greedy in (True, False):
        pol = algo.agent.policy(params, greedy)
        a = jax.vmap(pol)(jax.random.split(key, 64), states)
        assert a.dtype == jnp.int32 and a.shape == (64,)
        live = states.legal_action_mask.any(-1)
        assert bool(
            jnp.all(jnp.take_along_axis(states.legal_action_mask, a[:, None], 1)[:, 0] | ~live)
        )
        one = jax.tree_util.tree_map(lambda x: x[0], states)
        assert pol(key, one).shape == ()
    assert pol.value(one).shape == () and abs(float(pol.value(one))) <= 1.0


# ---------------------------------------------------------------------------- negamax GAE
def test_negamax_gae_tictactoe_win_reaches_both_players():
    """X: t0, t2, t4 (wins, done); O: t1, t3; t5 is X's first move of the next game.

    With gamma = lambda = 1 and zero values, every X move gets +1 and every O move -1
    (O's last move at t3 receives the loss paid on X's step t4).
    """
    rewards = jnp.array([0, 0, 0, 0, 1, 0], jnp.float32)  # rewards[mover_t]
    dones = jnp.array([0, 0, 0, 0, 1, 0], bool)
    signs = -jnp.ones(6)
    values = jnp.zeros(6)
    adv, ret = negamax_gae(rewards, values, dones, signs, jnp.float32(0.0), 1.0, 1.0)
    np.testing.assert_allclose(adv, [1, -1, 1, -1, 1, 0])
    np.testing.assert_allclose(ret, [1, -1, 1, -1, 1, 0])


def test_negamax_gae_hand_computed_with_values_and_reset():
    """gamma = 0.9, lambda = 0.5.   t0: O moves (sign -1); t1: X wins (r = +1, done);
    t2: X opens the next game (sign -1); bootstrap V(s3) = 0.3 from O's view.

        A2 = 0 + 0.9 * (-0.3) - 0.1                     = -0.37
        A1 = 1 - 0.5                                    =  0.5   (done: no bootstrap)
        A0 = [0 + 0.9 * (-0.5) - 0.2] + 0.9*0.5*(-1)*0.5 = -0.875
    """
    adv, ret = negamax_gae(
        jnp.array([0.0, 1.0, 0.0]),
        jnp.array([0.2, 0.5, 0.1]),
        jnp.array([False, True, False]),
        jnp.array([-1.0, 1.0, -1.0]),
        jnp.float32(0.3),
        0.9,
        0.5,
    )
    np.testing.assert_allclose(adv, [-0.875, 0.5, -0.37], atol=1e-6)
    np.testing.assert_allclose(ret, [-0.675, 1.0, -0.27], atol=1e-6)


def test_negamax_gae_same_mover_keeps_sign():
    """A pass: X moves twice in a row (sign +1) and wins; both X moves get +1."""
    adv, _ = negamax_gae(
        jnp.array([0.0, 1.0]),
        jnp.zeros(2),
        jnp.array([False, True]),
        jnp.array([1.0, -1.0]),
        jnp.float32(0.0),
        1.0,
        1.0,
    )
    np.testing.assert_allclose(adv, [1.0, 1.0])


def test_negamax_gae_lambda_one_is_negamax_monte_carlo(key):
    """lambda = 1: A_t = G_t - V_t with G_t = r_t + gamma * sign_t * G_{t+1} (G = 0 after done,
    G_T = V(s_T)); checked on random data with a batch axis against a Python loop."""
    T, B, gamma = 12, 3, 0.8
    ks = jax.random.split(key, 5)
    r = jax.random.randint(ks[0], (T, B), -1, 2).astype(jnp.float32)
    v = jax.random.uniform(ks[1], (T, B), minval=-1, maxval=1)
    d = jax.random.bernoulli(ks[2], 0.3, (T, B))
    s = jnp.where(jax.random.bernoulli(ks[3], 0.8, (T, B)), -1.0, 1.0)
    last = jax.random.uniform(ks[4], (B,))
    adv, _ = negamax_gae(r, v, d, s, last, gamma, 1.0)
    r, v, d, s, last = map(np.asarray, (r, v, d, s, last))
    for b in range(B):
        g = last[b]
        for t in reversed(range(T)):
            g = r[t, b] + (0.0 if d[t, b] else gamma * s[t, b] * g)
            assert abs(adv[t, b] - (g - v[t, b])) < 1e-5


# ---------------------------------------------------------------------------- learning
def test_loss_decreases_on_fixed_batch(key):
    cfg = tiny_config()
    env = jaxgames.make("tic_tac_toe")
    agent = ppo.make_algorithm(cfg).agent
    params = agent.init_params(key)
    states = random_states(env, key, 64, 6)
    obs = common.batch_observation(states)
    mask = states.legal_action_mask
    logits, value = agent.apply(params, obs)
    ks = jax.random.split(key, 3)
    action, logp = sample_masked(ks[0], logits, mask)
    batch = ppo.Transition(
        obs, mask, action, logp, value, jnp.zeros(64), jnp.zeros(64, bool), -jnp.ones(64),
        jnp.ones(64, jnp.int32),
    )  # fmt: skip
    adv = jax.random.normal(ks[1], (64,))
    targets = jax.random.uniform(ks[2], (64,), minval=-1, maxval=1)
    opt = optax.adam(3e-3)
    loss_fn = jax.jit(lambda p: ppo.ppo_loss(agent, p, batch, adv, targets, cfg))

    @jax.jit
    def step(p, o):
        g, _ = jax.grad(loss_fn, has_aux=True)(p)
        u, o = opt.update(g, o, p)
        return optax.apply_updates(p, u), o

    first, aux0 = loss_fn(params)
    o = opt.init(params)
    for _ in range(30):
        params, o = step(params, o)
    last, aux1 = loss_fn(params)
    assert float(last) < float(first) - 0.05
    assert float(aux1["value_loss"]) < float(aux0["value_loss"])


def test_loss_matches_a_numpy_reference(key):
    """ppo_loss against the clipped objective re-derived in numpy (float64): stored log-probs
    put the ratios at e^+-0.5 (clipped at 0.2) and e^+-0.05 (not), stored values put the value
    moves at +-0.5 (clipped) and +-0.1 (not), advantages of both signs: policy loss
    -mean(min(r A, clip(r) A)) over normalised A, value loss 0.5 mean(max(unclipped, clipped
    squared error)), entropy of the masked softmax, total pg + vf_coef v - ent_coef H."""
    cfg = tiny_config(clip_eps=0.2, ent_coef=0.05, vf_coef=0.5)
    agent = ppo.make_algorithm(cfg).agent
    params = agent.init_params(key)
    n = 16
    ks = jax.random.split(key, 3)
    obs = jax.random.uniform(ks[0], (n, 3, 3, 2)).round()
    mask = (jax.random.uniform(ks[1], (n, 9)) < 0.6).at[:, 0].set(True)
    action = jnp.argmax(jnp.where(mask, jax.random.uniform(ks[2], (n, 9)), -1.0), -1)
    logits, value = (np.asarray(x, np.float64) for x in agent.apply(params, obs))
    m = np.asarray(mask)
    lg = np.where(m, logits, -np.inf)
    top = lg.max(-1, keepdims=True)
    logp = lg - top - np.log(np.exp(lg - top).sum(-1, keepdims=True))
    new_logp = logp[np.arange(n), np.asarray(action)]
    old_logp = new_logp - np.tile([0.5, -0.5, 0.05, -0.05], n // 4)
    old_value = value + np.tile([0.5, -0.5, 0.1, -0.1], n // 4)
    adv = np.tile([1.0, -1.0, 2.0, -0.5, -1.0, 1.0, 0.3, 0.7], n // 8)
    targets = np.linspace(-1.0, 1.0, n)
    batch = ppo.Transition(
        obs, mask, action, jnp.float32(old_logp), jnp.float32(old_value), jnp.zeros(n),
        jnp.zeros(n, bool), -jnp.ones(n), jnp.ones(n, jnp.int32),
    )  # fmt: skip
    total, aux = ppo.ppo_loss(agent, params, batch, jnp.float32(adv), jnp.float32(targets), cfg)
    ratio = np.exp(new_logp - old_logp)
    a = (adv - adv.mean()) / (adv.std() + 1e-8)
    e = cfg.clip_eps
    pg = -np.mean(np.minimum(ratio * a, np.clip(ratio, 1 - e, 1 + e) * a))
    clipped = old_value + np.clip(value - old_value, -e, e)
    vl = 0.5 * np.mean(np.maximum((value - targets) ** 2, (clipped - targets) ** 2))
    ent = np.mean(-np.sum(np.where(m, np.exp(logp) * np.where(m, logp, 0.0), 0.0), -1))
    want = dict(policy_loss=pg, value_loss=vl, entropy=ent)
    want["loss"] = pg + cfg.vf_coef * vl - cfg.ent_coef * ent
    for name, ref in want.items():
        np.testing.assert_allclose(float(aux[name]), ref, rtol=1e-4, atol=1e-6, err_msg=name)
    assert float(total) == float(aux["loss"])


def test_targets_discount_a_row_once_per_ply():
    """A row's reward arrives on its last ply: a learner move that ends the game at once
    (plies 1) keeps its reward r, one whose partner's reply ends it (plies 2) gets gamma r,
    two partner replies (plies 3) gamma^2 r; with zero values, lambda 1 and every row done
    (no bootstrap) the advantages are those discounted rewards: gamma 0.9, rewards 1, -1, -1,
    1 -> 1, -0.9, -0.81, 0.9."""
    cfg = tiny_config(gamma=0.9, gae_lambda=1.0)
    setup = make_setup(cfg, ppo.PPOConfig)
    state = setup.init(jax.random.PRNGKey(0))
    n = cfg.num_envs
    traj = ppo.Transition(
        obs=None, mask=None, action=None, log_prob=None, value=jnp.zeros((1, n)),
        reward=jnp.tile(jnp.array([1.0, -1.0, -1.0, 1.0]), n // 4)[None],
        done=jnp.ones((1, n), bool), sign=-jnp.ones((1, n)),
        plies=jnp.tile(jnp.array([1, 2, 3, 2], jnp.int32), n // 4)[None],
    )  # fmt: skip
    adv, ret = setup.targets(cfg, state.params, state.env_state, traj)
    want = np.tile([1.0, -0.9, -0.81, 0.9], n // 4)[None]
    np.testing.assert_allclose(np.asarray(adv), want, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ret), want, atol=1e-6)


def test_vmap_over_seeds_gives_different_runs():
    train = ppo.make_train(tiny_config(update_epochs=1, num_minibatches=1))
    states, metrics = jax.jit(jax.vmap(train))(
        jnp.stack([jax.random.PRNGKey(0), jax.random.PRNGKey(1)])
    )
    leaves = jax.tree_util.tree_leaves(states.params)
    assert all(leaf.shape[0] == 2 for leaf in leaves)
    assert any(not bool(jnp.array_equal(leaf[0], leaf[1])) for leaf in leaves)
    assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in leaves)
    assert metrics["loss"].shape == (2, 2)  # 2 seeds x 2 chunks
    assert bool(jnp.all(metrics["episodes"] > 0))
    assert int(states.update[0]) == 4


def test_make_train_plays_the_partners_it_is_given_and_refuses_the_drivers_fields():
    """make_train(config) with partners named by spec and no policies (they would play at
    random) or with init_from (it would start afresh) is a one-line error, a random partner
    needs no policy; given the policies, the games against the partner are its games:
    perfect play never loses."""
    config = tiny_config(num_envs=16, partners={"perfect": 0.5}, total_steps=512)
    with pytest.raises(ValueError, match="names opponents that make_train cannot build"):
        ppo.make_train(config)
    ppo.make_train(tiny_config(num_envs=16, partners={"random": 0.5}))
    with pytest.raises(ValueError, match="init_from='pretrained:tic_tac_toe'"):
        ppo.make_train(tiny_config(init_from="pretrained:tic_tac_toe"))
    partners = make_partners(config.partners, config.make_env())
    _, metrics = jax.jit(ppo.make_train(config, partners))(jax.random.PRNGKey(0))
    assert float(jnp.max(metrics["win_vs_perfect"])) == 0.0
    assert float(jnp.max(metrics["loss_vs_perfect"])) > 0.0


# ---------------------------------------------------------------------------- config
def test_default_config_names_a_misspelt_field_with_or_without_scaling():
    """A misspelt override is one ValueError naming it (it was a bare TypeError without
    scale_envs), and the fields take dashes as override() does."""
    for scale in (None, 64):
        with pytest.raises(ValueError, match="unknown config field 'num_env' for PPOConfig"):
            presets.default_config("ppo", "tic_tac_toe", scale_envs=scale, num_env=32)
    assert presets.default_config("ppo", "tic_tac_toe", **{"num-envs": 32}).num_envs == 32
    for field, value in (("game_options", None), ("net", None), ("partners", ["random"])):
        with pytest.raises(ValueError, match=f"invalid {field}=.*: must be a mapping"):
            ppo.PPOConfig(**{field: value})


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("num_envs", 0, "num_envs=0"),
        ("num_steps", -3, "num_steps=-3"),
        ("learning_rate", -1.0, "learning_rate=-1.0"),
        ("gamma", 1.5, "gamma=1.5"),
        ("gae_lambda", "high", "gae_lambda='high'"),
        ("clip_eps", 0.0, "clip_eps=0.0"),
        ("num_minibatches", 3, "num_minibatches=3.*must divide"),
        ("total_steps", 0, "total_steps=0"),
        ("seed", -1, "seed=-1"),
        ("network", "transformer", "unknown network 'transformer'"),
        ("net", {"hiden": 3}, "hiden"),
        ("game", "chess", "game='chess'"),
        ("game_options", {"size": 5}, "size"),
        ("anneal_lr", "yes", "anneal_lr='yes'"),
        ("max_opening_plies", -1, "max_opening_plies=-1"),
        ("max_grad_norm", 10**400, "max_grad_norm=1000.*finite number"),  # past float's range
    ],
)
def test_bad_config_values_raise_clear_errors(field, value, match):
    with pytest.raises(ValueError, match=match):
        tiny_config(**{field: value})


def test_config_overrides_and_round_trip():
    cfg = tiny_config()
    new = cfg.override(
        ["--learning-rate=1e-3", "--num_envs", "16", "--net.hidden=32", "--anneal-lr=false"]
    )
    assert (
        new.learning_rate == 1e-3 and new.num_envs == 16 and new.net == {"hidden": 32, "layers": 1}
    )
    assert new.anneal_lr is False
    assert ppo.PPOConfig.from_dict(new.to_dict()) == new
    cnn = new.override(["--network=cnn", "--net.dense=(32,)"])
    assert cnn.network == "cnn" and cnn.net == {"dense": (32,)}
    with pytest.raises(ValueError, match="unknown config field 'lr'"):
        cfg.override({"lr": 1.0})
    # a partner's spec is kept as written (a default run name has dashes)
    partnered = cfg.override(["--partners.runs/ttt-ppo-seed0=0.5"])
    assert partnered.partners == {"runs/ttt-ppo-seed0": 0.5}
    with pytest.raises(ValueError, match="num_envs='abc'.*integer"):
        cfg.override(["--num-envs=abc"])
    # a whole float is an integer ('--total-steps=1e6', a JSON 16.0); 2.5 is not
    whole = cfg.override(["--total-steps=1e6"]).override({"num_envs": 16.0})
    assert (whole.total_steps, whole.num_envs) == (1_000_000, 16)
    assert type(whole.total_steps) is int and type(whole.num_envs) is int
    assert ppo.PPOConfig.from_dict({**cfg.to_dict(), "num_envs": 16.0}).num_envs == 16
    with pytest.raises(ValueError, match="num_envs=.*must be an integer"):
        cfg.override(["--num-envs=2.5"])
    with pytest.raises(ValueError, match="unknown config field"):
        ppo.PPOConfig.from_dict({**cfg.to_dict(), "bogus": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.num_envs = 3
    with pytest.raises(ValueError, match="max_grad_norm=1000.*finite number"):
        cfg.override([f"--max-grad-norm={10**400}"])  # not an OverflowError's traceback
    # NumPy scalars are the Python values they hold (the config stays JSON-able)
    np_cfg = tiny_config(num_envs=np.int64(16), learning_rate=np.float32(0.5), anneal_lr=np.True_)
    assert (np_cfg.num_envs, np_cfg.learning_rate, np_cfg.anneal_lr) == (16, 0.5, True)
    assert type(np_cfg.num_envs) is int and type(np_cfg.learning_rate) is float
    assert json.loads(json.dumps(np_cfg.to_dict())) == np_cfg.to_dict()


def test_default_configs_are_valid_for_every_game():
    for game in jaxgames.registered_games():
        cfg = presets.default_config("ppo", game, quick=True)
        assert cfg.game == game and cfg.total_steps == presets.QUICK["ppo"]["total_steps"]
        assert ppo.default_config(game, quick=True) == cfg  # the module's shortcut


def test_selfplay_step_and_negamax_gae_on_real_games(key):
    """Two scripted tic-tac-toe games through the rollout's bookkeeping (selfplay_step):
    env 0: X a1, O a2, X b1, O b2, X c1 wins on ply 5, then X b2 opens the next game;
    env 1: X a1, O a2, X b1, O b2, X c3, O c2 wins on ply 6.
    With zero values and gamma = lambda = 1, the winner's moves get +1 and the loser's -1,
    including the loser's last move (its -1 was paid on the winner's ply)."""
    env = jaxgames.make("tic_tac_toe")
    script = jnp.array([[0, 0], [3, 3], [1, 1], [4, 4], [2, 8], [4, 5]], jnp.int32)  # [T, B]
    states = jax.vmap(env.init)(jax.random.split(key, 2))
    rewards, dones, signs = [], [], []
    for t in range(6):
        out = common.selfplay_step(env, states, script[t], jax.random.fold_in(key, t))
        rewards.append(out.reward), dones.append(out.done), signs.append(out.sign)
        states = out.state
    rewards, dones, signs = jnp.stack(rewards), jnp.stack(dones), jnp.stack(signs)
    np.testing.assert_array_equal(rewards[:, 0], [0, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(rewards[:, 1], [0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(dones[:, 1], [0, 0, 0, 0, 0, 1])
    assert int(states.step_count[0]) == 1 and int(states.step_count[1]) == 0  # both reset
    adv, _ = negamax_gae(rewards, jnp.zeros((6, 2)), dones, signs, jnp.zeros(2), 1.0, 1.0)
    np.testing.assert_allclose(adv[:5, 0], [1, -1, 1, -1, 1])  # X won
    np.testing.assert_allclose(adv[:, 1], [-1, 1, -1, 1, -1, 1])  # O won


def test_scaling_down_past_one_position_per_minibatch():
    """Fewer rollout rows than minibatches after scaling down: the count is capped at the
    rows, one position per minibatch."""
    base = ppo.PPOConfig(
        game="tic_tac_toe", num_envs=64, num_steps=1, num_minibatches=16, total_steps=1024
    )
    cfg = base.scaled_to(8)
    assert cfg.num_envs == 8 and cfg.num_minibatches == 8 and cfg.batch_size == 8
