"""Tic-tac-toe: actions ``row * 3 + col`` (squares ``a1``..``c3``, :mod:`~jaxgames.games.grid`).

Player 0 is X and moves first. Three in a row wins; a full board without a line is a draw.
Observation: ``float32[3, 3, 2]``, the mover's marks and the opponent's.

Text: 9 characters row-major (``X``, ``O``, ``.``), a space and the side to move, e.g.
``"X...O.... X"``, then ``end`` when an illegal move ended the game.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from flax import struct

from jaxgames.core import (
    Env,
    GameStateBase,
    action_index,
    check_one_game,
    common_fields,
    winner_rewards,
)
from jaxgames.games import grid
from jaxgames.validation import quote
from jaxgames.view import BoardStyle, BoardView, Piece

EMPTY = -1
#: the 8 winning lines as square indices, int32[8, 3]
LINES = jnp.array(
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]],
    dtype=jnp.int32,
)


@dataclasses.dataclass(frozen=True)
class TicTacToeSpec:
    """Static spec of tic-tac-toe: the game has no options (3x3, three in a row)."""


@struct.dataclass
class TicTacToeState(GameStateBase):
    """One game: ``board`` int32[9] (-1 empty, else the owner's id) and the common fields
    (``truncated`` always False)."""

    board: jax.Array
    current_player: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    step_count: jax.Array

    def display_env(self) -> "TicTacToe":
        from jaxgames.games import shared_env  # the registry sits above the game modules

        return shared_env("tic_tac_toe")

    @property
    def observation(self) -> jax.Array:
        """float32[3, 3, 2]: the mover's marks, the opponent's marks."""
        return observe(self.board, self.current_player)


def observe(board: jax.Array, player: jax.Array) -> jax.Array:
    """int32[..., 9] board, int32[...] player -> float32[..., 3, 3, 2] (player's, opponent's)."""
    player = jnp.asarray(player)[..., None]
    planes = jnp.stack([board == player, board == 1 - player], axis=-1)
    return planes.reshape(*board.shape[:-1], 3, 3, 2).astype(jnp.float32)


def has_line(board: jax.Array, player: jax.Array) -> jax.Array:
    """bool[]: ``player`` owns one of the 8 lines."""
    return jnp.any(jnp.all(board[LINES] == player, axis=-1))


def winner_of(board: jax.Array) -> jax.Array:
    """int32[]: the player owning a line, or -1."""
    return jnp.where(has_line(board, 0), 0, jnp.where(has_line(board, 1), 1, -1)).astype(jnp.int32)


def make_state(
    spec: TicTacToeSpec, board: jax.Array, current_player: jax.Array, step_count: jax.Array
) -> TicTacToeState:
    """State for ``board`` with ``current_player`` to move; ends the game if it is decided
    (the winner's rewards +1 / -1, as the move that made the line gave them)."""
    board = jnp.asarray(board, jnp.int32)
    winner = winner_of(board)
    terminated = (winner >= 0) | jnp.all(board != EMPTY)
    return TicTacToeState(
        board=board,
        **common_fields(
            current_player=current_player,
            legal_action_mask=(board == EMPTY) & ~terminated,
            terminated=terminated,
            step_count=step_count,
            rewards=winner_rewards(winner),  # a decided board: as the move that decided it
        ),
    )


def init(spec: TicTacToeSpec) -> TicTacToeState:
    """The empty board, X to move."""
    return make_state(spec, jnp.full(9, EMPTY, jnp.int32), 0, 0)


def step(spec: TicTacToeSpec, state: TicTacToeState, action: jax.Array) -> TicTacToeState:
    """Place the mover's mark on empty square ``action`` (int32[])."""
    mover = state.current_player
    board = state.board.at[action].set(mover)
    return make_state(spec, board, 1 - mover, state.step_count + 1)  # a line: the mover's


def heuristic(spec: TicTacToeSpec, state: TicTacToeState) -> jax.Array:
    """float32[] 1.0 if the mover can complete a line this move, else 0.0: coarse on purpose,
    one ply of search over it is the classic greedy player (win, else block, else random)."""
    cells = state.board[LINES]  # int32[8, 3]
    player = state.current_player
    threat = (jnp.sum(cells == player, axis=-1) == 2) & jnp.any(cells == EMPTY, axis=-1)
    return jnp.any(threat).astype(jnp.float32)


STYLE = BoardStyle(board="#ffffff", grid="#333333", pieces="mark")


def board_view(spec: TicTacToeSpec, state: TicTacToeState) -> BoardView:
    """X and O marks."""
    marks = [None if int(v) == EMPTY else Piece("XO"[int(v)], int(v)) for v in state.board]
    return BoardView(
        "tic_tac_toe",
        tuple(tuple(marks[r * 3 : r * 3 + 3]) for r in range(3)),
        int(state.current_player),
        STYLE,
    )


class TicTacToe(Env):
    """``jaxgames.make("tic_tac_toe")``."""

    name = "tic_tac_toe"
    rules_version = 1  # raise on any change to how a game plays out (core.Env)
    side_names = ("X", "O")

    def __init__(self) -> None:
        self.spec = TicTacToeSpec()

    num_actions = 9  # type: ignore[assignment]
    observation_shape = (3, 3, 2)  # type: ignore[assignment]
    max_game_length = 9  # type: ignore[assignment]

    @property
    def symmetries(self):
        """The 8 rotations and reflections of the board."""
        return grid.board_symmetries(grid.dihedral_squares(3), 2)

    def _init(self, key):
        return init(self.spec)

    def _step(self, state, action):
        return step(self.spec, state, action)

    def heuristic(self, state: TicTacToeState) -> jax.Array:
        return heuristic(self.spec, state)

    def board_view(self, state: TicTacToeState) -> BoardView:
        return board_view(self.spec, state)

    def to_text(self, state: TicTacToeState) -> str:
        check_one_game(state, "env.to_text")
        board = [int(v) for v in state.board]
        cells = "".join(".XO"[v + 1] for v in board)
        text = f"{cells} {'XO'[int(state.current_player)]}"
        shown = EMPTY not in board or int(winner_of(jnp.asarray(board, jnp.int32))) >= 0
        return f"{text} {grid.GAME_OVER}" if bool(state.terminated) and not shown else text

    def from_text(self, text: str) -> TicTacToeState:
        values, side, over = grid.parse_grid_position(text, 9, ".XO", "XO")
        q = quote(text, grid.POSITION_QUOTE)
        board = [v - 1 for v in values]
        nx, no = board.count(0), board.count(1)
        if nx not in (no, no + 1):
            raise ValueError(f"impossible position {q}: {nx} X and {no} O (X moves first)")
        expected = 0 if nx == no else 1
        if side != expected:
            raise ValueError(
                f"impossible position {q}: with {nx} X and {no} O it is {'XO'[expected]} to move"
            )
        b = jnp.array(board, jnp.int32)
        x_won, o_won = bool(has_line(b, 0)), bool(has_line(b, 1))
        if (x_won and (o_won or nx != no + 1)) or (o_won and nx != no):
            raise ValueError(f"impossible position {q}: play would have stopped at the first line")
        state = make_state(self.spec, b, side, nx + no)
        if over:
            state = state.replace(
                terminated=jnp.bool_(True),
                legal_action_mask=jnp.zeros_like(state.legal_action_mask),
            )
        return state

    def action_to_text(self, state, action: int) -> str:
        check_one_game(state, "env.action_to_text")
        action = action_index(action)
        if not 0 <= action < 9:
            raise ValueError(f"action {action} is out of range 0..8")
        return grid.square_name(action, 3)

    def text_to_action(self, state, text: str) -> int:
        action = grid.parse_square(text, 3, 3)
        if not bool(state.legal_action_mask[action]):
            reason = "the game is over" if bool(state.terminated) else "the square is taken"
            raise ValueError(
                f"illegal move {quote(text.strip())}: {reason}; legal: {self.describe_legal(state)}"
            )
        return action
