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


#: legal moves the greedy player expands at once (a loop takes more while a game has more)
GREEDY_CHUNK = 16


def greedy_policy(env: Env, win_score: float = WIN_SCORE, chunk: int = GREEDY_CHUNK) -> Policy:
    """One ply: take a winning move, else the move maximising ``-env.heuristic(child)``;
    random among equals. (Tic-tac-toe: win if possible, else block, else random.)

    The moves of ``minimax:1`` for the same key, expanding only the legal children: the legal
    moves are listed in the random visiting order and stepped ``chunk`` at a time (a
    ``lax.while_loop`` that, under ``vmap``, runs ``ceil(legal moves / chunk)`` times for the
    game with most moves), keeping the first one that reaches the best value."""
    num_actions = env.num_actions
    k = max(1, min(int(chunk), num_actions))
    slots = -(-num_actions // k) * k  # room for every action, a whole number of chunks
    window = jnp.arange(k, dtype=jnp.int32)
    step_all = jax.vmap(env.step, in_axes=(None, 0))

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        order = jax.random.permutation(key, num_actions).astype(jnp.int32)
        legal = state.legal_action_mask[order]
        count = jnp.sum(legal, dtype=jnp.int32)
        # the legal actions in visiting order (padding: order[0], never counted)
        moves = order[jnp.nonzero(legal, size=slots, fill_value=0)[0]]

        def body(c):
            j, best, action = c
            a = jax.lax.dynamic_slice(moves, (j * k,), (k,))
            children = step_all(state, a)
            one = jnp.int32(1)
            values = jax.vmap(lambda ch: _leaf_value(env, state, ch, one, win_score)[0])(children)
            values = jnp.where(j * k + window < count, values, -jnp.inf)
            i = jnp.argmax(values)
            better = values[i] > best
            return j + 1, jnp.where(better, values[i], best), jnp.where(better, a[i], action)

        init = (jnp.int32(0), jnp.float32(-jnp.inf), moves[0])
        _, _, action = jax.lax.while_loop(lambda c: c[0] * k < count, body, init)
        return action

    return policy


# ------------------------------------------------------------------ alpha-beta
def alphabeta_policy(env: Env, depth: int, win_score: float = WIN_SCORE) -> Policy:
    """Depth-``depth`` negamax with alpha-beta pruning (fail-soft), random root move order.

    A depth-first search with an explicit stack of states inside one ``lax.while_loop``; each
    iteration plays one ``env.step`` (expand the next legal move of the node on top of the
    stack, score it as a leaf or push it) or pops a finished node. Under ``vmap`` the loop runs
    until the slowest game of the batch has finished its search, so the body is kept lean: the
    child is written into the stack slot above the top unconditionally (a free slot unless the
    child is pushed), and only a few per-ply scalars are selected, never whole states.
    Inner nodes visit moves in action-id order (no move ordering heuristic).
    """
    _check_depth(depth)
    num_actions = env.num_actions
    positions = jnp.arange(num_actions, dtype=jnp.int32)
    plies = jnp.arange(depth, dtype=jnp.int32)
    neg_inf = jnp.float32(-jnp.inf)

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        root_order = jax.random.permutation(key, num_actions).astype(jnp.int32)
        root_mask = state.legal_action_mask[root_order]  # the root's moves in visiting order
        # slot 0 holds the root, slot p the node at ply p; slot depth is scratch (the child of
        # a node at the last ply is written there and never read)
        stack = jax.tree_util.tree_map(
            lambda x: jnp.broadcast_to(x, (depth + 1,) + x.shape), state
        )
        carry = dict(
            stack=stack,
            p=jnp.int32(0),  # ply of the node on top of the stack
            next_i=jnp.zeros(depth, jnp.int32),  # next move position to try, per ply
            act=jnp.zeros(depth, jnp.int32),  # move being searched below, per ply
            best=jnp.full(depth, neg_inf),
            alpha=jnp.full(depth, neg_inf),
            beta=jnp.full(depth, jnp.inf, jnp.float32),
            sign=jnp.ones(depth, jnp.float32),  # mover(p) == mover(p-1) ? +1 : -1
            best_action=root_order[jnp.argmax(root_mask)],
            done=jnp.bool_(False),
        )

        def body(c):
            p = c["p"]
            at_root = p == 0
            node = jax.tree_util.tree_map(lambda x: x[p], c["stack"])
            mask = jnp.where(at_root, root_mask, node.legal_action_mask)
            cand = mask & (positions >= c["next_i"][p])
            has_move = jnp.any(cand) & (c["best"][p] < c["beta"][p])
            i = jnp.argmax(cand).astype(jnp.int32)
            a = jnp.where(at_root, root_order[i], i)
            child = env.step(node, a)
            leaf, ended, sign = _leaf_value(env, node, child, p + 1, win_score)
            push = has_move & ~ended & (p + 1 < depth)
            pop = ~has_move
            # a value is folded into node r: a scored leaf into p, a finished node into p - 1
            r = jnp.where(pop, jnp.maximum(p - 1, 0), p)
            v = jnp.where(pop, c["sign"][p] * c["best"][p], leaf)
            fold = (has_move & ~push) | (pop & ~at_root)
            improved = fold & (v > c["best"][r])
            at_r = fold & (plies == r)
            q = p + 1
            at_p, at_q = plies == p, push & (plies == q)
            lo, hi = c["alpha"][p], c["beta"][p]
            return dict(
                stack=jax.tree_util.tree_map(lambda s, x: s.at[q].set(x), c["stack"], child),
                p=jnp.where(push, q, r),
                next_i=jnp.where(has_move & at_p, i + 1, jnp.where(at_q, 0, c["next_i"])),
                act=jnp.where(push & at_p, a, c["act"]),
                best=jnp.where(at_q, neg_inf, jnp.where(at_r, jnp.maximum(c["best"], v), c["best"])),
                alpha=jnp.where(
                    at_q,
                    jnp.where(sign > 0, lo, -hi),
                    jnp.where(at_r, jnp.maximum(c["alpha"], v), c["alpha"]),
                ),
                beta=jnp.where(at_q, jnp.where(sign > 0, hi, -lo), c["beta"]),
                sign=jnp.where(at_q, sign, c["sign"]),
                best_action=jnp.where(
                    improved & (r == 0), jnp.where(pop, c["act"][0], a), c["best_action"]
                ),
                done=pop & at_root,
            )

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
