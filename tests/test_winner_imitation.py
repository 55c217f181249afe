"""Winner imitation: winner-only weights (hand-computed), self-play games with random openings,
the raw-policy legal-move rate, a run through the driver, learning against the initial net."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.agents import winner_imitation as wi
from jaxgames.agents.common import Agent
from jaxgames.agents.networks import make_network
from jaxgames.runs import load_policy


def test_winner_weights_hand_computed():
    # 3 games x 5 plies, players alternate (0, 1, 0, 1, 0); 1 opening ply
    mover = jnp.tile(jnp.array([0, 1, 0, 1, 0])[:, None], (1, 3))
    live = jnp.array(
        [[1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 0, 1], [0, 0, 1]], bool
    )  # lengths 4, 3, 5
    opening = jnp.tile(jnp.array([1, 0, 0, 0, 0], bool)[:, None], (1, 3))
    z = jnp.zeros((5, 3))
    plies = wi.Plies(z, z, z.astype(jnp.int32), mover, live, opening)
    rewards = jnp.array(
        [[-1.0, 1.0], [0.0, 0.0], [1.0, -1.0]]
    )  # O wins, draw, X wins (or unfinished)
    finished = jnp.array([True, True, True])
    w = np.asarray(wi.winner_weights(plies, rewards, finished, draw_weight=0.0))
    np.testing.assert_array_equal(w[:, 0], [0, 1, 0, 1, 0])  # O's two moves
    np.testing.assert_array_equal(w[:, 1], [0, 0, 0, 0, 0])  # draw ignored
    np.testing.assert_array_equal(w[:, 2], [0, 0, 1, 0, 1])  # X's moves after the opening ply
    w = np.asarray(wi.winner_weights(plies, rewards, finished, draw_weight=0.5))
    np.testing.assert_array_equal(w[:, 1], [0, 0.5, 0.5, 0, 0])  # both players' (live) moves
    w = np.asarray(
        wi.winner_weights(plies, rewards, jnp.array([True, True, False]), draw_weight=0.0)
    )
    assert w[:, 2].sum() == 0  # a game cut off at max_plies is not trained on


def test_selfplay_games_are_legal_and_complete(key):
    env = jaxgames.make("tic_tac_toe")
    agent = Agent(make_network("mlp", 9, hidden=8, layers=1), (3, 3, 2))
    params = agent.init_params(key)
    plies, rewards, finished = jax.jit(wi.play_selfplay_games, static_argnums=(0, 1, 4, 5, 6, 7))(
        env, agent, params, key, 64, 9, 2, 1.0
    )
    assert plies.action.shape == (9, 64) and bool(finished.all())
    legal = jnp.take_along_axis(plies.mask, plies.action[..., None], -1)[..., 0]
    assert bool(jnp.all(legal | ~plies.live))
    assert bool(jnp.all(plies.live[:5]))  # no tic-tac-toe game ends before ply 5
    np.testing.assert_array_equal(np.asarray(plies.opening[:, 0]), [1, 1, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(rewards.sum(-1)), 0.0)  # zero-sum
    assert (
        len({tuple(np.asarray(plies.action[:2, i])) for i in range(64)}) > 20
    )  # random openings vary


def test_selfplay_near_temperature_zero_plays_the_most_probable_move(key):
    """At temperature 1e-6 every self-play move after the random opening is the network's most
    probable legal move (the logits divided by the temperature: a near-argmax) wherever that
    move leads the next by more than 1e-4 (tied logits are left to the draw)."""
    env = jaxgames.make("tic_tac_toe")
    agent = Agent(make_network("mlp", 9, hidden=8, layers=1), (3, 3, 2))
    params = agent.init_params(key)
    plies, _, _ = jax.jit(wi.play_selfplay_games, static_argnums=(0, 1, 4, 5, 6, 7))(
        env, agent, params, key, 32, 9, 1, 1e-6
    )
    logits, _ = agent.apply(params, plies.obs.reshape(-1, 3, 3, 2))
    masked = np.asarray(jnp.where(plies.mask.reshape(-1, 9), logits, -1e9))
    greedy = masked.argmax(-1)
    top2 = np.sort(masked, -1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-4  # about 1e9 where one move is legal
    chosen = np.asarray((plies.live & ~plies.opening).reshape(-1)) & clear
    assert chosen.sum() > 50
    np.testing.assert_array_equal(np.asarray(plies.action).reshape(-1)[chosen], greedy[chosen])


def test_logged_metrics_are_measured_before_the_updates():
    """With update_epochs = 4 the logged loss and entropy are those of the parameters the games
    were played with (the first of the 4 Adam steps), recomputed here from the same games."""
    cfg = wi.WinnerImitationConfig(
        game="tic_tac_toe", network="mlp", net={"hidden": 16, "layers": 1}, num_envs=16,
        max_plies=9, opening_plies=2, update_epochs=4, updates_per_chunk=1, total_steps=144,
        eval_vs_init_games=0, eval_games=0, learning_rate=0.05,
    )  # fmt: skip
    algo = wi.make_algorithm(cfg)
    state = algo.init(jax.random.PRNGKey(0))
    _, metrics = jax.jit(algo.chunk)(state)
    _, k_play = jax.random.split(state.key)  # the chunk's key for its games
    plies, rewards, finished = wi.play_selfplay_games(
        algo.env, algo.agent, state.params, k_play, 16, 9, 2, 1.0
    )
    w = wi.winner_weights(plies, rewards, finished, 0.0)
    assert float(w.sum()) > 0
    loss, aux = wi.imitation_loss(algo.agent, state.params, plies, w)
    np.testing.assert_allclose(float(metrics["loss"]), float(loss), rtol=1e-4)
    np.testing.assert_allclose(float(metrics["entropy"]), float(aux["entropy"]), rtol=1e-4)


def test_legal_rate_of_the_raw_policy(key):
    env = jaxgames.make("tic_tac_toe")
    agent = Agent(make_network("mlp", 9, hidden=8, layers=1), (3, 3, 2))
    params = agent.init_params(key)
    play = jax.jit(wi.play_selfplay_games, static_argnums=(0, 1, 4, 5, 6, 7))
    plies, rewards, finished = play(env, agent, params, key, 32, 9, 0, 1.0)
    w = wi.winner_weights(plies, rewards, finished, 0.0)
    _, aux = jax.jit(wi.imitation_loss, static_argnums=0)(agent, params, plies, w)
    logits, _ = jax.jit(agent.apply)(params, plies.obs.reshape(-1, 3, 3, 2))
    mask, live = plies.mask.reshape(-1, 9), plies.live.reshape(-1)
    legal = mask[jnp.arange(mask.shape[0]), jnp.argmax(logits, -1)]
    np.testing.assert_allclose(float(aux["legal_rate"]), float(legal[live].mean()), rtol=1e-6)


def test_config_errors():
    with pytest.raises(ValueError, match="temperature"):
        wi.WinnerImitationConfig(temperature=0.0)
    with pytest.raises(ValueError, match="draw_weight"):
        wi.WinnerImitationConfig(draw_weight=2.0)
    with pytest.raises(ValueError, match="max_opening_plies=2: winner imitation opens"):
        wi.WinnerImitationConfig(max_opening_plies=2)
    with pytest.raises(ValueError, match="opening_plies=9: must be less than max_plies = 9"):
        wi.WinnerImitationConfig(max_plies=9, opening_plies=9)
    assert wi.default_config("reversi", {"size": 6}).max_plies == 44


def test_learns_through_the_driver_and_loads(tmp_path, key):
    from jaxgames.training.driver import run_training

    cfg = wi.default_config(
        "tic_tac_toe",
        net={"hidden": 32, "layers": 1},
        num_envs=128,
        update_epochs=2,
        learning_rate=3e-3,
        updates_per_chunk=45,
        total_steps=128 * 9 * 90,
        eval_games=200,
        eval_vs_init_games=200,
    )
    summary = run_training("winner_imitation", cfg, str(tmp_path / "wi"), progress=False)
    assert summary.completed and summary.chunks_run == 2
    first, last = summary.records[0], summary.last
    # the raw (unmasked) policy learns the rules from the winners' moves alone
    assert last["train/legal_rate"] > max(first["train/legal_rate"], 0.95), (first, last)
    # ~11,500 self-play games: the sampling policy beats the random-initialised network
    # (random vs random in tic-tac-toe: 0.58 wins as X, 0.29 as O, i.e. 0.435 on average)
    vs_init = (last["train/vs_init/win_first"] + last["train/vs_init/win_second"]) / 2
    assert vs_init > 0.55, last
    assert last["eval/win_first"] > 0.75, last
    policy = load_policy(str(tmp_path / "wi"))
    env = jaxgames.make("tic_tac_toe")
    states = jax.vmap(env.init)(jax.random.split(key, 8))
    a = jax.vmap(policy)(jax.random.split(key, 8), states)
    assert bool(jnp.all(jnp.take_along_axis(states.legal_action_mask, a[:, None], 1)))
