"""Score utility (jaxgames.core.ScoreUtility, the ``score_utility`` training field): final
rewards that mix the outcome with the score margin, reversi's score, the search backing up
that utility, and the field's validation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_games_batch import _discs
from test_search import untrained_policy

import jaxgames
from jaxgames.agents import alphazero, ppo, winner_imitation
from jaxgames.agents.search import search_batch
from jaxgames.core import ScoreUtility, random_action, with_score_utility

W = 0.25


def _random_play(env, key, games, plies):
    """``games`` reversi games of uniformly random legal play: the states before each ply and
    the actions played, leaves [plies, games, ...]."""

    def ply(s, k):
        a = random_action(k, s.legal_action_mask)
        return jax.vmap(env.step)(s, a), (s, a)

    start = jax.vmap(env.init)(jax.random.split(key, games))
    _, (states, actions) = jax.lax.scan(ply, start, jax.random.split(key, plies))
    return states, actions


def test_final_rewards_mix_the_outcome_with_the_margin(key):
    """Stepped with the wrapper, the step that ends a game pays (1 - w) * outcome + w * margin
    (the margin counted from the final board's text), with the outcome's sign; every other
    step, the illegal-move penalty and every other leaf of the state are the game's own."""
    env = jaxgames.make("reversi", size=6)
    assert with_score_utility(env, 0.0) is env
    wrapped = with_score_utility(env, W)
    assert isinstance(wrapped, ScoreUtility) and wrapped.num_actions == env.num_actions

    @jax.jit
    def both(states, actions):
        flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), (states, actions))
        plain = jax.vmap(env.step)(*flat)
        return plain, jax.vmap(wrapped.step)(*flat), jax.vmap(wrapped.step_legal)(*flat)

    states, actions = jax.jit(_random_play, static_argnums=(0, 2, 3))(env, key, 64, 48)
    plain, mixed, mixed_legal = both(states, actions)
    live = ~np.asarray(states.terminated).reshape(-1)
    ended = live & np.asarray(plain.terminated)
    assert ended.sum() == 64  # every game ended within the 48 plies

    # the margin of each finished game, from its text: (own discs - other's) / 36 per player id
    finals = [jax.tree_util.tree_map(lambda x, i=i: x[i], plain) for i in np.flatnonzero(ended)]
    boards = [env.to_text(s).split()[0] for s in finals]
    margin = np.array([[b.count("X") - b.count("O"), b.count("O") - b.count("X")] for b in boards])
    np.testing.assert_allclose(np.asarray(env.score(plain))[ended], margin / 36, rtol=1e-6)
    assert len({tuple(m) for m in margin}) > 5  # varied results, not one

    outcome = np.asarray(plain.rewards)
    want = np.where(ended[:, None], (1 - W) * outcome + W * np.asarray(env.score(plain)), outcome)
    for got in (mixed, mixed_legal):
        np.testing.assert_allclose(np.asarray(got.rewards)[live], want[live], rtol=1e-6)
    np.testing.assert_array_equal(np.sign(np.asarray(mixed.rewards)), np.sign(outcome))
    assert (np.abs(np.asarray(mixed.rewards)[ended]) < 1).any()  # the margin is in them
    for name in ("mover", "opponent", "current_player", "legal_action_mask", "terminated"):
        np.testing.assert_array_equal(getattr(mixed, name), getattr(plain, name))

    # an illegal move loses by the rules' penalty, whatever the board's margin
    start = env.init(key)
    illegal = int(np.flatnonzero(~np.asarray(start.legal_action_mask))[0])
    np.testing.assert_array_equal(wrapped.step(start, illegal).rewards, [-1.0, 1.0])


def test_search_backs_up_the_mixed_utility(key):
    """Searched over the wrapped game, the root value of a move that ends the game (the last
    empty square) is the mover's mixed final reward, which varies with the margin, where over
    the plain game it is the outcome alone."""
    env = jaxgames.make("reversi", size=6)
    states, _ = jax.jit(_random_play, static_argnums=(0, 2, 3))(env, key, 256, 34)
    flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), states)
    empties = 36 - _discs(flat)
    mask = np.asarray(flat.legal_action_mask)
    last = ~np.asarray(flat.terminated) & (empties == 1) & ~mask[:, env.pass_action]
    roots = jax.tree_util.tree_map(lambda x: x[np.flatnonzero(last)[:32]], flat)
    action = jnp.argmax(roots.legal_action_mask, axis=-1)  # the last square
    guide = untrained_policy(env)

    def root_q(game):
        q = search_batch(game, guide, key, roots, num_simulations=4).search_tree.summary().qvalues
        final = jax.vmap(game.step)(roots, action)
        mover = roots.current_player[:, None]
        return (
            jnp.take_along_axis(q, action[:, None], 1)[:, 0],
            jnp.take_along_axis(final.rewards, mover, 1)[:, 0],
            final.terminated,
        )

    q_plain, outcome, over = jax.jit(root_q, static_argnums=0)(env)
    q_mixed, mixed, _ = jax.jit(root_q, static_argnums=0)(ScoreUtility(env, W))
    assert len(outcome) >= 16 and np.asarray(over).all()
    np.testing.assert_allclose(q_plain, outcome, atol=1e-6)
    np.testing.assert_allclose(q_mixed, mixed, atol=1e-6)
    assert set(np.abs(np.asarray(outcome)).tolist()) <= {0.0, 1.0}
    assert len(set(np.round(np.asarray(mixed), 4).tolist())) > 3  # ranked by the margin


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ppo.default_config("tic_tac_toe", score_utility=0.25), "tic_tac_toe has no"),
        (lambda: alphazero.default_config("animal_shogi", score_utility=0.1), "animal_shogi has"),
        (lambda: ppo.default_config("reversi", score_utility=1.5), "score_utility=1.5"),
        (lambda: winner_imitation.default_config("reversi", score_utility=0.2), "by how much"),
    ],
)
def test_bad_score_utility_is_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()
    assert alphazero.default_config("reversi", score_utility=0.25).score_utility == 0.25
