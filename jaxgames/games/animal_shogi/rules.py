"""Animal shogi's state, constants and pure, jittable game functions on 12-bit bitboards
(rules, actions and observation in :mod:`jaxgames.games.animal_shogi`)."""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames.core import GameStateBase, Symmetries, common_fields, winner_rewards
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


#: square offset of each direction; bitboard of squares with an on-board step in that direction;
#: int32[8, 12] target square of a step in each direction from each square (-1 off the board)
SQ_DELTA, VALID_FROM, TO_SQ = _geometry()
#: int32[96] target mover-square of each move action (-1 off the board)
MOVE_TO = TO_SQ.reshape(-1)
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


# ----------------------------------------------------------------------------- spec, state
@dataclasses.dataclass(frozen=True)
class AnimalShogiSpec:
    """Animal shogi's spec: ``max_steps``, the game-length cap in plies (and history length)."""

    max_steps: int = 256


@struct.dataclass
class AnimalShogiState(GameStateBase):
    """One game in the absolute frame, besides the common fields (player 0 is sente).

    board:        int32[12]    codes by square: 0 empty, 1..5 sente L G E C H, 6..10 gote
    hand:         int32[2, 3]  pieces in hand by player id and kind (giraffe, elephant, chick)
    winner:       int32[]      the winner once terminated, else -1 (also draws)
    repetitions:  int32[]      earlier occurrences of the current position (2 = drawn)
    history:      uint32[max_steps, 2]  key of the position after each ply (by step_count),
                               ``NO_POSITION`` where none
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

    def display_env(self):
        """The env with this state's cap (its history length)."""
        from jaxgames.games import shared_env  # the registry sits above the game modules

        return shared_env("animal_shogi", max_steps=int(self.history.shape[-2]))

    @property
    def observation(self) -> jax.Array:
        """float32[..., 4, 3, 24] from the mover's view (any leading batch axes)."""
        fn = observe
        for _ in range(self.board.ndim - 1):
            fn = jax.vmap(fn)
        return fn(self)


# ----------------------------------------------------------------------------- frames
def rotate(view: jax.Array) -> jax.Array:
    """int32[12] codes -> the position seen by the other player (turned, colours swapped)."""
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
    """bool[132] legal actions of the mover from ``view`` int32[12] (mover's frame) and
    ``own_hand`` int32[3], all at once without playing them: with no sliding pieces, a non-lion
    move keeps the lion safe iff it is not attacked or the move captures the only attacker, a
    lion move iff its target is not attacked, a drop iff the lion is not attacked.
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
    """Action of mover ``player`` -> absolute int32 ``(from_sq, to_sq, drop_kind)``: ``from_sq``
    -1 for drops, ``drop_kind`` (0 giraffe, 1 elephant, 2 chick) -1 for moves, ``to_sq`` -1
    off the board."""
    action = jnp.asarray(action, jnp.int32)
    is_drop = action >= NUM_MOVE_ACTIONS
    s = action % 12
    t = jnp.where(is_drop, s, jnp.asarray(MOVE_TO)[action % NUM_MOVE_ACTIONS])
    f = jnp.where(is_drop, -1, s)
    absolute = lambda x: jnp.where((player == 1) & (x >= 0), 11 - x, x)  # noqa: E731
    kind = jnp.where(is_drop, (action - NUM_MOVE_ACTIONS) // 12, -1)
    return absolute(f), absolute(t), kind


# ----------------------------------------------------------------------------- game logic
def position_key(board: jax.Array, hand: jax.Array, player: jax.Array) -> jax.Array:
    """uint32[2] lossless key of (board, hands, side to move)."""
    b = board.astype(jnp.uint32) << _KEY_SHIFT_BOARD
    h = hand.reshape(-1).astype(jnp.uint32) << _KEY_SHIFT_HAND
    w0 = jnp.sum(b[:8], dtype=jnp.uint32)
    w1 = jnp.sum(b[8:], dtype=jnp.uint32) + jnp.sum(h, dtype=jnp.uint32)
    w1 = w1 + (jnp.asarray(player).astype(jnp.uint32) << 28)
    return jnp.stack([w0, w1])


def apply_action(view: jax.Array, own_hand: jax.Array, action: jax.Array):
    """Play a (pseudo-)legal action in the mover's frame: (view int32[12], own_hand int32[3])
    -> the same after it (promotion onto row 0, captures into the hand)."""
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


def make_state(spec: AnimalShogiSpec, board, hand, player, step_count) -> AnimalShogiState:
    """State of any position without history (board int32[12], hand int32[2, 3]): a finished
    try if the side not to move has its lion on its far rank, lost if the mover cannot move
    (the rewards +1 / -1 of the move that decided it)."""
    board = jnp.asarray(board, jnp.int32)
    hand = jnp.asarray(hand, jnp.int32)
    chex.assert_shape(board, (NUM_SQUARES,))
    chex.assert_shape(hand, (2, 3))
    player = jnp.asarray(player, jnp.int32)
    step_count = jnp.asarray(step_count, jnp.int32)
    max_steps = spec.max_steps
    view = mover_view(board, player)
    legal = legal_action_mask(view, hand[player])
    tried = jnp.any(view[9:] == LION + 5)  # the opponent's lion on the opponent's far rank
    lost = ~jnp.any(legal) | tried
    over = lost | (step_count >= max_steps)
    key = position_key(board, hand, player)
    history = jnp.full((max_steps, 2), NO_POSITION, jnp.uint32)
    history = jnp.where((jnp.arange(max_steps) == step_count)[:, None], key[None, :], history)
    winner = jnp.where(lost, 1 - player, -1).astype(jnp.int32)
    return AnimalShogiState(
        board=board,
        hand=hand,
        **common_fields(
            current_player=player,
            legal_action_mask=legal & ~over,
            terminated=lost,
            truncated=~lost & (step_count >= max_steps),
            step_count=step_count,
            rewards=winner_rewards(winner),  # a decided position: as the move that decided it
        ),
        winner=winner,
        repetitions=jnp.int32(0),
        history=history,
    )


def init(spec: AnimalShogiSpec) -> AnimalShogiState:
    """The start position, sente (player 0) to move."""
    return make_state(spec, INIT_BOARD, np.zeros((2, 3), np.int32), 0, 0)


#: jitted once for all envs (the spec is static), for eager callers
init_jit = jax.jit(init, static_argnums=0)
make_state_jit = jax.jit(make_state, static_argnums=0)


def step(spec: AnimalShogiSpec, state: AnimalShogiState, action: jax.Array) -> AnimalShogiState:
    """Play legal ``action`` (int32[]) in an unfinished game."""
    max_steps = spec.max_steps
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
        **common_fields(
            current_player=1 - p,
            legal_action_mask=legal & ~(terminated | truncated),
            rewards=winner_rewards(winner),
            terminated=terminated,
            truncated=truncated,
            step_count=n,
        ),
        winner=winner,
        repetitions=seen,
        history=history,
    )


def observe(state: AnimalShogiState) -> jax.Array:
    """float32[4, 3, 24] observation for the player to move."""
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


#: the planes :func:`attack_features` adds to the observation's 24, in order
ATTACK_PLANES = (
    "squares the mover attacks",
    "squares the mover attacks twice or more",
    "squares the opponent attacks",
    "squares the opponent attacks twice or more",
)


def attack_features(obs: jax.Array) -> jax.Array:
    """Input features ``"attacks"``: float32[..., 4, 3, 24] -> float32[..., 4, 3, 28], the
    observation then :data:`ATTACK_PLANES` (what a classical evaluation weighs for lion
    safety, hanging pieces and tries). Commutes with the mirror."""
    attacks = []
    for first, moves in ((0, MOVES), (5, OPP_MOVES)):  # the mover's kinds, then the opponent's
        count = jnp.zeros(obs.shape[:-1], jnp.float32)
        for kind, dirs in moves.items():
            plane = obs[..., first + kind - 1]
            for d in dirs:
                count = count + grid.shift_planes(plane, *DIRECTIONS[d])
        attacks += [count >= 1, count >= 2]
    return jnp.concatenate([obs, jnp.stack(attacks, -1).astype(obs.dtype)], axis=-1)


def mirror_symmetries() -> Symmetries:
    """The identity and the left-right mirror (files a <-> c): a symmetry of the rules (not of
    the start), the same map in both players' frames: square ``r*3 + c`` <-> ``r*3 + 2 - c``,
    direction ``(dr, dc)`` <-> ``(dr, -dc)``, drops keep their kind.
    """
    square = np.array([r * 3 + 2 - c for r in range(4) for c in range(3)], np.int32)
    direction = [DIRECTIONS.index((dr, -dc)) for dr, dc in DIRECTIONS]
    moves = [direction[d] * 12 + square[s] for d in range(8) for s in range(12)]
    drops = [NUM_MOVE_ACTIONS + k * 12 + square[t] for k in range(3) for t in range(12)]
    board = grid.board_symmetries(np.stack([np.arange(NUM_SQUARES), square]), OBS_PLANES)
    return Symmetries(
        board.obs, np.stack([np.arange(NUM_ACTIONS), np.array(moves + drops)]).astype(np.int32)
    )


def heuristic(spec: AnimalShogiSpec, state: AnimalShogiState) -> jax.Array:
    """float32[] material from the mover's view (chick 1, elephant 3, giraffe 4, hen 5, hand
    pieces alike); a finished game +-1000 (an illegal move's loss read from the rewards), 0 for
    a draw or truncation."""
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
