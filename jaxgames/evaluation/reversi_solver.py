"""Exact reversi solver in C (``reversi_solver.c`` beside this module, built at first use by
:mod:`jaxgames.evaluation.native`): the final disc margin of a position with perfect play by
both sides, and the perfect player from a number of empty squares.

    margin, nodes = solve_position(6, mover_bits, opponent_bits)   # exact, on the host
    policy = perfect_policy(env, max_empties=16)     # exact from 16 empties, engine before

The JAX engine (:func:`jaxgames.evaluation.reversi_engine.solve_endgame`, spec ``solve:E:``)
solves endgames on device in batches up to 20 empties; this solver runs one position at a
time on the host with a transposition table, move ordering and parity
(``reversi_solver.c``), for deeper endings and the values of whole 6x6 games.
"""

from __future__ import annotations

import ctypes
import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, Policy, random_action
from jaxgames.evaluation import native

SOURCE = __file__[: -len(".py")] + ".c"
#: the final margin lies within +-N*N, so (-BOUND, BOUND) is the full window
BOUND = 65


#: the C solver keeps its search in globals (ctypes lets go of the GIL during a call): one
#: solve at a time per process
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def library():
    """The loaded solver (ctypes), built at first use."""
    lib = native.load(SOURCE)
    lib.solve.restype = ctypes.c_longlong
    lib.solve.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int]
    lib.solve.argtypes += [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    return lib


#: the board sizes the C solver is built for
SIZES = (4, 6, 8)


def check_size(size: int, name: str = "size") -> None:
    """``ValueError`` unless the solver has boards of ``size`` (``name`` names it)."""
    if size not in SIZES:
        raise ValueError(f"{name} must be 4, 6 or 8 (the solver's boards), got {size}")


def check_position(size: int, mover: int, opponent: int) -> None:
    """``ValueError`` unless ``mover`` and ``opponent`` are bitboards of a ``size`` board (one
    bit a square, ``row * size + col``) with no square in both."""
    check_size(size)
    full = (1 << size * size) - 1
    for name, bits in (("mover", mover), ("opponent", opponent)):
        if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
            raise ValueError(f"{name} must be an int bitboard, got {type(bits).__name__}")
        if not 0 <= int(bits) <= full:
            raise ValueError(
                f"{name}={int(bits):#x} is not a bitboard of a {size}x{size} board (bits 0.."
                f"{size * size - 1})"
            )
    if int(mover) & int(opponent):
        raise ValueError(f"mover and opponent share squares ({int(mover) & int(opponent):#x})")


def solve_position(
    size: int,
    mover: int,
    opponent: int,
    *,
    passed: bool = False,
    alpha: int = -BOUND,
    beta: int = BOUND,
) -> tuple[int, int]:
    """(final disc margin for the mover with perfect play, nodes searched) of the position
    with the mover's and the opponent's discs as bitboards (bit ``row * size + col``);
    ``passed``: the opponent has just passed. Exact inside (alpha, beta), else a bound of the
    same side ((-1, 1): the sign alone, far cheaper)."""
    check_position(size, mover, opponent)
    value = ctypes.c_int()
    lib = library()
    with _LOCK:
        nodes = lib.solve(
            size, int(mover), int(opponent), int(alpha), int(beta), int(passed), ctypes.byref(value)
        )
    if nodes < 0:
        raise MemoryError("the reversi solver could not allocate its transposition table")
    return value.value, int(nodes)


def join_words(words) -> int:
    """A bitboard stored as words of 32 bits (uint32[W], lowest first) as a Python int."""
    return sum(int(w) << (32 * i) for i, w in enumerate(np.asarray(words, np.uint64)))


def state_bits(state) -> tuple[int, int]:
    """A reversi state's (mover, opponent) bitboards as Python ints (words of 32 bits)."""
    return join_words(state.mover), join_words(state.opponent)


def move_margins(size: int, mover: int, opponent: int, passed: bool = False) -> dict[int, int]:
    """Action -> the mover's final margin after it with perfect play (placements; ``{N*N: m}``
    for a forced pass, and for a finished game its final margin)."""
    check_position(size, mover, opponent)
    full = (1 << size * size) - 1
    out = {}
    for sq in range(size * size):
        bit = 1 << sq
        if (mover | opponent) & bit:
            continue
        flipped = _flips(size, mover, opponent, sq)
        if flipped:
            m, _ = solve_position(size, opponent & ~flipped, (mover | flipped | bit) & full)
            out[sq] = -m
    if not out:
        m, _ = solve_position(size, opponent, mover, passed=True)
        out[size * size] = -m
    return out


def _flips(size: int, p: int, o: int, sq: int) -> int:
    r0, c0 = divmod(sq, size)
    total = 0
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)):
        r, c, line = r0 + dr, c0 + dc, 0
        while 0 <= r < size and 0 <= c < size and o >> (r * size + c) & 1:
            line |= 1 << (r * size + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < size and 0 <= c < size and p >> (r * size + c) & 1:
            total |= line
    return total


def perfect_policy(env: Env, max_empties: int, before: Policy | None = None) -> Policy:
    """``before`` (default: uniform random) until at most ``max_empties`` squares are empty,
    then perfect play: a move of the best final margin, one of them drawn with ``key``
    (jittable, vmappable: the solver runs on the host, one position at a time)."""
    if getattr(env, "name", None) != "reversi":
        raise ValueError(f"the reversi solver needs a reversi env, not {env!r}")
    size, cells = env.size, env.size * env.size
    before = (
        (lambda key, state: random_action(key, state.legal_action_mask))
        if before is None
        else before
    )

    def host(mover, opponent, passed, legal):
        mover, opponent = np.asarray(mover, np.uint64), np.asarray(opponent, np.uint64)
        passed, legal = np.asarray(passed), np.asarray(legal)
        flat = legal.reshape(-1, legal.shape[-1])
        words = mover.reshape(len(flat), -1), opponent.reshape(len(flat), -1)
        scores = np.full(flat.shape, -(2**20), np.int32)
        for i in range(len(flat)):
            p, o = join_words(words[0][i]), join_words(words[1][i])
            if cells - bin(p | o).count("1") > max_empties or not flat[i].any():
                continue
            for action, margin in move_margins(size, p, o, bool(passed.reshape(-1)[i])).items():
                scores[i, action] = margin
        return scores.reshape(legal.shape)

    def policy(key: jax.Array, state) -> jax.Array:
        legal = state.legal_action_mask
        scores = jax.pure_callback(
            host,
            jax.ShapeDtypeStruct(legal.shape, jnp.int32),
            state.mover,
            state.opponent,
            state.passed,
            legal,
            vmap_method="broadcast_all",
        )
        best = legal & (scores >= jnp.max(jnp.where(legal, scores, -(2**20))))
        exact = jnp.any(scores > -(2**20))
        k1, k2 = jax.random.split(key)
        return jnp.where(exact, random_action(k1, best), before(k2, state)).astype(jnp.int32)

    return policy


def random_endgames(size: int, empties: int, count: int, seed: int = 0) -> list[tuple[int, int]]:
    """``count`` (mover, opponent) bitboards of unfinished positions with exactly ``empties``
    empty squares, from random games on the host (a pass where no placement exists)."""
    check_size(size)
    if not 1 <= empties <= size * size - 4:
        raise ValueError(f"empties must be from 1 to {size * size - 4}, got {empties}")
    rng = np.random.default_rng(seed)
    full = (1 << size * size) - 1
    h = size // 2
    out: list[tuple[int, int]] = []
    while len(out) < count:
        # the start: white on d4/e5 (row h-1, col h-1 and row h, col h), black on the others
        white = (1 << ((h - 1) * size + h - 1)) | (1 << (h * size + h))
        black = (1 << ((h - 1) * size + h)) | (1 << (h * size + h - 1))
        p, o = black, white
        passes = 0
        while passes < 2 and size * size - bin(p | o).count("1") > empties:
            moves = [
                s for s in range(size * size) if not (p | o) >> s & 1 and _flips(size, p, o, s)
            ]
            if not moves:
                passes += 1
                p, o = o, p
                continue
            passes = 0
            sq = int(rng.choice(moves))
            f = _flips(size, p, o, sq)
            p, o = o & ~f, (p | f | (1 << sq)) & full
        if passes < 2 and size * size - bin(p | o).count("1") == empties:
            out.append((p, o))
    return out
