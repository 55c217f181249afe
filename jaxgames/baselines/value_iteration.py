"""Value iteration for tic-tac-toe, vectorised in JAX (the C++ article's baseline).

:func:`enumerate_positions` finds the 5,478 reachable positions breadth-first with
``env.step``; :func:`value_iteration` iterates the Bellman optimality update over all of them
at once, from player k's point of view (``R_k``: ``win`` / ``loss`` / ``draw`` on the move
that ends the game)::

    Q_k(s, a) = R_k(s, a) + gamma * V_k(s')        (V_k(s') = 0 if s' ended the game)
    V_k(s)    = max_a Q_k(s, a) if player k is to move at s, else min_a Q_k(s, a)

With zero-sum rewards and ``gamma = 1`` this is negamax (the game value is 0, a draw);
``ARTICLE_CPP`` is the article's variant. Positions are looked up by their base-3 code.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import random_action
from jaxgames.evaluation.accuracy import Oracle
from jaxgames.games import make
from jaxgames.games import tic_tac_toe as ttt

NUM_CODES = 3**9
POWERS = 3 ** jnp.arange(9, dtype=jnp.int32)

#: the C++ article's settings
ARTICLE_CPP = dict(gamma=0.8, win=1.0, loss=-1.0, draw=0.3)


def board_code(board: jax.Array) -> jax.Array:
    """int32[..., 9] board (-1 empty, 0 X, 1 O) -> int32[...] base-3 code in [0, 3**9)."""
    return jnp.sum((board + 1) * POWERS, axis=-1).astype(jnp.int32)


def decode(code: jax.Array) -> jax.Array:
    """int32[...] code -> int32[..., 9] board (inverse of :func:`board_code`)."""
    return ((code[..., None] // POWERS) % 3 - 1).astype(jnp.int32)


def state_from_board(board: jax.Array) -> ttt.TicTacToeState:
    """int32[9] board -> TicTacToeState (mover and ply from the mark counts)."""
    n = jnp.sum(board != ttt.EMPTY)
    return ttt.make_state(ttt.TicTacToeSpec(), board, n % 2, n)


class Positions(NamedTuple):
    """All N reachable positions and their transitions (numpy): codes int32[N] sorted, child
    int32[N, 9] (-1 if illegal), child_done bool[N, 9], rewards float32[N, 9, 2] by player id,
    index int32[3**9] (code -> position, -1 if unreachable)."""

    codes: np.ndarray
    boards: np.ndarray
    mover: np.ndarray
    terminal: np.ndarray
    child: np.ndarray
    legal: np.ndarray
    child_done: np.ndarray
    rewards: np.ndarray
    index: np.ndarray


@jax.jit
def _expand(boards: jax.Array):
    """int32[M, 9] boards -> (child codes [M, 9], legal [M, 9], child done [M, 9], rewards
    [M, 9, 2], terminal [M], mover [M]) via ``env.step``."""
    env = make("tic_tac_toe")
    states = jax.vmap(state_from_board)(boards)
    acts = jnp.arange(9, dtype=jnp.int32)
    kids = jax.vmap(lambda s: jax.vmap(lambda a: env.step(s, a))(acts))(states)
    return (
        board_code(kids.board),
        states.legal_action_mask,
        kids.terminated,
        kids.rewards,
        states.terminated,
        states.current_player,
    )


def _pad(x: np.ndarray, size: int) -> np.ndarray:
    out = np.full((size,) + x.shape[1:], -1, x.dtype)
    out[: len(x)] = x
    return out


@functools.lru_cache(maxsize=None)
def enumerate_positions() -> Positions:
    """:class:`Positions` by breadth-first search from the empty board (one jitted expansion
    per ply level on padded batches, de-duplicated on the host)."""
    pad = 2048  # the largest ply level has 1,520 positions
    level = np.array([int(board_code(jnp.full(9, -1, jnp.int32)))], np.int32)
    found = [level]
    for _ in range(9):
        boards = np.asarray(decode(jnp.asarray(_pad(level, pad))))
        codes, legal, *_ = _expand(jnp.asarray(boards))
        codes, legal = np.asarray(codes)[: len(level)], np.asarray(legal)[: len(level)]
        level = np.unique(codes[legal]).astype(np.int32)
        if level.size == 0:
            break
        found.append(level)
    codes = np.unique(np.concatenate(found)).astype(np.int32)
    index = np.full(NUM_CODES, -1, np.int32)
    index[codes] = np.arange(len(codes), dtype=np.int32)

    n = len(codes)
    size = -(-n // pad) * pad
    boards = np.asarray(decode(jnp.asarray(_pad(codes, size))))
    kid_codes, legal, done, rewards, terminal, mover = (
        np.asarray(x)[:n] for x in _expand(jnp.asarray(boards))
    )
    child = np.where(legal, index[np.where(legal, kid_codes, 0)], -1).astype(np.int32)
    return Positions(codes, boards[:n], mover, terminal, child, legal, done & legal, rewards, index)


class ValueTable(NamedTuple):
    """:func:`value_iteration`'s ``values`` float32[2, N] (V_k from player k's view), ``q``
    float32[2, N, 9] (-inf where illegal), ``iterations`` and ``positions``."""

    values: np.ndarray
    q: np.ndarray
    iterations: int
    positions: Positions

    def value(self, text_or_board, player: int | None = None) -> float:
        """Value of a position (text or int board[9]) for ``player`` (default: the mover)."""
        if isinstance(text_or_board, str):
            board = make("tic_tac_toe").from_text(text_or_board).board
        else:
            board = jnp.asarray(text_or_board, jnp.int32)
        i = int(self.positions.index[int(board_code(board))])
        if i < 0:
            raise ValueError(f"position {text_or_board!r} is not reachable")
        k = int(self.positions.mover[i]) if player is None else int(player)
        return float(self.values[k, i])

    def mover_q_table(self) -> jax.Array:
        """float32[3**9, 9] Q of the mover by board code (-inf where illegal or unreachable)."""
        pos = self.positions
        q_mover = np.where(pos.mover[:, None] == 0, self.q[0], self.q[1])
        table = np.full((NUM_CODES, 9), -np.inf, np.float32)
        table[pos.codes] = q_mover
        return jnp.asarray(table)


def value_iteration(
    gamma: float = 1.0,
    win: float = 1.0,
    loss: float = -1.0,
    draw: float = 0.0,
    tol: float = 1e-6,
    max_iterations: int = 1000,
) -> ValueTable:
    """The Bellman update (module docstring) in one jitted ``lax.while_loop`` until
    ``max |V_new - V| < tol``; ``.value("......... X")`` of the result is the game value."""
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma}")
    if tol <= 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    pos = enumerate_positions()
    child = jnp.asarray(np.maximum(pos.child, 0))
    legal = jnp.asarray(pos.legal)
    done = jnp.asarray(pos.child_done)
    mover = jnp.asarray(pos.mover)
    rew = jnp.asarray(pos.rewards)  # [N, 9, 2]
    ks = jnp.arange(2)
    # R_k(s, a): outcome of a game-ending move from player k's point of view
    outcome = jnp.where(rew > 0, win, jnp.where(rew < 0, loss, draw))  # [N, 9, 2]
    reward = (
        jnp.where(done[..., None], outcome, 0.0).transpose(2, 0, 1).astype(jnp.float32)
    )  # [2, N, 9]
    is_mover = (mover[None, :] == ks[:, None])[..., None]  # [2, N, 1]

    def backup(v):
        q = reward + gamma * jnp.where(done[None], 0.0, v[:, child])
        best = jnp.where(is_mover, jnp.where(legal, q, -jnp.inf), jnp.where(legal, q, jnp.inf))
        best = jnp.where(is_mover[..., 0], best.max(-1), best.min(-1))
        v_new = jnp.where(jnp.any(legal, -1)[None], best, 0.0)
        return v_new, jnp.where(legal[None], q, -jnp.inf)

    def cond(c):
        return (c[2] >= tol) & (c[1] < max_iterations)

    def body(c):
        v, it, _ = c
        v_new, _ = backup(v)
        return v_new, it + 1, jnp.max(jnp.abs(v_new - v))

    @jax.jit
    def run():
        v0 = jnp.zeros((2, len(pos.codes)), jnp.float32)
        v, it, _ = jax.lax.while_loop(cond, body, (v0, jnp.int32(0), jnp.float32(jnp.inf)))
        return v, backup(v)[1], it

    v, q, it = run()
    return ValueTable(np.asarray(v), np.asarray(q), int(it), pos)


@functools.lru_cache(maxsize=None)
def _perfect_table() -> jax.Array:
    return value_iteration().mover_q_table()


def perfect_policy(table: jax.Array | None = None):
    """Optimal ``policy(key, state) -> int32[]``: uniform among the moves within 1e-6 of the
    best Q of ``table`` (:meth:`ValueTable.mover_q_table`, default: the zero-sum one)."""
    table = _perfect_table() if table is None else table

    def policy(key: jax.Array, state: ttt.TicTacToeState) -> jax.Array:
        q = table[board_code(state.board)]
        q = jnp.where(state.legal_action_mask, q, -jnp.inf)
        best = state.legal_action_mask & (q >= jnp.max(q) - 1e-6)
        best = jnp.where(jnp.any(best), best, state.legal_action_mask)
        return random_action(key, best)

    return policy


#: tic-tac-toe phases by the ply of the move: (name, lo, hi), lo <= ply < hi
TIC_TAC_TOE_PHASES = (("plies 0-2", 0, 3), ("plies 3-5", 3, 6), ("plies 6-8", 6, 9))


def tic_tac_toe_oracle() -> Oracle:
    """Value iteration as the move-accuracy oracle (:mod:`jaxgames.evaluation.accuracy`): the
    mover's Q of every move in the zero-sum table (undiscounted, draws 0, so Q is the exact
    result) gives the value before a move (the best legal Q: illegal moves' are -inf) and after
    it; every move judged. A discounted or draw-rewarding table (``ARTICLE_CPP``) ranks moves
    but is no verdict, so none is taken."""
    q = np.asarray(_perfect_table())

    def judge(positions, actions, ply):
        rows = q[positions[:, 0]]
        best, after = rows.max(-1), rows[np.arange(len(actions)), actions]
        return {
            "judged": np.ones(len(actions), bool),
            "before": np.sign(np.round(best)).astype(np.int8),
            "after": np.sign(np.round(after)).astype(np.int8),
            "phase": ply,
        }

    return Oracle(
        positions_of=lambda s: board_code(s.board)[None],
        judge=judge,
        phases=TIC_TAC_TOE_PHASES,
    )
