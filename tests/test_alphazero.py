"""Gumbel AlphaZero: the loss against hand-computed values, search targets that are legal
distributions, learning tic-tac-toe from its own search, config errors."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxgames
from jaxgames.agents import alphazero
from jaxgames.agents.common import Agent
from jaxgames.agents.networks import make_network
from jaxgames.evaluation import arena
from jaxgames.specs import make_opponent


def tiny_config(**kw):
    base = dict(
        game="tic_tac_toe",
        network="mlp",
        net={"hidden": 16, "layers": 1},
        num_envs=8,
        num_steps=4,
        num_minibatches=2,
        update_epochs=2,
        updates_per_chunk=2,
        total_steps=128,
        eval_games=4,
        num_simulations=4,
    )
    base.update(kw)
    return alphazero.AlphaZeroConfig(**base)


def test_loss_is_cross_entropy_to_the_search_policy_plus_value_regression(ttt, key):
    agent = Agent(make_network("mlp", 9, hidden=16, layers=1), (2, 3, 3))
    params = agent.init_params(key)
    obs = jax.random.normal(key, (5, 2, 3, 3))
    mask = jnp.array([[True] * 9] * 4 + [[True, True] + [False] * 7])
    target = jax.nn.one_hot(jnp.array([0, 3, 8, 4, 1]), 9)
    value_target = jnp.array([1.0, -1.0, 0.0, 0.5, 1.0])
    batch = alphazero.Transition(
        obs, mask, target, jnp.zeros(5), jnp.zeros(5), jnp.zeros(5, bool), -jnp.ones(5)
    )
    cfg = tiny_config(vf_coef=0.5)
    total, aux = alphazero.alphazero_loss(agent, params, batch, value_target, cfg)
    logits, value = agent.apply(params, obs)
    logits = jnp.where(mask, logits, -jnp.inf)
    ce = -jnp.take_along_axis(jax.nn.log_softmax(logits), jnp.array([0, 3, 8, 4, 1])[:, None], 1)[
        :, 0
    ]
    np.testing.assert_allclose(float(aux["policy_loss"]), float(ce.mean()), rtol=1e-5)
    np.testing.assert_allclose(
        float(aux["value_loss"]), float(0.5 * ((value - value_target) ** 2).mean()), rtol=1e-5
    )
    np.testing.assert_allclose(
        float(total), float(aux["policy_loss"] + 0.5 * aux["value_loss"]), rtol=1e-5
    )
    np.testing.assert_allclose(
        float(aux["policy_kl"]), float(aux["policy_loss"]), rtol=1e-5
    )  # one-hot: H = 0
    # Adam on the fixed batch drives the network to the targets
    opt = optax.adam(1e-2)
    state = opt.init(params)
    grad = jax.jit(
        jax.grad(lambda p: alphazero.alphazero_loss(agent, p, batch, value_target, cfg)[0])
    )
    for _ in range(200):
        upd, state = opt.update(grad(params), state, params)
        params = optax.apply_updates(params, upd)
    after, aux2 = alphazero.alphazero_loss(agent, params, batch, value_target, cfg)
    assert float(after) < 0.1 * float(total) and float(aux2["policy_kl"]) < 0.05


def test_rollout_targets_are_legal_distributions(key):
    """The stored search policies sum to one over legal moves, the root values lie in [-1, 1]."""
    cfg = tiny_config(
        game="reversi", game_options={"size": 6}, num_envs=8, num_steps=6, update_epochs=1
    )
    algo = alphazero.make_algorithm(cfg)
    state = algo.init(key)
    guide = algo.agent.policy(state.params)
    from jaxgames.agents.search import search_batch

    out = search_batch(algo.env, guide, key, state.env_state, 4, gumbel_scale=1.0)
    w, mask = np.asarray(out.action_weights), np.asarray(state.env_state.legal_action_mask)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-5)
    assert np.all(w[~mask] == 0)
    assert np.all(np.take_along_axis(mask, np.asarray(out.action)[:, None], 1))
    state, metrics = jax.jit(algo.chunk)(state)
    for name, v in metrics.items():
        assert np.isfinite(np.asarray(v)).all(), name
    assert -1.0 <= float(metrics["value_mean"]) <= 1.0


def test_learns_tic_tac_toe_from_its_own_search(ttt):
    """100k plies with 16 simulations (a quarter of the games against random, outcome value
    targets): the network alone (greedy, no search) goes from worse than random to winning most
    games against random as X (seeds 0-2: 97.5-98%, losing 2-5% of all games). Not yet as strong
    as PPO: it still loses to the perfect player (see docs/results.md)."""
    cfg = alphazero.default_config(
        "tic_tac_toe", quick=True, eval_games=0, num_envs=32, total_steps=100_000
    )
    algo = alphazero.make_algorithm(cfg)
    state, _ = jax.jit(algo.make_train())(jax.random.PRNGKey(0))
    rand = make_opponent("random", ttt)
    untrained = arena(
        algo.agent.policy(algo.init(jax.random.PRNGKey(0)).params),
        rand,
        ttt,
        400,
        jax.random.PRNGKey(1),
    )
    trained = arena(algo.agent.policy(state.params), rand, ttt, 400, jax.random.PRNGKey(1))
    print(untrained, trained, sep="\n")
    assert (
        trained.as_first.win_rate >= 0.85
        and trained.overall.loss_rate < untrained.overall.loss_rate / 2
    )
    assert trained.score > untrained.score + 0.2


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("num_simulations", 0, "num_simulations"),
        ("max_num_considered_actions", -1, "max_num_considered_actions"),
        ("gumbel_scale", -1.0, "gumbel_scale"),
        ("num_minibatches", 3, "num_minibatches"),
    ],
)
def test_bad_config_values_raise_clear_errors(field, value, match):
    with pytest.raises(ValueError, match=match):
        tiny_config(**{field: value})


def test_default_configs_are_valid_for_every_game():
    for game in jaxgames.registered_games():
        cfg = alphazero.default_config(game)
        assert alphazero.AlphaZeroConfig.from_dict(cfg.to_dict()) == cfg
