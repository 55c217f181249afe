"""Perft for any game: each ply expands every legal action of the whole frontier in one jitted
``vmap`` and compacts the frontier on the host (its size changes every ply). Used by the rule
tests."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, GameState


class PerftResult(NamedTuple):
    """Counts per ply ``d = 1..depth`` (index ``d - 1``): ``nodes`` live positions (leaves of
    perft(d)), ``finished`` games that ended at ply d, ``by_winner`` int64[depth, 3] of those won
    by player 0, by player 1, drawn."""

    nodes: list[int]
    finished: list[int]
    by_winner: np.ndarray


def perft(env: Env, depth: int, state: GameState | None = None, chunk: int = 4096) -> PerftResult:
    """Count move sequences from ``state`` (default: the start) up to ``depth`` plies (a pass
    is a ply; a finished game is no leaf of deeper plies); ``chunk`` states per jitted call."""
    if state is None:
        state = env.init(jax.random.PRNGKey(0))
    actions = jnp.arange(env.num_actions, dtype=jnp.int32)
    over_actions = jax.vmap(env.step, in_axes=(None, 0))
    expand = jax.jit(jax.vmap(lambda s: over_actions(s, actions)))  # states[B] -> [B, A]
    frontier = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], state)
    nodes, finished, by_winner = [], [], np.zeros((depth, 3), np.int64)
    for d in range(depth):
        size = len(frontier.current_player)
        parts = []
        for lo in range(0, size, chunk):
            part = jax.tree_util.tree_map(lambda x: x[lo : lo + chunk], frontier)
            legal = np.asarray(part.legal_action_mask).reshape(-1)
            kids = jax.tree_util.tree_map(
                lambda x: np.asarray(x).reshape(-1, *x.shape[2:])[legal], expand(part)
            )
            parts.append(kids)
        kids = jax.tree_util.tree_map(lambda *xs: np.concatenate(xs), *parts)
        done = np.asarray(kids.terminated | kids.truncated)
        r = np.asarray(kids.rewards)[done]
        by_winner[d] = [(r[:, 0] > 0).sum(), (r[:, 1] > 0).sum(), (r[:, 0] == 0).sum()]
        finished.append(int(done.sum()))
        frontier = jax.tree_util.tree_map(lambda x: x[~done], kids)
        nodes.append(int((~done).sum()))
        if nodes[-1] == 0:
            nodes += [0] * (depth - d - 1)
            finished += [0] * (depth - d - 1)
            break
    return PerftResult(nodes, finished, by_winner)
