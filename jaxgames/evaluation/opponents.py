"""Classic opponents: batched, jittable policies ``policy(key, state) -> int32 action``.

Every policy takes one PRNG key and one (unbatched) game state and returns an ``int32[]``
action id that is legal whenever the game is not over. They are pure functions of
``(key, state)``, so ``jax.vmap(policy)(keys, states)`` plays a batch and ``jax.jit`` works.

    random          uniform over legal moves
    greedy          one ply: terminal rewards, else ``-env.heuristic(child)``
    minimax:D       full-width depth-D negamax: ``vmap`` over all actions at every ply
                    (A**D leaves; exact; fine for small A**D)
    alphabeta:D     depth-D negamax with alpha-beta pruning, an explicit stack and a
                    ``lax.while_loop`` (one ``env.step`` per iteration; vmappable)
    perfect         tic-tac-toe only: optimal play from value iteration

Strings naming these (``"alphabeta:3"``), trained agents and searches over them are parsed
and built by :mod:`jaxgames.specs`.

Search scoring (negamax, always from the point of view of the player to move at the node)::

    child ended the game   reward_of_mover * (win_score - ply)   (faster wins score higher)
    child at depth limit   +/- clip(env.heuristic(child), +-win_score/10)
                           (sign +1 if the same player is to move again, else -1)

Tie-breaking is uniformly random among the best moves: the root moves are visited in a random
order drawn from ``key`` and the *first* move reaching the best score wins. ``greedy``,
``minimax:D`` and ``alphabeta:D`` share this rule, so with the same key ``alphabeta:1 ==
greedy`` and ``alphabeta:D == minimax:D`` move for move (tested).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from jaxgames.baselines import value_iteration
from jaxgames.core import Env, GameState
from jaxgames.core import random_policy as core_random_policy

Policy = Callable[[jax.Array, GameState], jax.Array]

#: terminal scores are ``reward * (WIN_SCORE - ply)``; heuristics are clipped to WIN_SCORE / 10
WIN_SCORE = 1e6


# ------------------------------------------------------------------ basic policies
def random_policy(env: Env) -> Policy:
    """Uniform over legal moves: :func:`jaxgames.core.random_policy` (the same for every game)."""
    del env
    return core_random_policy


def _leaf_value(env: Env, parent: GameState, child: GameState, ply: jax.Array, win_score: float):
    """float32[]: score of ``child`` (reached from ``parent``) from the parent mover's view,
    as a leaf: terminal reward scaled above any heuristic, else the signed clipped heuristic."""
    done = child.terminated | child.truncated
    term = child.rewards[parent.current_player] * (win_score - ply.astype(jnp.float32))
    sign = jnp.where(child.current_player == parent.current_player, 1.0, -1.0)
    cap = win_score / 10.0
    h = jnp.clip(env.heuristic(child).astype(jnp.float32), -cap, cap)
    return jnp.where(done, term, sign * h), done, sign


def _pick_first_best(key: jax.Array, values: jax.Array, mask: jax.Array) -> jax.Array:
    """Random tie-breaking shared by all searches: visit actions in a random order and return
    the first one reaching the best value. values: float32[A], mask: bool[A] -> int32[]."""
    order = jax.random.permutation(key, values.shape[-1])
    v = jnp.where(mask, values, -jnp.inf)[order]
    return order[jnp.argmax(v)].astype(jnp.int32)


def _negamax_full_width(env: Env, state: GameState, depth: int, ply: int, win_score: float):
    """float32[A]: full-width negamax value of every action of ``state`` (mover's view),
    searching ``depth`` plies (``depth >= 1``). Illegal actions get garbage (mask them)."""
    actions = jnp.arange(env.num_actions, dtype=jnp.int32)
    children = jax.vmap(env.step, in_axes=(None, 0))(state, actions)

    def child_value(child):
        leaf, done, sign = _leaf_value(env, state, child, jnp.int32(ply + 1), win_score)
        if depth == 1:
            return leaf
        vals = _negamax_full_width(env, child, depth - 1, ply + 1, win_score)
        inner = jnp.max(jnp.where(child.legal_action_mask, vals, -jnp.inf))
        return jnp.where(done, leaf, sign * inner)

    return jax.vmap(child_value)(children)


def minimax_policy(env: Env, depth: int, win_score: float = WIN_SCORE) -> Policy:
    """Full-width depth-``depth`` negamax (every action expanded at every ply with ``vmap``;
    ``num_actions ** depth`` leaves). Exact reference for :func:`alphabeta_policy`."""
    _check_depth(depth)

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        values = _negamax_full_width(env, state, depth, 0, win_score)
        return _pick_first_best(key, values, state.legal_action_mask)

    return policy


def greedy_policy(env: Env, win_score: float = WIN_SCORE) -> Policy:
    """One ply: take a winning move, else the move maximising ``-env.heuristic(child)``;
    random among equals. (Tic-tac-toe: win if possible, else block, else random.)"""
    return minimax_policy(env, 1, win_score)


# ------------------------------------------------------------------ alpha-beta
def alphabeta_policy(env: Env, depth: int, win_score: float = WIN_SCORE) -> Policy:
    """Depth-``depth`` negamax with alpha-beta pruning (fail-soft), random root move order.

    A depth-first search with an explicit stack of ``depth`` states inside one
    ``lax.while_loop``; each iteration plays one ``env.step`` (expand the next legal move of
    the node on top of the stack, score it as a leaf or push it) or pops a finished node.
    Under ``vmap`` the loop runs until the slowest game of the batch has finished its search.
    Inner nodes visit moves in action-id order (no move ordering heuristic).
    """
    _check_depth(depth)
    num_actions = env.num_actions
    positions = jnp.arange(num_actions, dtype=jnp.int32)
    neg_inf = jnp.float32(-jnp.inf)

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        root_order = jax.random.permutation(key, num_actions).astype(jnp.int32)
        stack = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (depth,) + x.shape), state)
        first = root_order[jnp.argmax(state.legal_action_mask[root_order])]
        carry = dict(
            stack=stack,
            p=jnp.int32(0),  # ply of the node on top of the stack
            next_i=jnp.zeros(depth, jnp.int32),  # next move position to try, per ply
            act=jnp.zeros(depth, jnp.int32),  # move being searched below, per ply
            best=jnp.full(depth, neg_inf),
            alpha=jnp.full(depth, neg_inf),
            beta=jnp.full(depth, jnp.inf, jnp.float32),
            sign=jnp.ones(depth, jnp.float32),  # mover(p) == mover(p-1) ? +1 : -1
            best_action=first.astype(jnp.int32),
            done=jnp.bool_(False),
        )

        def update(c, q, v, a):
            """Fold value ``v`` of move ``a`` into node ``q``."""
            improved = v > c["best"][q]
            c["best_action"] = jnp.where((q == 0) & improved, a, c["best_action"])
            c["best"] = c["best"].at[q].max(v)
            c["alpha"] = c["alpha"].at[q].max(v)
            return c

        def body(c):
            p = c["p"]
            node = jax.tree_util.tree_map(lambda x: x[p], c["stack"])
            order = jnp.where(p == 0, root_order, positions)
            cand = node.legal_action_mask[order] & (positions >= c["next_i"][p])
            has_move = jnp.any(cand) & (c["best"][p] < c["beta"][p])
            i = jnp.argmax(cand).astype(jnp.int32)
            a = order[i]
            child = env.step(node, a)
            leaf, done, sign = _leaf_value(env, node, child, p + 1, win_score)
            is_leaf = done | (p + 1 >= depth)

            # (1) score a leaf move
            c1 = update(dict(c), p, leaf, a)
            c1["next_i"] = c["next_i"].at[p].set(i + 1)
            # (2) push the child
            q = jnp.minimum(p + 1, depth - 1)
            c2 = dict(c)
            c2["stack"] = jax.tree_util.tree_map(lambda s, x: s.at[q].set(x), c["stack"], child)
            c2["next_i"] = c["next_i"].at[p].set(i + 1).at[q].set(0)
            c2["act"] = c["act"].at[p].set(a)
            c2["best"] = c["best"].at[q].set(neg_inf)
            lo, hi = c["alpha"][p], c["beta"][p]
            c2["alpha"] = c["alpha"].at[q].set(jnp.where(sign > 0, lo, -hi))
            c2["beta"] = c["beta"].at[q].set(jnp.where(sign > 0, hi, -lo))
            c2["sign"] = c["sign"].at[q].set(sign)
            c2["p"] = q
            # (3) node finished: pop and fold its value into the parent
            r = jnp.maximum(p - 1, 0)
            c3 = update(dict(c), r, c["sign"][p] * c["best"][p], c["act"][r])
            c3["p"] = r
            c3["done"] = p == 0

            def choose(x1, x2, x3):
                return jnp.where(has_move, jnp.where(is_leaf, x1, x2), x3)

            return jax.tree_util.tree_map(choose, c1, c2, c3)

        out = jax.lax.while_loop(lambda c: ~c["done"], body, carry)
        return out["best_action"]

    return policy


# ------------------------------------------------------------------ perfect (tic-tac-toe)
def perfect_policy(env: Env) -> Policy:
    """Tic-tac-toe only: optimal play from :mod:`jaxgames.baselines.value_iteration`,
    uniformly random among the optimal moves."""
    if env.name != "tic_tac_toe":
        raise ValueError(f"the 'perfect' opponent exists only for tic_tac_toe, not {env.name!r}")
    return value_iteration.perfect_policy()


def _check_depth(depth: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"search depth must be an integer >= 1, got {depth!r}")
