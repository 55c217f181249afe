"""Animal shogi solved: every position reachable from the start, its game-theoretic value for
the side to move and its distance to the end in plies, by retrograde analysis (Tanaka 2009,
"Animal shogi is solved"), and the ``perfect`` player that reads it.

    table = solve_animal_shogi()                  # builds and caches the table (a C program)
    table = load_table()                          # the cached table, memory-mapped
    value, plies = table.lookup(positions)        # uint8[N, 18] -> int8[N] (+1/0/-1), int32[N]
    policy = perfect_policy(table)                # policy(key, state) -> int32[]

The solver (``animal_shogi_solver.c`` beside this module) is compiled with the system C
compiler (``$CC``, ``cc`` or ``gcc``) at first use into the cache folder and loaded with
ctypes. It plays the rules of :mod:`jaxgames.games.animal_shogi.rules` (no lion is ever
captured, a side with no legal move has lost, a try wins at once) and ignores what is not part
of a position: the ``max_steps`` cap and repetition, so a position neither side can force to
a result is a draw, the convention of retrograde analysis.

A position is kept in its mover's frame (``rules.mover_view``: the side to move is
normalised away) with the left-right mirror folded (the smaller of the two keys); its key
packs the 12 square codes (4 bits each, square 0 first) and the six hand counts (2 bits each,
the mover's giraffes, elephants, chicks, then the opponent's). Results, ``uint16``: 0 a draw,
else ``distance << 2 | 1`` (a win for the side to move) or ``| 2`` (a loss).

The cache folder is ``$JAXGAMES_SOLVE_CACHE``, else ``$XDG_CACHE_HOME/jaxgames/solved`` (or
``~/.cache/jaxgames/solved``); ``JAXGAMES_SOLVE_CACHE=0`` turns saving and loading off.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import json
import os
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import (
    DEFAULT_RULES_VERSION,
    ExternalPlayerError,
    Policy,
    quiet_external_errors,
    random_action,
)
from jaxgames.evaluation import native
from jaxgames.games.animal_shogi.env import AnimalShogi
from jaxgames.games.animal_shogi.rules import (
    INIT_BOARD,
    NUM_ACTIONS,
    apply_action,
    mover_view,
    rotate,
)

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "animal_shogi_solver.c")
ENV_VAR = native.ENV_VAR
SolverUnavailable = native.SolverUnavailable
#: hash slots of the full solve: 2**29 (4 GiB of keys; the table holds up to 90% of them)
FULL_LOG2_SLOTS = 29
WIN, LOSS = 1, 2
#: the start position in its mover's frame: board codes then hands (uint8[18])
START = np.concatenate([INIT_BOARD, np.zeros(6, np.int32)]).astype(np.uint8)
_ERRORS = {
    -1: "out of memory",
    -2: "the hash table is too small (raise log2_slots)",
    -3: "a distance overflows 14 bits",
}
_STATS = ("positions", "wins", "losses", "draws", "longest", "levels", "forward_s", "backward_s")


class TableMissing(FileNotFoundError):
    """The solved table is not in the cache (``jaxgames solve animal_shogi`` builds it)."""


cache_dir = native.cache_dir


#: the C solver keeps its tables and rules in globals (ctypes lets go of the GIL during a
#: call): one call at a time per process (re-entrant: a count sets the rules, then solves)
_LOCK = threading.RLock()


@functools.lru_cache(maxsize=None)
def library():
    """The loaded solver (ctypes), built at first use."""
    lib = native.load(SOURCE)
    u8p, u64p = ctypes.POINTER(ctypes.c_uint8), ctypes.POINTER(ctypes.c_uint64)
    lib.as_solve.restype = ctypes.c_int64
    lib.as_solve.argtypes = [u8p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.as_solve.argtypes += [ctypes.POINTER(ctypes.c_int64)]
    lib.as_keys.restype = u64p
    lib.as_results.restype = ctypes.POINTER(ctypes.c_uint16)
    lib.as_key.restype = ctypes.c_uint64
    lib.as_key.argtypes = [u8p]
    lib.as_set_rules.argtypes = [ctypes.c_int]
    for name in ("as_children", "as_parents"):
        getattr(lib, name).restype = ctypes.c_int
        getattr(lib, name).argtypes = [u8p, u64p]
    return lib


def _u8(a: np.ndarray):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8))


def c_children(position: np.ndarray) -> np.ndarray:
    """uint8[18] position -> uint64[n] sorted canonical keys of its successors (the C move
    generator; none after a try)."""
    out = np.zeros(128, np.uint64)
    pos = np.ascontiguousarray(position, np.uint8)
    lib = library()
    with _LOCK:
        n = lib.as_children(_u8(pos), out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)))
    return out[:n]


def c_parents(position: np.ndarray) -> np.ndarray:
    """uint8[18] position -> uint64[n] sorted canonical keys of every position with a move to
    it (un-moves; a superset of the legal predecessors)."""
    out = np.zeros(512, np.uint64)
    pos = np.ascontiguousarray(position, np.uint8)
    lib = library()
    with _LOCK:
        n = lib.as_parents(_u8(pos), out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)))
    return out[:n]


# ------------------------------------------------------------------------- keys in numpy
_BOARD_SHIFT = np.array([12 + 4 * (11 - s) for s in range(12)], np.uint64)
_HAND_SHIFT = np.array([2 * (5 - i) for i in range(6)], np.uint64)
_MIRROR = np.array([r * 3 + 2 - c for r in range(4) for c in range(3)])


def canonical_keys(positions: np.ndarray) -> np.ndarray:
    """uint8[..., 18] positions (board codes in the mover's frame, the mover's hand, the
    opponent's) -> uint64[...] keys, the mirror folded (as the C solver's)."""
    p = np.asarray(positions).astype(np.uint64)
    hands = np.sum(p[..., 12:] << _HAND_SHIFT, axis=-1, dtype=np.uint64)
    plain = np.sum(p[..., :12] << _BOARD_SHIFT, axis=-1, dtype=np.uint64) + hands
    mirror = np.sum(p[..., _MIRROR] << _BOARD_SHIFT, axis=-1, dtype=np.uint64) + hands
    return np.minimum(plain, mirror)


def decode_keys(keys: np.ndarray) -> np.ndarray:
    """uint64[...] keys -> uint8[..., 18] positions (the inverse of the unfolded key)."""
    k = np.asarray(keys, np.uint64)[..., None]
    board = (k >> _BOARD_SHIFT) & np.uint64(15)
    hands = (k >> _HAND_SHIFT) & np.uint64(3)
    return np.concatenate([board, hands], axis=-1).astype(np.uint8)


def state_positions(board, hand, player) -> jax.Array:
    """Absolute board int32[12], hands int32[2, 3], mover int32[] -> int32[18] the position in
    the mover's frame (jittable)."""
    own = jnp.where(player == 0, hand[0], hand[1])
    opp = jnp.where(player == 0, hand[1], hand[0])
    return jnp.concatenate([mover_view(board, player), own, opp]).astype(jnp.int32)


def successor_positions(position: jax.Array) -> jax.Array:
    """int32[18] position -> int32[132, 18] the position after each action, in the next
    mover's frame (illegal actions give meaningless rows; jittable)."""

    def after(action):
        view, own = apply_action(position[:12], position[12:15], action)
        return jnp.concatenate([rotate(view), position[15:], own])

    return jax.vmap(after)(jnp.arange(NUM_ACTIONS, dtype=jnp.int32))


# ------------------------------------------------------------------------------- the table
@dataclasses.dataclass(frozen=True)
class SolvedTable:
    """Solved positions: ``keys`` uint64[N] sorted, ``results`` uint16[N] (0 a draw, else
    ``distance << 2 | 1`` a win or ``| 2`` a loss for the side to move); ``stats`` of the
    solve (positions, wins, losses, draws, longest, levels, seconds)."""

    keys: np.ndarray
    results: np.ndarray
    stats: dict

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def lookup(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """uint8[..., 18] positions -> (int8[...] +1 win / 0 draw / -1 loss for the side to
        move, int32[...] plies to the end, 0 for draws); ``KeyError`` for a position not in
        the table (not reachable from the roots)."""
        keys = canonical_keys(positions)
        flat = keys.reshape(-1)
        at = np.minimum(np.searchsorted(self.keys, flat), len(self) - 1)
        found = self.keys[at] == flat
        if not np.all(found):
            raise KeyError(f"{int(np.sum(~found))} positions are not in the solved table")
        res = self.results[at].astype(np.int32)
        value = np.where(res == 0, 0, np.where((res & 3) == WIN, 1, -1)).astype(np.int8)
        return value.reshape(keys.shape), (res >> 2).reshape(keys.shape)

    def unfolded_count(self, chunk: int = 1 << 22) -> int:
        """Positions with a position and its mirror image counted apart (the symmetric ones
        once): the count without mirror folding."""
        total = 0
        for i in range(0, len(self), chunk):
            pos = decode_keys(np.asarray(self.keys[i : i + chunk]))
            symmetric = np.all(pos[:, :12] == pos[:, _MIRROR], axis=1)
            total += 2 * len(pos) - int(symmetric.sum())
        return total

    def save(self, folder: str, name: str = "animal_shogi") -> str:
        """Write ``<name>.keys.npy``, ``<name>.results.npy`` and ``<name>.json`` (the stats)
        into ``folder``, each atomically; the folder."""
        os.makedirs(folder, exist_ok=True)
        for part, array in (("keys", self.keys), ("results", self.results)):
            path = os.path.join(folder, f"{name}.{part}.npy")
            tmp = f"{path}.{os.getpid()}.npy"
            np.save(tmp, array)
            os.replace(tmp, path)
        path = os.path.join(folder, f"{name}.json")
        with open(f"{path}.{os.getpid()}", "w") as f:
            json.dump(self.stats, f, indent=1)
        os.replace(f"{path}.{os.getpid()}", path)
        return folder


def solve(
    roots: np.ndarray | None = None, *, log2_slots: int | None = None, verbose: bool = False
) -> SolvedTable:
    """Solve every position reachable from ``roots`` (uint8[R, 18], each in its mover's
    frame; default the start position) in memory. ``log2_slots``: the hash table's size
    (default: the full solve's 2**29; tests use small ones)."""
    roots = START[None] if roots is None else np.ascontiguousarray(roots, np.uint8)
    if roots.ndim != 2 or roots.shape[1] != 18:
        raise ValueError(f"roots must be uint8[R, 18], got shape {roots.shape}")
    log2_slots = FULL_LOG2_SLOTS if log2_slots is None else int(log2_slots)
    lib = library()
    stats = (ctypes.c_int64 * 8)()
    t0 = time.perf_counter()
    with _LOCK:
        n = lib.as_solve(_u8(roots), len(roots), log2_slots, int(verbose), stats)
        if n < 0:
            raise SolverUnavailable(f"the solve failed: {_ERRORS.get(n, n)}")
        try:
            keys = np.ctypeslib.as_array(lib.as_keys(), shape=(n,)).copy()
            results = np.ctypeslib.as_array(lib.as_results(), shape=(n,)).copy()
        finally:
            lib.as_free()
    info = dict(zip(_STATS, map(int, stats)))
    info["seconds"] = round(time.perf_counter() - t0, 1)
    info["rules_version"] = AnimalShogi.rules_version
    return SolvedTable(keys, results, info)


#: the rules :func:`count_reachable` can enumerate (the C source's ``RULES``)
COUNT_RULES = {"jaxgames": 0, "official": 1, "official-capture-ends": 2}


def count_reachable(
    roots: np.ndarray | None = None, *, rules: str = "jaxgames", log2_slots: int | None = None
) -> dict[str, int]:
    """Positions reachable from ``roots`` (default the start), enumerated and not solved:
    ``{"positions": mover's frame, mirror folded; "unfolded": mirror images apart}``.
    ``rules``: jaxgames'; ``"official"`` (any move legal, a lion capture ends the game, a
    capture may be declined); ``"official-capture-ends"`` (as official, and a position whose
    mover can capture the opponent's lion is over: the convention of a count of the positions
    of games played to a result, as Tanaka (2009)'s)."""
    if rules not in COUNT_RULES:
        raise ValueError(f"rules must be one of {', '.join(COUNT_RULES)}, not {rules!r}")
    lib = library()
    with _LOCK:
        lib.as_set_rules(COUNT_RULES[rules])
        try:
            table = solve(roots, log2_slots=log2_slots)
        finally:
            lib.as_set_rules(0)
    return {"positions": len(table), "unfolded": table.unfolded_count()}


def table_paths(folder: str | None = None) -> tuple[str, str, str] | None:
    """The table's files (keys, results, stats) in ``folder`` (default :func:`cache_dir`;
    ``None`` when the cache is off)."""
    folder = cache_dir() if folder is None else folder
    if folder is None:
        return None
    return tuple(
        os.path.join(folder, f"animal_shogi.{p}") for p in ("keys.npy", "results.npy", "json")
    )


def solve_animal_shogi(
    folder: str | None = None, *, verbose: bool = False, save: bool = True
) -> SolvedTable:
    """The full solve from the start position, saved into ``folder`` (default
    :func:`cache_dir`; not saved when that is off or ``save=False``)."""
    table = solve(verbose=verbose)
    folder = cache_dir() if folder is None else folder
    if save and folder is not None:
        table.save(folder)
    return table


@functools.lru_cache(maxsize=2)
def _load(folder: str) -> SolvedTable:
    """The table in ``folder``; ``ValueError`` naming the folder if its files are damaged."""
    keys_path, results_path, stats_path = table_paths(folder)
    damaged = f"the solved table in {folder} is damaged"
    fix = "run 'jaxgames solve animal_shogi --force' to rebuild it"
    try:
        with open(stats_path) as f:
            stats = json.load(f)
        keys = np.load(keys_path, mmap_mode="r")
        results = np.load(results_path, mmap_mode="r")
    except (ValueError, EOFError) as e:  # not JSON, not a NumPy file, an empty file
        raise ValueError(f"{damaged} ({' '.join(str(e).split()) or 'empty'}); {fix}") from None
    counts = ("positions", "wins", "losses", "draws", "longest")
    if not isinstance(stats, dict) or not all(
        type(stats.get(k)) is int and stats[k] >= 0 for k in counts
    ):
        raise ValueError(f"{damaged} (its statistics lack counts of {', '.join(counts)}); {fix}")
    shapes_ok = keys.ndim == results.ndim == 1 and keys.shape == results.shape and len(keys)
    if keys.dtype != np.uint64 or results.dtype != np.uint16 or not shapes_ok:
        raise ValueError(
            f"{damaged} (keys {keys.dtype}{list(keys.shape)}, results "
            f"{results.dtype}{list(results.shape)}: expected uint64[N] and uint16[N]); {fix}"
        )
    outcomes = stats["wins"] + stats["losses"] + stats["draws"]
    if not len(keys) == stats["positions"] == outcomes:
        raise ValueError(
            f"{damaged} ({len(keys):,} positions; its statistics say {stats['positions']:,}, "
            f"{outcomes:,} won, lost or drawn); {fix}"
        )
    rules = stats.get("rules_version", DEFAULT_RULES_VERSION)
    if rules != AnimalShogi.rules_version:
        raise ValueError(
            f"the solved table in {folder} was built under animal_shogi rules version {rules}; "
            f"this jaxgames plays version {AnimalShogi.rules_version}: {fix}"
        )
    return SolvedTable(keys, results, stats)


def load_table(folder: str | None = None) -> SolvedTable:
    """The cached full table, memory-mapped (loaded once per process); :class:`TableMissing`
    telling how to build it."""
    paths = table_paths(folder)
    if paths is None:
        raise TableMissing(
            f"the solved animal-shogi table is off ({ENV_VAR}=0); set {ENV_VAR} to its folder"
        )
    if not all(os.path.exists(p) for p in paths):
        raise TableMissing(
            f"the solved animal-shogi table is not in {os.path.dirname(paths[0])}: run "
            "'jaxgames solve animal_shogi' first (minutes; several GB of memory)"
        )
    return _load(os.path.dirname(paths[0]))


def check_consistency(table: SolvedTable, count: int, seed: int = 0) -> dict:
    """Check ``count`` random entries against their successors (the C move generator): a
    win in d has a successor lost in d - 1 and none lost sooner, a loss in d has only won
    successors, the longest won in d - 1 (none at d = 0), a draw has a drawn successor and
    no lost one. ``{"checked": n, "failures": [keys...]}``."""
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(table), size=min(count, len(table)), replace=False)
    failures = []
    for i in np.sort(picks):
        key = int(table.keys[i])
        res = int(table.results[i])
        succ = decode_keys(c_children(decode_keys(np.uint64(key))))
        if len(succ):
            value, plies = table.lookup(succ)
        else:
            value, plies = np.zeros(0, np.int8), np.zeros(0, np.int32)
        d = res >> 2
        if res == 0:
            ok = bool(np.any(value == 0)) and not np.any(value == -1)
        elif res & 3 == WIN:
            ok = bool(np.any(value == -1)) and int(plies[value == -1].min()) == d - 1
        else:
            ok = bool(np.all(value == 1)) and (d == 0) == (len(succ) == 0)
            ok = ok and (d == 0 or int(plies.max()) == d - 1)
        if not ok:
            failures.append(key)
    return {"checked": len(picks), "failures": failures}


# --------------------------------------------------------------------------- the player
def action_scores(table: SolvedTable, positions: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """int32[B, 132, 18] successors, bool[B, 132] legal -> int32[B, 132] score of each move
    for its mover (higher is better; illegal moves lowest): a win sooner beats a win later,
    any win beats a draw, a draw beats a loss, a loss later beats a loss sooner."""
    scores = np.full(legal.shape, -(2**30), np.int32)
    if np.any(legal):
        value, plies = table.lookup(np.asarray(positions)[legal].astype(np.uint8))
        # the successor's value is the opponent's: its loss is our win, one ply further
        mine = -value.astype(np.int32)
        scores[legal] = np.where(mine > 0, 100_000 - plies, np.where(mine < 0, -100_000 + plies, 0))
    return scores


def perfect_policy(table: SolvedTable | None = None) -> Policy:
    """The perfect player ``policy(key, state) -> int32[]`` (jittable, vmappable: the table
    is read on the host): among the legal moves, those keeping the position's value, the
    fastest win or the slowest loss, one of them drawn with ``key``. ``table``: default
    :func:`load_table` (:class:`TableMissing` when not built)."""
    table = load_table() if table is None else table
    quiet_external_errors()

    def host(positions, legal):
        legal = np.asarray(legal)
        flat = np.asarray(positions).reshape(-1, NUM_ACTIONS, 18)
        try:
            scores = action_scores(table, flat, legal.reshape(-1, NUM_ACTIONS))
        except KeyError:
            raise ExternalPlayerError(
                "perfect: a position is not in the solved table: it cannot be reached from "
                "animal shogi's start (the table holds every position that can)"
            ) from None
        return scores.reshape(legal.shape)

    def policy(key: jax.Array, state) -> jax.Array:
        pos = state_positions(state.board, state.hand, state.current_player)
        succ = successor_positions(pos)
        legal = state.legal_action_mask
        scores = jax.pure_callback(
            host,
            jax.ShapeDtypeStruct(legal.shape, jnp.int32),
            succ,
            legal,
            vmap_method="broadcast_all",
        )
        best = legal & (scores >= jnp.max(jnp.where(legal, scores, -(2**30))))
        best = jnp.where(jnp.any(best), best, legal)
        return random_action(key, best)

    return policy
