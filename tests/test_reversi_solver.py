"""The C reversi solver against a plain negamax over the reference rules
(tests/reference_reversi.py), and its perfect player keeping the solved margin on the env."""

from __future__ import annotations

import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_reversi import BLACK, WHITE
from test_reversi_engine import random_position, ref_solve

import jaxgames
from jaxgames.core import random_action
from jaxgames.evaluation import native, reversi_solver

pytestmark = pytest.mark.skipif(not native.has_compiler(), reason="no C compiler")


def _bits(g) -> tuple[int, int]:
    me, other = (BLACK, WHITE) if g.player == 0 else (WHITE, BLACK)
    cells = [v for row in g.board for v in row]
    mover = sum(1 << i for i, v in enumerate(cells) if v == me)
    return mover, sum(1 << i for i, v in enumerate(cells) if v == other)


@pytest.mark.parametrize("size, empties, count", [(4, 8, 30), (6, 7, 12)])
def test_solver_matches_plain_negamax(size, empties, count):
    """Exact margins equal the reference negamax's, also solved again on the table a solve
    left; the (-1, 1) window gives their sign; the best move's margin is the position's."""
    rng = random.Random(size)
    solved = 0
    while solved < count:
        g = random_position(size, empties, rng)
        if g is None:
            continue
        want = ref_solve(g, {}, [False])
        p, o = _bits(g)
        value, nodes = reversi_solver.solve_position(size, p, o)
        assert value == want and nodes > 0
        # again, on the transposition table the first solve left (exact entries reused)
        assert reversi_solver.solve_position(size, p, o)[0] == want
        sign, _ = reversi_solver.solve_position(size, p, o, alpha=-1, beta=1)
        assert np.sign(sign) == np.sign(want)
        assert max(reversi_solver.move_margins(size, p, o).values()) == want
        solved += 1


def test_perfect_player_keeps_the_margin():
    """On 4x4 from 8 empties the perfect player's move has the best margin of the position's
    legal moves (which are the env's), before that it plays ``before``."""
    env = jaxgames.make("reversi", size=4)
    games, empties = 16, 8
    step = jax.jit(jax.vmap(env.step))
    state = jax.vmap(env.init)(jax.random.split(jax.random.key(0), games))
    key = jax.random.key(1)
    for _ in range(16 - 4 - empties):
        key, k = jax.random.split(key)
        act = jax.vmap(random_action)(jax.random.split(k, games), state.legal_action_mask)
        nxt = step(state, act)
        done = state.terminated
        state = jax.tree.map(
            lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b),
            state,
            nxt,
        )
    policy = jax.jit(jax.vmap(reversi_solver.perfect_policy(env, empties)))
    actions = np.asarray(policy(jax.random.split(jax.random.key(2), games), state))
    checked = 0
    for i in range(games):
        s = jax.tree.map(lambda a: a[i], state)
        if bool(s.terminated):
            continue
        p, o = reversi_solver.state_bits(s)
        margins = reversi_solver.move_margins(4, p, o, bool(s.passed))
        assert set(margins) == set(np.flatnonzero(np.asarray(s.legal_action_mask)).tolist())
        if 16 - bin(p | o).count("1") <= empties:  # (a pass leaves more empties: ``before``)
            assert margins[int(actions[i])] == max(margins.values())
            checked += 1
    assert checked >= games // 2
