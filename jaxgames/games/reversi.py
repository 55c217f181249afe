"""Reversi (othello) on an NxN board, N even in 4..16, as uint32 bitboards.

Squares and actions for N = 8 (action = row * N + col, text ``d3``; action N*N is ``pass``)::

         a  b  c  d  e  f  g  h
     1   0  1  2  3  4  5  6  7        start: white (O) on d4, e5; black (X) on e4, d5;
     2   8  9 10 11 12 13 14 15        black (player 0) moves first: d3 c4 f5 e6
    ...
     8  56 57 58 59 60 61 62 63

Rules (pgx's ``othello`` for N = 8): a placement must flip at least one line of opponent
discs; ``pass`` is legal only when no placement is; the game ends when the board is full, a
side has no discs, or a pass follows a pass; more discs wins. Legal moves and flips are
Kogge-Stone occluded fills in the 8 directions. Observation ``float32[N, N, 2]``: the mover's
discs and the opponent's.

Text (OBF style): N*N chars row-major from a1 (``X``, ``O``, ``-``), a space and the side to
move, then ``end`` for a finished game the board does not show as finished. A position read
back has ``step_count`` discs - 4 and ``passed`` False (the same moves and ending).
"""

from __future__ import annotations

import functools
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxgames.core import (
    Env,
    GameStateBase,
    action_index,
    check_one_game,
    check_player,
    common_fields,
    players_of,
    winner_rewards,
)
from jaxgames.games import grid
from jaxgames.games.bitboard import (
    Words,
    and_,
    andnot,
    any_,
    const,
    fill,
    materialize,
    num_words,
    or_,
    pack,
    pack_mask,
    popcount,
    runtime_one,
    shift,
    split_words,
    stack_words,
    unpack,
)
from jaxgames.validation import quote
from jaxgames.view import BoardStyle, BoardView, Piece

VALID_SIZES = tuple(range(4, 17, 2))

#: (row delta, col delta) of the 8 directions
DIRECTIONS = ((0, 1), (1, -1), (1, 0), (1, 1), (0, -1), (-1, 1), (-1, 0), (-1, -1))


@struct.dataclass
class ReversiState(GameStateBase):
    """One game: ``mover`` / ``opponent`` uint32[W] bitboards of the discs, ``passed`` bool[]
    (the previous action was a pass); the mask is bool[N*N+1] (``pass`` last)."""

    mover: jax.Array
    opponent: jax.Array
    current_player: jax.Array
    legal_action_mask: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    step_count: jax.Array
    passed: jax.Array

    @property
    def size(self) -> int:
        """Board side N (static, from the mask length)."""
        return math.isqrt(self.legal_action_mask.shape[-1] - 1)

    def display_env(self) -> "Reversi":
        from jaxgames.games import shared_env  # the registry sits above the game modules

        return shared_env("reversi", size=self.size)

    @property
    def observation(self) -> jax.Array:
        """float32[..., N, N, 2]: the mover's discs, the opponent's discs."""
        n = self.size
        planes = jnp.stack([unpack(self.mover, n * n), unpack(self.opponent, n * n)], axis=-1)
        return planes.reshape(*planes.shape[:-2], n, n, 2).astype(jnp.float32)


# ----------------------------------------------------------------------- bitboard helpers
class Geometry:
    """Reversi's spec: static masks and shifts of one board size, hashed by ``size``."""

    def __init__(self, size: int):
        n = self.size = size
        self.cells = n * n
        self.words = num_words(n)
        rows, cols = np.divmod(np.arange(n * n), n)
        self.full = const(pack_mask(np.ones(n * n, bool)))
        not_first, not_last = const(pack_mask(cols != 0)), const(pack_mask(cols != n - 1))
        #: per direction: (shift in bits, mask of squares a one-step shift may land on)
        self.dirs = []
        for dr, dc in DIRECTIONS:
            dest = {1: not_first, -1: not_last, 0: self.full}[dc]
            self.dirs.append((dr * n + dc, dest))
        # Kogge-Stone stages: runs of up to N-2 opponent discs need 2**k - 1 >= N - 2
        self.stages = max(1, math.ceil(math.log2(n - 1)))
        # heuristic weights: corners 10, X-squares -3, other edges 3, interior 1
        edge = (rows == 0) | (rows == n - 1) | (cols == 0) | (cols == n - 1)
        corner = ((rows == 0) | (rows == n - 1)) & ((cols == 0) | (cols == n - 1))
        xsq = ((rows == 1) | (rows == n - 2)) & ((cols == 1) | (cols == n - 2))
        weights = np.where(corner, 10, np.where(xsq, -3, np.where(edge, 3, 1)))
        self.weight_classes = [
            (float(v), const(pack_mask(weights == v))) for v in np.unique(weights)
        ]
        c = n // 2
        start = np.zeros((n, n), np.int32)  # 1 black, 2 white
        start[c - 1, c - 1] = start[c, c] = 2
        start[c - 1, c] = start[c, c - 1] = 1
        self.start_black = pack_mask(start.reshape(-1) == 1)
        self.start_white = pack_mask(start.reshape(-1) == 2)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Geometry) and other.size == self.size

    def __hash__(self) -> int:
        return hash((Geometry, self.size))

    def __repr__(self) -> str:
        return f"Geometry({self.size})"


def legal_moves(geo: Geometry, p: Words, o: Words) -> Words:
    """The squares where ``p`` may place against ``o``: per direction, a fill from ``p``
    through ``o``, one step further onto an empty square."""
    empty = andnot(geo.full, or_(p, o))
    moves = tuple(jnp.zeros_like(x) for x in p)
    for s, dest in geo.dirs:
        flood = fill(p, and_(o, dest), s, geo.stages)
        moves = or_(moves, and_(shift(and_(flood, o), s), dest))
    return and_(moves, empty)


def flips(geo: Geometry, p: Words, o: Words, move: Words) -> Words:
    """The discs of ``o`` flipped by ``p`` placing on ``move`` (one bit, none for a pass): per
    direction, the fill from ``move`` through ``o`` if a disc of ``p`` closes it."""
    out = tuple(jnp.zeros_like(x) for x in p)
    for s, dest in geo.dirs:
        flood = fill(move, and_(o, dest), s, geo.stages)
        closed = any_(and_(and_(shift(flood, s), dest), p))
        run = and_(flood, o)
        out = or_(out, tuple(jnp.where(closed, x, jnp.zeros_like(x)) for x in run))
    return out


def square_bit(geo: Geometry, action: jax.Array) -> Words:
    """int32[] action -> one-bit bitboard of that square (empty for ``pass``)."""
    action = jnp.asarray(action, jnp.int32)
    word, bit = action // 32, (action % 32).astype(jnp.uint32)
    one = jnp.uint32(1) << bit
    return tuple(jnp.where(word == i, one, jnp.uint32(0)) & f for i, f in enumerate(geo.full))


def make_state(
    geo: Geometry,
    mover: Words,
    opponent: Words,
    current_player,
    step_count,
    passed,
    terminated,
    rewards,
) -> ReversiState:
    """Assemble a state, computing the mover's legal mask (all False when ``terminated``)."""
    moves = materialize(legal_moves(geo, mover, opponent), runtime_one(step_count))
    can_place = any_(moves)
    mask = jnp.concatenate(
        [unpack(stack_words(moves), geo.cells), (~can_place)[..., None]], axis=-1
    )
    return ReversiState(
        mover=stack_words(mover),
        opponent=stack_words(opponent),
        **common_fields(
            current_player=current_player,
            legal_action_mask=mask & ~terminated,
            rewards=rewards,
            terminated=terminated,
            step_count=step_count,
        ),
        passed=jnp.asarray(passed, jnp.bool_),
    )


def init(geo: Geometry) -> ReversiState:
    """The start position, black (player 0) to move."""
    black = tuple(jnp.uint32(w) for w in geo.start_black)
    white = tuple(jnp.uint32(w) for w in geo.start_white)
    return make_state(geo, black, white, 0, 0, False, jnp.bool_(False), jnp.zeros(2, jnp.float32))


def step(geo: Geometry, state: ReversiState, action: jax.Array) -> ReversiState:
    """Play a legal ``action`` (int32[]: square or ``N*N`` = pass) for the mover."""
    p, o = split_words(state.mover), split_words(state.opponent)
    move = square_bit(geo, action)
    flipped = materialize(flips(geo, p, o, move), runtime_one(state.step_count))
    p = or_(or_(p, move), flipped)
    o = andnot(o, flipped)
    is_pass = action == geo.cells
    n_moved, n_other = popcount(p), popcount(o)
    terminated = (n_moved + n_other == geo.cells) | (n_other == 0) | (is_pass & state.passed)
    # the outcome packed in one materialised word, so the N*N+1 mask selects don't recount
    (code,) = materialize(
        (
            terminated.astype(jnp.uint32)
            | ((n_moved > n_other).astype(jnp.uint32) << 1)
            | ((n_moved < n_other).astype(jnp.uint32) << 2),
        ),
        runtime_one(state.step_count),
    )
    terminated = (code & 1) != 0
    mover = state.current_player
    winner = jnp.where((code & 2) != 0, mover, jnp.where((code & 4) != 0, 1 - mover, -1))
    rewards = jnp.where(terminated, winner_rewards(winner), 0.0).astype(jnp.float32)
    return make_state(geo, o, p, 1 - mover, state.step_count + 1, is_pass, terminated, rewards)


def heuristic(geo: Geometry, state: ReversiState) -> jax.Array:
    """float32[] weighted disc difference from the mover's view (corners 10, X-squares -3,
    other edges 3, interior 1); a finished game +-1000 plus the disc difference (an illegal
    move's loss read from the rewards, as the board does not show it)."""
    p, o = split_words(state.mover), split_words(state.opponent)
    score = jnp.float32(0)
    for w, m in geo.weight_classes:
        score = score + w * (popcount(and_(p, m)) - popcount(and_(o, m))).astype(jnp.float32)
    diff = (popcount(p) - popcount(o)).astype(jnp.float32)
    # the final step's reward for the mover (0 once a finished game is stepped again)
    reward = jnp.take_along_axis(state.rewards, state.current_player[..., None], -1)[..., 0]
    final = 1000.0 * jnp.where(reward != 0, jnp.sign(reward), jnp.sign(diff)) + diff
    return jnp.where(state.terminated, final, score).astype(jnp.float32)


# ----------------------------------------------------------------------- network features
#: the planes of :func:`mobility_features`, in order
MOBILITY_PLANES = (
    "mover's discs",
    "opponent's discs",
    "empty squares",
    "mover's legal moves",
    "opponent's legal moves",
    "mover's frontier discs",
    "opponent's frontier discs",
)


def mobility_features(obs: jax.Array) -> jax.Array:
    """Input features ``"mobility"``: float32[..., N, N, 2] -> float32[..., N, N, 7], the
    :data:`MOBILITY_PLANES`: what classical othello evaluations weigh most, which an MLP on
    bare discs would have to find line by line. Computed on bitboards with the rules'
    :func:`legal_moves`: a few word operations per direction instead of N x N planes."""
    n = obs.shape[-2]
    geo, lead = Geometry(n), obs.shape[:-3]  # read at trace time
    planes = obs.reshape(*lead, n * n, 2) > 0.5
    p, o = pack(planes[..., 0], geo.words), pack(planes[..., 1], geo.words)
    empty = andnot(geo.full, or_(p, o))
    near_empty = tuple(jnp.zeros_like(x) for x in p)
    for s, dest in geo.dirs:  # an empty square among the 8 neighbours
        near_empty = or_(near_empty, and_(shift(empty, s), dest))
    boards = (
        p,
        o,
        empty,
        legal_moves(geo, p, o),
        legal_moves(geo, o, p),
        and_(p, near_empty),
        and_(o, near_empty),
    )
    # computed once, not fused into each of the N*N bits unpacked from them (docs/scaling.md)
    one = runtime_one(popcount(p))
    boards = tuple(materialize(b, one) for b in boards)
    out = jnp.stack([unpack(stack_words(b), n * n) for b in boards], axis=-1)
    return out.reshape(*lead, n, n, len(boards)).astype(jnp.float32)


# ----------------------------------------------------------------------- presentation
SIDE_NAMES = ("black", "white")


def cells(geo: Geometry, state: ReversiState) -> list[int]:
    """0 empty, 1 black, 2 white per square of one state (plain Python)."""
    mover = np.asarray(unpack(jnp.asarray(state.mover), geo.cells))
    opp = np.asarray(unpack(jnp.asarray(state.opponent), geo.cells))
    black, white = (mover, opp) if int(state.current_player) == 0 else (opp, mover)
    return [1 if b else 2 if w else 0 for b, w in zip(black, white)]


def _board_over(values: list[int]) -> bool:
    """The board shows a finished game: full, or one side without discs."""
    return 0 not in values or 1 not in values or 2 not in values


def board_view(geo: Geometry, state: ReversiState) -> BoardView:
    """Discs on green, star points on boards of 8, 12 and 16, disc counts."""
    n = geo.size
    discs = [None if v == 0 else Piece("-XO"[v], v - 1) for v in cells(geo, state)]
    q = n // 4
    stars = ((q, q), (q, 3 * q), (3 * q, q), (3 * q, 3 * q)) if n >= 8 and n % 4 == 0 else ()
    nb, nw = discs.count(Piece("X", 0)), discs.count(Piece("O", 1))
    black, white = SIDE_NAMES
    return BoardView(
        "reversi",
        tuple(tuple(discs[r * n : (r + 1) * n]) for r in range(n)),
        int(state.current_player),
        BoardStyle(board="#2e8b57", grid="#1b4d32", pieces="disc", star_points=stars),
        summary=f"discs: {black} (X) {nb}, {white} (O) {nw}",
        score=f"{black} {nb} - {white} {nw}",
    )


# ----------------------------------------------------------------------- Env wrapper
class Reversi(Env):
    """``jaxgames.make("reversi", size=N)``, N even in 4..16 (default 8)."""

    name = "reversi"
    rules_version = 1  # raise on any change to how a game plays out (core.Env)
    side_names = SIDE_NAMES
    input_features = {"mobility": mobility_features}

    @classmethod
    def validate_options(cls, size: int = 8) -> None:
        if (
            isinstance(size, bool)
            or not isinstance(size, (int, np.integer))
            or int(size) not in VALID_SIZES
        ):
            raise ValueError(
                f"invalid reversi size {size!r}: must be an even integer in 4..16, "
                f"one of {list(VALID_SIZES)}"
            )

    def __init__(self, size: int = 8) -> None:
        self.validate_options(size)
        self.size = int(size)
        self.geo = self.spec = Geometry(self.size)
        # jitted once per env for eager callers (text, play); inlined under a caller's jit
        self._step_fn = jax.jit(functools.partial(step, self.geo))
        self._heuristic_fn = jax.jit(functools.partial(heuristic, self.geo))
        self._make_state_fn = jax.jit(functools.partial(make_state, self.geo))
        self._start = None

    @property
    def config(self):
        return {"size": self.size}

    @property
    def num_actions(self) -> int:
        return self.size * self.size + 1

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (self.size, self.size, 2)

    @property
    def max_game_length(self) -> int:
        """N*N - 4 placements, and a pass at most before each and after the last."""
        return 2 * (self.size * self.size - 4) + 1

    @property
    def symmetries(self):
        """The 8 rotations and reflections of the board (``pass`` stays ``pass``)."""
        return grid.board_symmetries(grid.dihedral_squares(self.size), 2, extra_actions=1)

    @property
    def pass_action(self) -> int:
        """The action id of ``pass`` (N*N)."""
        return self.size * self.size

    def _init(self, key):
        if self._start is None:  # the start position is a constant: build it once, concretely
            with jax.ensure_compile_time_eval():
                self._start = jax.tree_util.tree_map(
                    np.asarray, jax.jit(functools.partial(init, self.geo))()
                )
        return jax.tree_util.tree_map(jnp.asarray, self._start)

    def _step(self, state, action):
        chex.assert_shape([state.mover, state.opponent], (self.geo.words,))
        chex.assert_shape(state.legal_action_mask, (self.num_actions,))
        return self._step_fn(state, action)

    def observe(self, state, player):
        """The planes swapped for the player not to move (discs are stored by mover)."""
        check_player(player)
        obs = state.observation
        same = players_of(state, player) == state.current_player  # [] or the batch's axes
        same = same.reshape(same.shape + (1,) * len(self.observation_shape))
        return jnp.where(same, obs, obs[..., ::-1])

    def heuristic(self, state):
        """float32[]: weighted disc difference from the mover's view (see :func:`heuristic`)."""
        return self._heuristic_fn(state)

    def score(self, state):
        """float32[2] by player id: own discs minus the opponent's (empty squares count for
        nobody)."""
        mover = popcount(split_words(state.mover)).astype(jnp.float32)
        other = popcount(split_words(state.opponent)).astype(jnp.float32)
        margin = (mover - other)[..., None]  # the mover's (any batch axes)
        return jnp.where(jnp.arange(2) == state.current_player[..., None], margin, -margin)

    def board_view(self, state) -> BoardView:
        return board_view(self.geo, state)

    # ------------------------------------------------------------------- text
    def to_text(self, state) -> str:
        check_one_game(state, "env.to_text")
        values = cells(self.geo, state)
        text = f"{''.join('-XO'[v] for v in values)} {'XO'[int(state.current_player)]}"
        over = bool(state.terminated) or bool(state.truncated)
        return f"{text} {grid.GAME_OVER}" if over and not _board_over(values) else text

    def from_text(self, text: str) -> ReversiState:
        n, n2 = self.size, self.size * self.size
        values, side, over = grid.parse_grid_position(text, n2, "-XO", "XO")
        c = n // 2
        centre = [(c - 1) * n + c - 1, (c - 1) * n + c, c * n + c - 1, c * n + c]
        if any(values[i] == 0 for i in centre):
            names = ", ".join(grid.square_name(i, n) for i in centre)
            raise ValueError(
                f"impossible position {quote(text, grid.POSITION_QUOTE)}: the centre squares "
                f"{names} can never be empty"
            )
        black = pack_mask(np.array(values) == 1)
        white = pack_mask(np.array(values) == 2)
        mover, opp = (black, white) if side == 0 else (white, black)
        nb, nw = values.count(1), values.count(2)
        mw = tuple(jnp.uint32(x) for x in mover)
        ow = tuple(jnp.uint32(x) for x in opp)
        zeros = jnp.zeros(2, jnp.float32)

        def can_place(p, o) -> bool:
            s = self._make_state_fn(p, o, 0, nb + nw - 4, False, jnp.bool_(False), zeros)
            return bool(jnp.any(s.legal_action_mask[:-1]))

        # decided by the rules (the disc majority wins): a full or one-coloured board, or a
        # game marked over where neither side can place (it ended with two passes); marked
        # over with a placement left, it ended otherwise (an illegal move): no result known
        board_over = _board_over(values)
        decided = board_over or (over and not can_place(mw, ow) and not can_place(ow, mw))
        winner = 0 if nb > nw else 1 if nw > nb else -1
        rewards = winner_rewards(jnp.int32(winner)) if decided else zeros
        terminated = over or board_over
        return self._make_state_fn(mw, ow, side, nb + nw - 4, False, jnp.bool_(terminated), rewards)

    def action_to_text(self, state, action: int) -> str:
        check_one_game(state, "env.action_to_text")
        a = action_index(action)
        if not 0 <= a < self.num_actions:
            raise ValueError(f"action {a} is out of range 0..{self.num_actions - 1}")
        return "pass" if a == self.pass_action else grid.square_name(a, self.size)

    def text_to_action(self, state, text: str) -> int:
        t = grid.check_text(text, "a move", "d3").strip(" \t\r\n").lower()
        if bool(state.terminated) or bool(state.truncated):
            raise ValueError(f"illegal move {quote(t)}: the game is over")
        if t == "pass":
            if not bool(state.legal_action_mask[self.pass_action]):
                raise ValueError(
                    "illegal move 'pass': a placement is available; "
                    f"legal: {self.describe_legal(state)}"
                )
            return self.pass_action
        action = grid.parse_square(t, self.size, self.size)
        if not bool(state.legal_action_mask[action]):
            values = cells(self.geo, state)
            if values[action]:
                why = f"the square is occupied by {'XO'[values[action] - 1]}"
            else:
                why = "it flips no discs"
            raise ValueError(f"illegal move {quote(t)}: {why}; legal: {self.describe_legal(state)}")
        return action
