"""Animal shogi (dobutsu shogi): complete rules on 12-bit bitboards.

Board, squares and the start position (absolute frame; square = row * 3 + col)::

         a   b   c
    1    g   l   e        0  1  2      lowercase = player 1 (gote, moves second)
    2    .   c   .        3  4  5      uppercase = player 0 (sente, moves first)
    3    .   C   .        6  7  8      L/l lion, G/g giraffe, E/e elephant,
    4    E   L   G        9 10 11      C/c chick, H/h hen (promoted chick)

Sente starts at the bottom and moves *up* (towards rank 1); gote moves down.

Rules
-----
* Lion: one step in any of the 8 directions. Giraffe: one step orthogonally. Elephant: one step
  diagonally. Chick: one step forward; a chick *moving* onto the far rank promotes to a hen
  (mandatory). Hen: one step orthogonally or diagonally forward (a shogi gold).
* A captured piece goes to the captor's hand (a hen returns as a chick). Instead of moving, a
  player may drop a hand piece on any empty square. A chick dropped on the far rank stays a chick
  and can never move (allowed, as in the official rules and pgx v2); two chicks on a file are fine.
* A move that leaves the mover's own lion attacked is illegal. Hence lions are never captured:
  a player with no legal move has lost (the lion is caught, or - rarely - every move is
  illegal), and a lion that reaches the far rank (a *try*) wins at once, since it can only go
  there unattacked.
* Draw (``terminated``, rewards 0/0): the same position - board, both hands and side to move -
  occurs for the third time. Detection is exact: every position is packed losslessly into two
  uint32 words and compared with all earlier positions of the game (no hash collisions).
* Game-length cap: after ``max_steps`` plies (default 256, ``make("animal_shogi", max_steps=N)``)
  an unfinished game ends with ``truncated=True`` and rewards 0/0. It is ``truncated``, not
  ``terminated``: the official rules have no move limit, so the cap is a time limit imposed by us,
  and value-learning agents should bootstrap from the cut-off position rather than treat it as a
  drawn terminal one. (pgx v2 instead sets ``terminated`` after 256 steps.) If the last ply also
  ends the game by the rules, the rules win: ``terminated`` and not ``truncated``. The state
  keeps a ``uint32[max_steps, 2]`` position history, so its size grows with the cap.

Actions (132, always in the *mover's* frame: the board as seen by the player to move, rotated
180 degrees for gote, so "N" is always forward and mover square ``s`` is absolute ``11 - s`` for
gote)::

    action = d * 12 + s          0 <= d < 8: move the piece on mover-square s one step in
                                 direction d (targets off the board are never legal)
    action = 96 + k * 12 + t     0 <= k < 3: drop hand piece k (0 giraffe, 1 elephant, 2 chick)
                                 on mover-square t

    directions d (mover frame)       mover squares s, t
         7  0  1                          0  1  2     <- the mover's far rank
          \\ | /                           3  4  5
       6 -  *  - 2                        6  7  8
          / | \\                           9 10 11     <- the mover's home rank
         5  4  3

    0 N, 1 NE, 2 E, 3 SE, 4 S, 5 SW, 6 W, 7 NW

:func:`decode_action` turns an action into absolute (from square, to square, drop kind).

Observation: ``float32[4, 3, 24]`` (rank, file, plane), in the mover's frame (row 0 is the mover's
far rank): planes 0-4 the mover's lion, giraffe, elephant, chick, hen; 5-9 the opponent's; 10 empty;
11-16 the mover's hand (giraffes >= 1, >= 2, elephants >= 1, >= 2, chicks >= 1, >= 2) as constant
planes; 17-22 the opponent's hand likewise; 23 constant 1.0 if the current position occurred before
(a further repetition would draw).

Perft from the start position (leaf counts, depths 1-7): 4, 13, 67, 398, 2179, 12636, 80828,
identical with the naive pure-Python reference in tests/reference_animal_shogi.py.

Differences from pgx v2 (``pgx.make("animal_shogi")``), checked in tests/test_animal_shogi.py:
legal-action sets and wins/losses agree ply by ply on random games. pgx orders squares by file
(mirrored) and directions differently (same 132 = 96 + 36 layout), picks the first player at
random, ends at 256 steps with ``terminated`` (we truncate), and its incremental Zobrist hash
misses some repeated positions; its observation is (4, 3, 194) with 8 plies of history.

Text: SFEN-like ``"gle/1c1/1C1/ELG b - 1"``: ranks 1..4 separated by ``/`` (digits = runs of
empty squares), side to move ``b`` (sente) or ``w`` (gote), hands (``-`` or e.g. ``"2Ce"``:
sente's pieces uppercase, gote's lowercase, count before the letter), move number (plies played
+ 1; odd for sente). Moves: ``"b3b2"`` (from, to; promotion is forced, a ``+`` suffix is optional),
drops ``"C*b2"``.
"""

from __future__ import annotations

import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames.core import Env, winner_rewards
from jaxgames.games import grid

# ----------------------------------------------------------------------------- constants
NUM_SQUARES = 12
NUM_ACTIONS = 132
NUM_MOVE_ACTIONS = 96
OBS_PLANES = 24
FULL = 0xFFF  # all 12 squares

EMPTY, LION, GIRAFFE, ELEPHANT, CHICK, HEN = 0, 1, 2, 3, 4, 5
#: board code -> SFEN letter (codes 1..5 sente / the mover, 6..10 gote / the opponent)
PIECE_CHARS = ".LGECHlgech"
#: hand index k -> piece kind (k + 2); hand letters in text order
HAND_CHARS = "GEC"

#: directions (d_row, d_col) in the mover's frame: N NE E SE S SW W NW
DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
DIRECTION_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
#: directions each of the mover's piece kinds may step in
MOVES = {
    LION: (0, 1, 2, 3, 4, 5, 6, 7),
    GIRAFFE: (0, 2, 4, 6),
    ELEPHANT: (1, 3, 5, 7),
    CHICK: (0,),
    HEN: (0, 1, 2, 4, 6, 7),
}
#: the opponent's pieces move rotated by 180 degrees (their forward is our S)
OPP_MOVES = {kind: tuple((d + 4) % 8 for d in dirs) for kind, dirs in MOVES.items()}


def _geometry():
    sq_delta, valid_from, to_sq = [], [], np.full((8, 12), -1, np.int32)
    for d, (dr, dc) in enumerate(DIRECTIONS):
        sq_delta.append(3 * dr + dc)
        mask = 0
        for s in range(12):
            r, c = divmod(s, 3)
            if 0 <= r + dr < 4 and 0 <= c + dc < 3:
                mask |= 1 << s
                to_sq[d, s] = (r + dr) * 3 + c + dc
        valid_from.append(mask)
    return tuple(sq_delta), tuple(valid_from), to_sq


#: square offset of each direction; bitboard of squares with an on-board step in that direction
SQ_DELTA, VALID_FROM, _TO_SQ = _geometry()
#: int32[96] target mover-square of each move action (-1 off the board)
MOVE_TO = _TO_SQ.reshape(-1)
BITS = (1 << np.arange(12)).astype(np.int32)

# heuristic values by board code (sente's point of view) and by hand kind
PIECE_VALUES = np.array([0, 0, 4, 3, 1, 5, 0, -4, -3, -1, -5], np.float32)
HAND_VALUES = np.array([4, 3, 1], np.float32)
WIN_VALUE = 1000.0

# start position, absolute frame
INIT_BOARD = np.array([7, 6, 8, 0, 9, 0, 0, 4, 0, 3, 1, 2], np.int32)
# position key: w0 = squares 0..7 (4 bits each), w1 = squares 8..11, hands (2 bits each), side
_KEY_SHIFT_BOARD = np.array([4 * i for i in range(8)] + [4 * i for i in range(4)], np.uint32)
_KEY_SHIFT_HAND = np.array([16 + 2 * i for i in range(6)], np.uint32)
NO_POSITION = np.uint32(0xFFFFFFFF)  # never a valid w0 (no square code is 15)


# ----------------------------------------------------------------------------- state
@struct.dataclass
class AnimalShogiState:
    """One game of animal shogi (absolute frame; see the module docstring).

    board:             int32[12]   codes by square: 0 empty, 1..5 sente L G E C H, 6..10 gote
    hand:              int32[2, 3] pieces in hand by player id and kind (giraffe, elephant, chick)
    current_player:    int32[]     player to move (0 = sente, 1 = gote)
    legal_action_mask: bool[132]   all False once the game is over
    rewards:           float32[2]  by player id, nonzero only on the final step
    terminated:        bool[]      ended by the rules (win, loss, repetition draw)
    truncated:         bool[]      cut off by the ``max_steps`` cap (a draw, rewards 0/0)
    step_count:        int32[]     plies played (``move number - 1`` for positions from text)
    winner:            int32[]     player id of the winner once terminated, else -1 (also draws)
    repetitions:       int32[]     earlier occurrences of the current position (2 = drawn)
    history:           uint32[max_steps, 2]  key of the position after each ply (index =
                                   step_count), ``NO_POSITION`` for plies not (yet) seen
    """

    board: jax.Array
    hand: jax.Array
    current_player: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    step_count: jax.Array
    winner: jax.Array
    repetitions: jax.Array
    history: jax.Array

    @property
    def observation(self) -> jax.Array:
        """float32[..., 4, 3, 24] planes from the mover's point of view (module docstring);
        works on batched states too (leading axes of ``board``)."""
        fn = observe
        for _ in range(self.board.ndim - 1):
            fn = jax.vmap(fn)
        return fn(self)


# ----------------------------------------------------------------------------- frames
def rotate(view: jax.Array) -> jax.Array:
    """int32[12] codes -> the same position seen by the other player (180 degree turn, colours
    swapped). Its own inverse; the mover frame of gote is ``rotate(board)``."""
    swapped = jnp.where(view == EMPTY, EMPTY, jnp.where(view <= 5, view + 5, view - 5))
    return swapped[::-1]


def mover_view(board: jax.Array, player: jax.Array) -> jax.Array:
    """int32[12] absolute board, int32[] player -> int32[12] board in ``player``'s frame
    (codes 1..5 are ``player``'s pieces, row 0 is ``player``'s far rank)."""
    return jnp.where(player == 0, board, rotate(board))


# ----------------------------------------------------------------------------- bitboards
def _shift(x, delta: int):
    """Bitboard x with every bit moved ``delta`` squares (bits leaving 0..11 are dropped)."""
    return (x << delta) & FULL if delta > 0 else x >> (-delta)


def _union(masks):
    out = 0
    for m in masks:
        out = out | m
    return out


def piece_masks(view: jax.Array) -> jax.Array:
    """int32[12] codes -> int32[10] bitboards of codes 1..10 (bit s = square s)."""
    codes = jnp.arange(1, 11, dtype=jnp.int32)
    return jnp.sum(jnp.where(view[None, :] == codes[:, None], BITS[None, :], 0), axis=1)


def legal_action_mask(view: jax.Array, own_hand: jax.Array) -> jax.Array:
    """Legal actions of the mover, computed for all 132 actions at once.

    view: int32[12] the board in the mover's frame; own_hand: int32[3] the mover's hand.
    Returns bool[132]. No move is played and rescanned: with no sliding pieces, a non-lion move
    keeps the lion safe iff the lion is not attacked, or it captures the only attacker; a lion
    move is safe iff its target is not attacked by the opponent; a drop (which cannot capture or
    block) iff the lion is not attacked.
    """
    m = piece_masks(view)
    own_k = {k: m[k - 1] for k in range(1, 6)}
    opp_k = {k: m[k + 4] for k in range(1, 6)}
    own = _union(own_k.values())
    opp = _union(opp_k.values())
    lion = own_k[LION]

    opp_dir = [
        _union([opp_k[k] for k in range(1, 6) if d in OPP_MOVES[k]]) & VALID_FROM[d]
        for d in range(8)
    ]
    opp_att = _union([_shift(opp_dir[d], SQ_DELTA[d]) for d in range(8)])
    checkers = _union([opp_dir[d] & _shift(lion, -SQ_DELTA[d]) for d in range(8)])
    in_check = checkers != 0
    single = in_check & ((checkers & (checkers - 1)) == 0)
    # squares a non-lion piece may move to: anywhere not own; only the lone checker when in check
    allowed = jnp.where(in_check, jnp.where(single, checkers, 0), FULL) & ~own
    lion_ok = ~(own | opp_att) & FULL

    legal_from = []
    for d in range(8):
        movers = _union([own_k[k] for k in range(2, 6) if d in MOVES[k]]) & VALID_FROM[d]
        back = -SQ_DELTA[d]
        legal_from.append(
            (movers & _shift(allowed, back)) | (lion & VALID_FROM[d] & _shift(lion_ok, back))
        )
    legal_from = jnp.stack(legal_from)  # int32[8]
    bit = jnp.arange(12, dtype=jnp.int32)
    moves = ((legal_from[:, None] >> bit[None, :]) & 1).astype(jnp.bool_)  # [8, 12]
    drop_to = jnp.where(in_check, 0, ~(own | opp) & FULL)
    drops = (own_hand[:, None] > 0) & (((drop_to >> bit) & 1) == 1)[None, :]  # [3, 12]
    return jnp.concatenate([moves.reshape(-1), drops.reshape(-1)])


# ----------------------------------------------------------------------------- actions
def decode_action(action, player):
    """Action id -> absolute ``(from_sq, to_sq, drop_kind)`` (int32 scalars, jittable).

    ``from_sq`` is -1 for drops, ``drop_kind`` (0 giraffe, 1 elephant, 2 chick) is -1 for moves,
    ``to_sq`` is -1 for a move off the board. ``player`` is the mover (actions are in its frame).
    """
    action = jnp.asarray(action, jnp.int32)
    is_drop = action >= NUM_MOVE_ACTIONS
    s = action % 12
    t = jnp.where(is_drop, s, jnp.asarray(MOVE_TO)[action % NUM_MOVE_ACTIONS])
    f = jnp.where(is_drop, -1, s)
    absolute = lambda x: jnp.where((player == 1) & (x >= 0), 11 - x, x)  # noqa: E731
    kind = jnp.where(is_drop, (action - NUM_MOVE_ACTIONS) // 12, -1)
    return absolute(f), absolute(t), kind


def action_parts(action: int, player: int) -> tuple[int, int, int]:
    """Pure-Python :func:`decode_action` (no JAX): absolute (from_sq, to_sq, drop_kind)."""
    action, player = int(action), int(player)
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action} is out of range 0..{NUM_ACTIONS - 1}")
    absolute = lambda x: 11 - x if (player == 1 and x >= 0) else x  # noqa: E731
    if action >= NUM_MOVE_ACTIONS:
        kind, t = divmod(action - NUM_MOVE_ACTIONS, 12)
        return -1, absolute(t), kind
    return absolute(action % 12), absolute(int(MOVE_TO[action])), -1


def encode_move(from_sq: int, to_sq: int, player: int) -> int:
    """Absolute squares of a one-step move by ``player`` -> action id; ValueError if not a step."""
    rel = lambda x: 11 - x if player == 1 else x  # noqa: E731
    s, t = rel(from_sq), rel(to_sq)
    for d in range(8):
        if _TO_SQ[d, s] == t:
            return d * 12 + s
    raise ValueError(
        f"{grid.square_name(from_sq, 3)} to {grid.square_name(to_sq, 3)} is not a one-step move"
    )


def encode_drop(kind: int, to_sq: int, player: int) -> int:
    """Drop of hand kind (0 giraffe, 1 elephant, 2 chick) on absolute ``to_sq`` -> action id."""
    return NUM_MOVE_ACTIONS + 12 * kind + (11 - to_sq if player == 1 else to_sq)


def action_text(action: int, player: int) -> str:
    """Move text of ``action`` for ``player`` (pure Python): ``"b3b2"`` or ``"C*b2"``."""
    f, t, kind = action_parts(action, player)
    if kind >= 0:
        return f"{HAND_CHARS[kind]}*{grid.square_name(t, 3)}"
    if t < 0:
        raise ValueError(f"action {action} moves off the board from {grid.square_name(f, 3)}")
    return grid.square_name(f, 3) + grid.square_name(t, 3)


# ----------------------------------------------------------------------------- game logic
def position_key(board: jax.Array, hand: jax.Array, player: jax.Array) -> jax.Array:
    """Lossless key of (board, hands, side to move): uint32[2]."""
    b = board.astype(jnp.uint32) << _KEY_SHIFT_BOARD
    h = hand.reshape(-1).astype(jnp.uint32) << _KEY_SHIFT_HAND
    w0 = jnp.sum(b[:8], dtype=jnp.uint32)
    w1 = jnp.sum(b[8:], dtype=jnp.uint32) + jnp.sum(h, dtype=jnp.uint32)
    w1 = w1 + (jnp.asarray(player).astype(jnp.uint32) << 28)
    return jnp.stack([w0, w1])


def apply_action(view: jax.Array, own_hand: jax.Array, action: jax.Array):
    """Play a (pseudo-)legal action in the mover's frame.

    view int32[12], own_hand int32[3], action int32[] -> (view int32[12], own_hand int32[3]).
    A chick moving onto row 0 promotes; a captured piece joins the hand (a hen as a chick).
    """
    sq = jnp.arange(12, dtype=jnp.int32)
    is_drop = action >= NUM_MOVE_ACTIONS
    idx = action % 12
    to_sq = jnp.where(is_drop, idx, jnp.asarray(MOVE_TO)[action % NUM_MOVE_ACTIONS])
    from_sq = jnp.where(is_drop, -1, idx)
    piece = jnp.sum(jnp.where(sq == from_sq, view, 0))
    captured = jnp.sum(jnp.where(sq == to_sq, view, 0))
    kind = (action - NUM_MOVE_ACTIONS) // 12
    promote = (piece == CHICK) & (to_sq < 3)
    placed = jnp.where(is_drop, kind + 2, jnp.where(promote, HEN, piece))
    view = jnp.where(sq == to_sq, placed, jnp.where(sq == from_sq, EMPTY, view))
    cap_kind = jnp.minimum(captured - 5, CHICK) - 2  # G->0, E->1, C/H->2
    k3 = jnp.arange(3, dtype=jnp.int32)
    own_hand = own_hand + ((k3 == cap_kind) & (captured > 5)) - ((k3 == kind) & is_drop)
    return view, own_hand.astype(jnp.int32)


def make_state(board, hand, player, step_count, max_steps: int) -> AnimalShogiState:
    """State for an arbitrary position (no earlier history), e.g. the start or parsed text.

    board int32[12], hand int32[2, 3], player / step_count int32[]. A position where the side
    not to move has its lion on its far rank is a finished try; one where the mover has no legal
    move is lost for the mover.
    """
    board = jnp.asarray(board, jnp.int32)
    hand = jnp.asarray(hand, jnp.int32)
    chex.assert_shape(board, (NUM_SQUARES,))
    chex.assert_shape(hand, (2, 3))
    player = jnp.asarray(player, jnp.int32)
    step_count = jnp.asarray(step_count, jnp.int32)
    view = mover_view(board, player)
    legal = legal_action_mask(view, hand[player])
    tried = jnp.any(view[9:] == LION + 5)  # the opponent's lion on the opponent's far rank
    lost = ~jnp.any(legal) | tried
    over = lost | (step_count >= max_steps)
    key = position_key(board, hand, player)
    history = jnp.full((max_steps, 2), NO_POSITION, jnp.uint32)
    history = jnp.where((jnp.arange(max_steps) == step_count)[:, None], key[None, :], history)
    return AnimalShogiState(
        board=board,
        hand=hand,
        current_player=player,
        legal_action_mask=legal & ~over,
        rewards=jnp.zeros(2, jnp.float32),
        terminated=lost,
        truncated=~lost & (step_count >= max_steps),
        step_count=step_count,
        winner=jnp.where(lost, 1 - player, -1).astype(jnp.int32),
        repetitions=jnp.int32(0),
        history=history,
    )


def init(max_steps: int = 256) -> AnimalShogiState:
    """The start position, sente (player 0) to move."""
    return make_state(INIT_BOARD, np.zeros((2, 3), np.int32), 0, 0, max_steps)


_init_jit = jax.jit(init, static_argnums=0)
_make_state_jit = jax.jit(make_state, static_argnums=4)


def step(state: AnimalShogiState, action: jax.Array, max_steps: int) -> AnimalShogiState:
    """Play legal ``action`` (int32[]) in an unfinished game; sets this ply's rewards."""
    p = state.current_player
    view = mover_view(state.board, p)
    own_hand = jnp.where(p == 0, state.hand[0], state.hand[1])
    opp_hand = jnp.where(p == 0, state.hand[1], state.hand[0])
    view, own_hand = apply_action(view, own_hand, action)
    tried = jnp.any(view[:3] == LION)
    nxt_view = rotate(view)
    board = jnp.where(p == 0, view, nxt_view)
    hand = jnp.where(p == 0, jnp.stack([own_hand, opp_hand]), jnp.stack([opp_hand, own_hand]))
    legal = legal_action_mask(nxt_view, opp_hand)

    n = state.step_count + 1
    key = position_key(board, hand, 1 - p)
    seen = jnp.sum(jnp.all(state.history == key[None, :], axis=1)).astype(jnp.int32)
    history = jnp.where((jnp.arange(max_steps) == n)[:, None], key[None, :], state.history)

    won = tried | ~jnp.any(legal)
    terminated = won | (seen >= 2)
    truncated = ~terminated & (n >= max_steps)
    winner = jnp.where(won, p, -1).astype(jnp.int32)
    return AnimalShogiState(
        board=board,
        hand=hand,
        current_player=(1 - p).astype(jnp.int32),
        legal_action_mask=legal & ~(terminated | truncated),
        rewards=winner_rewards(winner),
        terminated=terminated,
        truncated=truncated,
        step_count=n,
        winner=winner,
        repetitions=seen,
        history=history,
    )


def observe(state: AnimalShogiState) -> jax.Array:
    """float32[4, 3, 24] observation of ``state`` for the player to move (module docstring)."""
    p = state.current_player
    view = mover_view(state.board, p)
    pieces = view[:, None] == jnp.arange(1, 11, dtype=jnp.int32)[None, :]  # [12, 10]
    empty = (view == EMPTY)[:, None]
    own_hand = jnp.where(p == 0, state.hand[0], state.hand[1])
    opp_hand = jnp.where(p == 0, state.hand[1], state.hand[0])
    counts = jnp.concatenate([own_hand, opp_hand])  # [6]
    hands = (counts[:, None] >= jnp.array([1, 2])[None, :]).reshape(-1)  # [12]
    consts = jnp.concatenate([hands, (state.repetitions >= 1)[None]])  # [13]
    planes = jnp.concatenate([pieces, empty, jnp.broadcast_to(consts, (12, 13))], axis=1)
    return planes.reshape(4, 3, OBS_PLANES).astype(jnp.float32)


def heuristic(state: AnimalShogiState) -> jax.Array:
    """Material from the mover's view: float32[].

    Chick 1, elephant 3, giraffe 4, hen 5, hand pieces at their kind's value. A finished game
    is +-1000 for a win/loss (caught lion, try; a loss by an illegal action shows only in the
    final step's rewards, since ``core.Env.step`` leaves ``winner`` at -1) and 0 for a draw or
    truncation.
    """
    p = state.current_player
    board_value = jnp.sum(jnp.asarray(PIECE_VALUES)[state.board])
    hand_value = jnp.sum(state.hand[0] * HAND_VALUES) - jnp.sum(state.hand[1] * HAND_VALUES)
    material = jnp.where(p == 0, 1.0, -1.0) * (board_value + hand_value)
    by_rewards = WIN_VALUE * jnp.where(p == 0, state.rewards[0], state.rewards[1])
    result = jnp.where(
        state.winner == p, WIN_VALUE, jnp.where(state.winner >= 0, -WIN_VALUE, by_rewards)
    )
    over = state.terminated | state.truncated
    return jnp.where(over, result, material).astype(jnp.float32)


# ----------------------------------------------------------------------------- text
def position_text(board, hand, player: int, step_count: int) -> str:
    """SFEN-like text of an absolute position (plain Python / numpy inputs)."""
    board = [int(x) for x in np.asarray(board).reshape(-1)]
    hand = np.asarray(hand).reshape(2, 3)
    ranks = []
    for r in range(4):
        out, run = "", 0
        for c in range(3):
            code = board[r * 3 + c]
            if code == EMPTY:
                run += 1
                continue
            if run:
                out, run = out + str(run), 0
            out += PIECE_CHARS[code]
        ranks.append(out + (str(run) if run else ""))
    hands = ""
    for pl in range(2):
        for k in range(3):
            n = int(hand[pl, k])
            if n:
                letter = HAND_CHARS[k] if pl == 0 else HAND_CHARS[k].lower()
                hands += (str(n) if n > 1 else "") + letter
    return f"{'/'.join(ranks)} {'bw'[int(player)]} {hands or '-'} {int(step_count) + 1}"


def _reject(text: str, why: str):
    raise ValueError(f"malformed animal shogi position {text!r}: {why}")


def parse_position(text: str, max_steps: int):
    """SFEN-like text -> (board int32[12] numpy, hand int32[2, 3] numpy, player, step_count).

    ValueError names what is wrong (format, unknown letters, rank lengths, piece counts,
    impossible positions such as a capturable lion or a mover's lion already on its far rank).
    """
    if not isinstance(text, str):
        raise ValueError(f"position must be a string, got {type(text).__name__}")
    parts = text.split()
    if len(parts) != 4:
        _reject(
            text,
            "expected 4 space-separated fields: board side hands move-number, "
            "e.g. 'gle/1c1/1C1/ELG b - 1'",
        )
    rows, side, hands, number = parts
    ranks = rows.split("/")
    if len(ranks) != 4:
        _reject(text, f"the board needs 4 ranks separated by '/', got {len(ranks)}")
    board = []
    for r, rank in enumerate(ranks):
        cells = []
        for ch in rank:
            if ch in "123":
                cells += [EMPTY] * int(ch)
            elif ch in PIECE_CHARS[1:]:
                cells.append(PIECE_CHARS.index(ch))
            else:
                _reject(
                    text,
                    f"unknown character {ch!r} in rank {r + 1}; use L G E C H (sente), "
                    "l g e c h (gote) and digits 1-3 for empty squares",
                )
        if len(cells) != 3:
            _reject(text, f"rank {r + 1} ({rank!r}) covers {len(cells)} squares, expected 3")
        board += cells
    if side not in ("b", "w"):
        _reject(
            text, f"side to move {side!r} must be 'b' (sente, player 0) or 'w' (gote, player 1)"
        )
    player = "bw".index(side)
    hand = np.zeros((2, 3), np.int32)
    if hands != "-":
        tokens = re.findall(r"(\d*)(\D)", hands)
        if "".join(n + c for n, c in tokens) != hands:
            _reject(text, f"hands {hands!r} must be '-' or counts and letters such as '2Ce'")
        for count, letter in tokens:
            if letter.upper() == "H":
                _reject(text, "a hen cannot be in hand (a captured hen returns as a chick 'C')")
            if letter.upper() == "L":
                _reject(text, "a lion cannot be in hand")
            if letter.upper() not in HAND_CHARS:
                _reject(text, f"unknown hand piece {letter!r}; use G E C (sente) or g e c (gote)")
            n = int(count) if count else 1
            pl, k = (0 if letter.isupper() else 1), HAND_CHARS.index(letter.upper())
            if n < 1 or hand[pl, k]:
                _reject(text, f"hand piece {letter!r} given twice or with count {n}")
            hand[pl, k] = n
    if not number.isdigit() or int(number) < 1:
        _reject(text, f"move number {number!r} must be a positive integer")
    move = int(number)
    if (move - 1) % 2 != player:
        _reject(
            text,
            f"move number {move} is {'sente' if move % 2 else 'gote'}'s ply "
            f"(sente moves on odd numbers) but the side to move is {side!r}",
        )
    if move > max_steps + 1:  # move max_steps + 1 is a game cut off by the cap (truncated)
        _reject(
            text,
            f"move number {move} is past the game-length cap: with max_steps={max_steps} "
            f"the last move number is {max_steps + 1} (a truncated game)",
        )
    for pl, name in ((0, "sente"), (1, "gote")):
        lions = board.count(LION + 5 * pl)
        if lions != 1:
            _reject(text, f"{name} must have exactly one lion, found {lions}")
    for kinds, k, name in (
        ((GIRAFFE,), 0, "giraffes"),
        ((ELEPHANT,), 1, "elephants"),
        ((CHICK, HEN), 2, "chicks and hens"),
    ):
        total = sum(board.count(c) + board.count(c + 5) for c in kinds) + int(hand[:, k].sum())
        if total > 2:
            _reject(text, f"{total} {name} on board and in hand; the game has only 2")
    b = np.array(board, np.int32)
    view = b if player == 0 else _np_rotate(b)
    if np.any(view[:3] == LION):
        _reject(text, "impossible position: the side to move already has its lion on the far rank")
    opp_view = _np_rotate(view)  # the opponent's frame: its lion is code 1
    if int(np.flatnonzero(opp_view == LION)[0]) in _np_attacked(opp_view):
        _reject(text, "impossible position: the side to move could capture the opponent's lion")
    return b, hand, player, move - 1


def _np_rotate(view: np.ndarray) -> np.ndarray:
    """numpy :func:`rotate`."""
    v = np.asarray(view)
    return np.where(v == EMPTY, EMPTY, np.where(v <= 5, v + 5, v - 5))[::-1].astype(np.int32)


def _np_attacked(view: np.ndarray) -> set[int]:
    """Squares the opponent attacks in a mover-frame ``view`` (plain Python, for text checks)."""
    return {
        int(_TO_SQ[d, s])
        for s, code in enumerate(np.asarray(view))
        if code > 5
        for d in OPP_MOVES[int(code) - 5]
        if _TO_SQ[d, s] >= 0
    }


# ----------------------------------------------------------------------------- env
class AnimalShogi(Env):
    """``jaxgames.make("animal_shogi", max_steps=256)``: 132 actions, observation
    float32[4, 3, 24]. See the module docstring for rules, encodings and text."""

    name = "animal_shogi"

    def __init__(self, max_steps: int = 256) -> None:
        if (
            isinstance(max_steps, bool)
            or not isinstance(max_steps, (int, np.integer))
            or max_steps < 1
        ):
            raise ValueError(
                f"max_steps must be a positive int (plies before truncation), got {max_steps!r}"
            )
        self.max_steps = int(max_steps)

    num_actions = NUM_ACTIONS  # type: ignore[assignment]
    observation_shape = (4, 3, OBS_PLANES)  # type: ignore[assignment]

    @property
    def config(self):
        return {"max_steps": self.max_steps}

    def _init(self, key):
        return _init_jit(self.max_steps)

    def _step(self, state, action):
        return step(state, action, self.max_steps)

    def heuristic(self, state: AnimalShogiState) -> jax.Array:
        return heuristic(state)

    def to_text(self, state: AnimalShogiState) -> str:
        return position_text(
            np.asarray(state.board),
            np.asarray(state.hand),
            int(state.current_player),
            int(state.step_count),
        )

    def from_text(self, text: str) -> AnimalShogiState:
        board, hand, player, step_count = parse_position(text, self.max_steps)
        return _make_state_jit(board, hand, player, step_count, self.max_steps)

    def action_to_text(self, state: AnimalShogiState, action: int) -> str:
        return action_text(action, int(state.current_player))

    def text_to_action(self, state: AnimalShogiState, text: str) -> int:
        if not isinstance(text, str):
            raise ValueError(
                f"move must be a string such as 'b3b2' or 'C*b2', got {type(text).__name__}"
            )
        player = int(state.current_player)
        board = np.asarray(state.board)
        rel = lambda x: 11 - x if player == 1 else x  # noqa: E731  absolute -> mover square
        s = text.strip()
        drop = re.fullmatch(r"([A-Za-z])\*(\w+)", s)
        move = re.fullmatch(r"([a-zA-Z]\d)([a-zA-Z]\d)(\+?)", s)
        if drop:
            letter = drop.group(1).upper()
            if letter not in HAND_CHARS:
                raise ValueError(f"illegal drop {s!r}: only G, E or C can be dropped")
            kind = HAND_CHARS.index(letter)
            to_sq = grid.parse_square(drop.group(2), 4, 3)
            action = encode_drop(kind, to_sq, player)
            if int(state.hand[player, kind]) == 0:
                why = f"you have no {letter} in hand"
            elif board[to_sq] != EMPTY:
                why = f"{grid.square_name(to_sq, 3)} is occupied"
            else:
                why = "your lion would stay attacked"
        elif move:
            from_sq = grid.parse_square(move.group(1), 4, 3)
            to_sq = grid.parse_square(move.group(2), 4, 3)
            action = encode_move(from_sq, to_sq, player)
            view = board if player == 0 else _np_rotate(board)
            piece = int(view[rel(from_sq)])
            if not 1 <= piece <= 5:
                why = f"you have no piece on {grid.square_name(from_sq, 3)}"
            elif action // 12 not in MOVES[piece]:
                why = f"a {['lion', 'giraffe', 'elephant', 'chick', 'hen'][piece - 1]} cannot move that way"
            elif 1 <= int(view[rel(to_sq)]) <= 5:
                why = f"your own piece is on {grid.square_name(to_sq, 3)}"
            else:
                why = "it would leave your lion attacked"
            if move.group(3) and not (piece == CHICK and rel(to_sq) < 3):
                raise ValueError(f"bad move {s!r}: '+' only marks a chick reaching the far rank")
        else:
            raise ValueError(
                f"malformed move {text!r}: expected a move such as 'b3b2' or a drop such as 'C*b2'"
            )
        if bool(state.terminated) or bool(state.truncated):
            raise ValueError(f"illegal move {s!r}: the game is over")
        if not bool(state.legal_action_mask[action]):
            raise ValueError(f"illegal move {s!r}: {why}; legal: {self.describe_legal(state)}")
        return action
