"""Opening sets: distinct positions a few random plies from the start, deterministic in (game,
n, plies, seed), so deterministic players meet varied games and all players the same ones.

Candidate k plays ``plies`` random plies with the key ``fold_in(PRNGKey(seed), k)``; finished
games and repeated positions are dropped and the first ``n`` kept, so the set for ``n`` is a
prefix of the set for any larger ``n``.
"""

from __future__ import annotations

import functools
import hashlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, GameState, play_random_plies

_CANDIDATES_PER_ROUND = 256


@functools.lru_cache(maxsize=16)
def _playouts(env: Env, batch: int):
    """Jitted ``(key, first, plies) -> states[batch]``, candidates first .. first + batch."""

    def one(key, plies):
        k_init, k_play = jax.random.split(key)
        return play_random_plies(env, env.init(k_init), k_play, plies)

    def run(key, first, plies):
        ks = jax.vmap(lambda i: jax.random.fold_in(key, i))(first + jnp.arange(batch))
        return jax.vmap(one, in_axes=(0, None))(ks, plies)

    return jax.jit(run)


def position_keys(states: GameState) -> list[bytes]:
    """One byte string per game of a batch: its observation and player to move."""
    parts = [np.asarray(states.observation), np.asarray(states.current_player)]
    rows = [p.reshape(p.shape[0], -1) for p in parts]
    return [b"".join(r[i].tobytes() for r in rows) for i in range(rows[0].shape[0])]


def num_games(states: GameState) -> int:
    """Leading (batch) size of a batched state."""
    return int(np.shape(states.current_player)[0])


class FewOpenings(ValueError):
    """Fewer distinct openings than asked for (:func:`openings` with ``repeat=False``)."""

    def __init__(self, message: str, distinct: int):
        super().__init__(message)
        self.distinct = distinct


def openings(
    env: Env, n: int, plies: int, seed: int = 0, *, max_stall: int = 8, repeat: bool = True
) -> GameState:
    """``n`` distinct unfinished positions ``plies`` random plies deep: a batched state with
    numpy leaves [n, ...]. A game with fewer (none new in ``max_stall`` rounds of 256
    candidates) repeats them in order, with a warning, or with ``repeat=False`` raises
    :class:`FewOpenings` (its ``distinct``: how many there are)."""
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"need n >= 1 openings, got {n!r}")
    if isinstance(plies, bool) or int(plies) != plies or plies < 0:
        raise ValueError(f"need plies >= 0, got {plies!r}")
    n, plies = int(n), int(plies)
    run = _playouts(env, _CANDIDATES_PER_ROUND)
    base = jax.random.PRNGKey(seed)
    seen: set[bytes] = set()
    rounds, chosen = [], []  # chosen: (round, index)
    stall = 0
    while len(chosen) < n and stall < max_stall:
        r = len(rounds)
        states = jax.device_get(run(base, jnp.int32(r * _CANDIDATES_PER_ROUND), jnp.int32(plies)))
        rounds.append(states)
        done = np.asarray(states.terminated) | np.asarray(states.truncated)
        new = 0
        for i, k in enumerate(position_keys(states)):
            if done[i] or k in seen:
                continue
            seen.add(k)
            chosen.append((r, i))
            new += 1
            if len(chosen) == n:
                break
        stall = 0 if new else stall + 1
    if not chosen:
        raise ValueError(f"every {env.name} game is over within {plies} random plies")
    if len(chosen) < n:
        few = f"{env!r} has only {len(chosen)} distinct unfinished positions after {plies} random "
        if not repeat:
            raise FewOpenings(few + f"plies, not {n}", len(chosen))
        warnings.warn(few + f"plies (found); repeating them to make {n} openings", stacklevel=2)
        chosen = [chosen[i % len(chosen)] for i in range(n)]
    pool = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *rounds)
    idx = np.array([r * _CANDIDATES_PER_ROUND + i for r, i in chosen])
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[idx], pool)


def openings_digest(states: GameState) -> str:
    """sha256 (hex, first 16 chars) of a batched state's arrays: fingerprints an opening set."""
    h = hashlib.sha256()
    for leaf in jax.tree_util.tree_leaves(states):
        a = np.ascontiguousarray(np.asarray(leaf))
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]
