"""The C reversi solver against the JAX engine's exact endgame on 6x6 positions from random
games, and its perfect player keeping the solved margin."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.core import random_action
from jaxgames.evaluation import native, reversi_solver
from jaxgames.evaluation.reversi_engine import solve_endgame

pytestmark = pytest.mark.skipif(not native.has_compiler(), reason="no C compiler")
EMPTIES = 9
GAMES = 16


def _endgames():
    """``GAMES`` 6x6 states with ``EMPTIES`` empty squares or fewer (random play)."""
    env = jaxgames.make("reversi", size=6)

    @jax.jit
    def play(key):
        def ply(state, key):
            keys = jax.random.split(key, GAMES)
            done = state.terminated | state.truncated
            nxt = jax.vmap(env.step)(state, jax.vmap(random_action)(keys, state.legal_action_mask))
            return jax.tree.map(lambda a, b: jnp.where(_b(done, a), a, b), state, nxt), None

        state = jax.vmap(env.init)(jax.random.split(key, GAMES))
        state, _ = jax.lax.scan(ply, state, jax.random.split(key, 36 - 4 - EMPTIES))
        return state, jax.vmap(lambda s: solve_endgame(env, s, EMPTIES))(state)

    return env, play(jax.random.key(3))


def _b(done, a):
    return done.reshape(done.shape + (1,) * (a.ndim - 1))


def test_solver_matches_the_engine_and_plays_perfectly():
    env, (states, (margins, _)) = _endgames()
    live = ~np.asarray(states.terminated)
    assert live.sum() >= GAMES // 2
    policy = jax.jit(jax.vmap(reversi_solver.perfect_policy(env, EMPTIES)))
    actions = np.asarray(policy(jax.random.split(jax.random.key(0), GAMES), states))
    for i in np.flatnonzero(live):
        state = jax.tree.map(lambda a: a[i], states)
        p, o = reversi_solver.state_bits(state)
        passed = bool(state.passed)
        value, nodes = reversi_solver.solve_position(6, p, o, passed=passed)
        assert value == int(margins[i]) and nodes > 0
        sign, _ = reversi_solver.solve_position(6, p, o, passed=passed, alpha=-1, beta=1)
        assert np.sign(sign) == np.sign(value)
        by_move = reversi_solver.move_margins(6, p, o, passed)
        assert max(by_move.values()) == value
        assert by_move[int(actions[i])] == value  # the policy keeps the value
        legal = set(np.flatnonzero(np.asarray(state.legal_action_mask)).tolist())
        assert set(by_move) == legal
