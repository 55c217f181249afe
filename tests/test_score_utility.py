"""A game's score (``env.score``): reversi's disc margin of the final board, by player id."""

import jax
import numpy as np

import jaxgames
from jaxgames.core import random_action


def _random_play(env, key, games, plies):
    """``games`` reversi games of uniformly random legal play: the states before each ply and
    the actions played, leaves [plies, games, ...]."""

    def ply(s, k):
        a = random_action(k, s.legal_action_mask)
        return jax.vmap(env.step)(s, a), (s, a)

    start = jax.vmap(env.init)(jax.random.split(key, games))
    _, (states, actions) = jax.lax.scan(ply, start, jax.random.split(key, plies))
    return states, actions


def test_reversi_score_is_the_disc_margin_of_the_final_board(key):
    """Every game of random play ends within 48 plies; its score is each player's discs minus
    the other's over the 36 squares, counted from the final board's text."""
    env = jaxgames.make("reversi", size=6)
    assert type(env).has_score() and not type(jaxgames.make("tic_tac_toe")).has_score()
    states, actions = jax.jit(_random_play, static_argnums=(0, 2, 3))(env, key, 64, 48)
    flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), (states, actions))
    plain = jax.jit(jax.vmap(env.step))(*flat)
    live = ~np.asarray(states.terminated).reshape(-1)
    ended = live & np.asarray(plain.terminated)
    assert ended.sum() == 64  # every game ended within the 48 plies
    finals = [jax.tree_util.tree_map(lambda x, i=i: x[i], plain) for i in np.flatnonzero(ended)]
    boards = [env.to_text(s).split()[0] for s in finals]
    margin = np.array([[b.count("X") - b.count("O"), b.count("O") - b.count("X")] for b in boards])
    np.testing.assert_allclose(np.asarray(env.score(plain))[ended], margin / 36, rtol=1e-6)
    assert len({tuple(m) for m in margin}) > 5  # varied results, not one
