"""Classic opponents, pure policies ``policy(key, state) -> int32[]`` (``jax.vmap`` a batch):

    greedy          one ply: a win, else the best ``-env.heuristic(child)``
    minimax:D       full-width depth-D negamax, ``vmap`` over every action at every ply
    alphabeta:D     depth-D negamax with alpha-beta pruning in one ``lax.while_loop``

Scores (negamax, from the view of the player to move)::

    child ended the game   reward_of_mover * (win_score - ply)   (faster wins score higher)
    child at depth limit   +/- clip(env.heuristic(child), +-win_score/10)  (+ if the same
                           player moves again)

All three visit the root moves in a random order drawn from ``key`` and take the *first* move
reaching the best score, so with the same key ``alphabeta:1 == greedy`` and ``alphabeta:D ==
minimax:D`` move for move (tested).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxgames.core import Env, GameState, Policy

#: terminal scores are ``reward * (WIN_SCORE - ply)``; heuristics are clipped to WIN_SCORE / 10
WIN_SCORE = 1e6


def _leaf_value(env: Env, parent: GameState, child: GameState, ply: jax.Array, win_score: float):
    """(float32[] leaf score of ``child`` for the parent's mover, done, sign)."""
    done = child.terminated | child.truncated
    term = child.rewards[parent.current_player] * (win_score - ply.astype(jnp.float32))
    sign = jnp.where(child.current_player == parent.current_player, 1.0, -1.0)
    cap = win_score / 10.0
    h = jnp.clip(env.heuristic(child).astype(jnp.float32), -cap, cap)
    return jnp.where(done, term, sign * h), done, sign


def _visit_keys(key: jax.Array, n: int) -> jax.Array:
    """uint32[n]: the visiting order is increasing ``(keys[a], a)``, exactly
    ``jax.random.permutation(key, n)``'s (one stable sort by these bits for ``n <= 1625``;
    tested), but the searches pick moves without sorting."""
    _, sub = jax.random.split(key)
    return jax.random.bits(sub, (n,), jnp.uint32)


def _visit_order(key: jax.Array, n: int) -> jax.Array:
    """int32[n]: ``jax.random.permutation(key, n)`` by counting (O(n**2) compares, no sort)."""
    keys = _visit_keys(key, n)
    ids = jnp.arange(n, dtype=jnp.int32)
    before = (keys[None, :] < keys[:, None]) | (
        (keys[None, :] == keys[:, None]) & (ids[None, :] < ids[:, None])
    )
    rank = jnp.sum(before, axis=1, dtype=jnp.int32)  # rank[a]: actions visited before a
    return jnp.sum(jnp.where(rank[None, :] == ids[:, None], ids[None, :], 0), axis=1)


def _pick_first_best(key: jax.Array, values: jax.Array, mask: jax.Array) -> jax.Array:
    """int32[]: the first legal action in visiting order reaching the best of values
    float32[A] (the smallest ``(visit key, id)``)."""
    v = jnp.where(mask, values, -jnp.inf)
    tie = v == jnp.max(v)
    keys = _visit_keys(key, values.shape[-1])
    first = jnp.min(jnp.where(tie, keys, jnp.uint32(0xFFFFFFFF)))
    return jnp.argmax(tie & (keys == first)).astype(jnp.int32)


def _negamax_full_width(env: Env, state: GameState, depth: int, ply: int, win_score: float):
    """float32[A]: depth-``depth`` negamax value of every action (garbage for illegal ones)."""
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
    """Full-width depth-``depth`` negamax (A**depth leaves): the reference for alpha-beta."""
    _check_depth(depth)

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        values = _negamax_full_width(env, state, depth, 0, win_score)
        return _pick_first_best(key, values, state.legal_action_mask)

    return policy


#: legal moves the greedy player expands at once (a loop takes more while a game has more)
GREEDY_CHUNK = 16
#: ``greedy`` steps every action of games with at most this many, and lists the legal moves
#: of larger ones, most of whose actions are illegal (reversi 8x8: 65; animal shogi: 132)
GREEDY_FULL_WIDTH_MAX = 80


def _legal_leaf_values(env: Env, state: GameState, chunk: int, win_score: float) -> jax.Array:
    """float32[A]: the leaf value of every legal child (``-inf`` elsewhere), stepping only the
    legal children, ``chunk`` at a time."""
    num_actions = env.num_actions
    ids = jnp.arange(num_actions, dtype=jnp.int32)
    window = jnp.arange(chunk, dtype=jnp.int32)
    legal = state.legal_action_mask
    seen = jnp.cumsum(legal, dtype=jnp.int32)  # seen[a]: legal actions <= a
    one = jnp.int32(1)

    def body(c):
        j, values = c
        # slot w holds the (j * chunk + w)-th legal action (0-based), if there is one
        hit = legal[None, :] & (seen[None, :] == j * chunk + window[:, None] + 1)
        actions = jnp.sum(jnp.where(hit, ids[None, :], 0), axis=1)
        children = jax.vmap(env.step, in_axes=(None, 0))(state, actions)
        v = jax.vmap(lambda ch: _leaf_value(env, state, ch, one, win_score)[0])(children)
        found = jnp.max(jnp.where(hit, v[:, None], -jnp.inf), axis=0)
        return j + 1, jnp.where(jnp.any(hit, axis=0), found, values)

    init = (jnp.int32(0), jnp.full(num_actions, -jnp.inf, jnp.float32))
    # the first chunk outside the loop: under vmap a loop that is not entered costs nothing
    init = body(init)
    _, values = jax.lax.while_loop(lambda c: c[0] * chunk < seen[-1], body, init)
    return values


def greedy_policy(
    env: Env,
    win_score: float = WIN_SCORE,
    chunk: int = GREEDY_CHUNK,
    full_width: bool | None = None,
) -> Policy:
    """One ply: a winning move, else the best ``-env.heuristic(child)``, random among equals
    (``minimax:1``'s moves). ``full_width``: step every action at once, else the legal ones
    ``chunk`` at a time (``None``: by :data:`GREEDY_FULL_WIDTH_MAX`)."""
    if full_width is None:
        full_width = env.num_actions <= GREEDY_FULL_WIDTH_MAX
    chunk = max(1, min(int(chunk), env.num_actions))

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        if full_width:
            values = _negamax_full_width(env, state, 1, 0, win_score)
        else:
            values = _legal_leaf_values(env, state, chunk, win_score)
        return _pick_first_best(key, values, state.legal_action_mask)

    return policy


# ------------------------------------------------------------------ alpha-beta
#: leaves an alpha-beta iteration scores at once, by game: fewer iterations, more children
#: stepped in vain past a cut-off, so it grows as the game's step gets cheaper (docs/engines.md)
ALPHABETA_LEAVES = {"reversi": 8, "tic_tac_toe": 4}
ALPHABETA_DEFAULT_LEAVES = 2


def _pack_bits(mask: jax.Array) -> jax.Array:
    """bool[A] -> uint32[ceil(A / 32)]: bit ``b % 32`` of word ``b // 32`` is ``mask[b]``."""
    n = mask.shape[-1]
    words = -(-n // 32)
    bits = jnp.pad(mask, (0, 32 * words - n)).reshape(words, 32).astype(jnp.uint32)
    return jnp.sum(bits << jnp.arange(32, dtype=jnp.uint32), axis=-1, dtype=jnp.uint32)


def _pop_lowest(words: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(position int32[] of the lowest set bit, ``32 * W`` if none; the words without it;
    found bool[]), elementwise per word, no reduction over the actions."""
    pos = jnp.int32(32 * words.shape[-1])
    found = jnp.bool_(False)
    out = []
    for w in range(words.shape[-1]):
        x = words[w]
        take = ~found & (x != 0)
        low = jax.lax.population_count((x & (~x + jnp.uint32(1))) - jnp.uint32(1))
        pos = jnp.where(take, 32 * w + low.astype(jnp.int32), pos)
        out.append(jnp.where(take, x & (x - jnp.uint32(1)), x))
        found = found | take
    return pos, jnp.stack(out), found


def alphabeta_policy(
    env: Env, depth: int, win_score: float = WIN_SCORE, leaves: int | None = None
) -> Policy:
    """Depth-``depth`` fail-soft negamax with alpha-beta pruning, random root move order.

    An explicit stack of states in one ``lax.while_loop``; under ``vmap`` the loop runs as
    long as the slowest game, so each iteration does as much as one pass can: a node above
    the last ply expands its next move (a finished child scored, another pushed); a *leaf
    parent* (ply ``depth - 1``) scores ``leaves`` moves at once (:data:`ALPHABETA_LEAVES`)
    and is popped when settled. Leaves scored past a cut-off change no decision (a fail-soft
    bound over more children is still a bound). Moves left are bit sets, children are stepped
    with :meth:`Env.step_legal`, states chosen by masks; inner nodes go in action-id order.
    """
    _check_depth(depth)
    num_actions = env.num_actions
    if leaves is None:
        leaves = ALPHABETA_LEAVES.get(env.name, ALPHABETA_DEFAULT_LEAVES)
    n_leaves = max(1, min(int(leaves), num_actions))
    last = depth - 1  # ply of the leaf parents
    plies = jnp.arange(depth, dtype=jnp.int32)
    neg_inf = jnp.float32(-jnp.inf)
    leaf_ply = jnp.int32(depth)

    def next_leaves(words):
        """(positions int32[L], valid bool[L], words left, more bool[]) of a bit set."""
        pos, valid = [], []
        for _ in range(n_leaves):
            i, words, found = _pop_lowest(words)
            pos.append(jnp.minimum(i, num_actions - 1))
            valid.append(found)
        return jnp.stack(pos), jnp.stack(valid), words, jnp.any(words != 0)

    def first_legal(root_order, root_bits):
        """The first legal move in visiting order (the first action if none is legal)."""
        first, _, found = _pop_lowest(root_bits)
        return root_order[jnp.where(found, first, 0)]

    def score_leaves(parent, acts, valid):
        children = jax.vmap(env.step_legal, in_axes=(None, 0))(parent, acts)
        v = jax.vmap(lambda ch: _leaf_value(env, parent, ch, leaf_ply, win_score)[0])(children)
        return jnp.where(valid, v, neg_inf)

    def root_only(state, root_order, root_bits):
        """depth 1: the root is the leaf parent; ``leaves`` moves per iteration."""

        def body(c):
            pos, valid, words, more = next_leaves(c["moves"])
            acts = root_order[pos]
            v = score_leaves(state, acts, valid)
            j = jnp.argmax(v)  # the first best in visiting order
            return dict(
                moves=words,
                best=jnp.maximum(c["best"], v[j]),
                best_action=jnp.where(v[j] > c["best"], acts[j], c["best_action"]),
                done=~more,
            )

        carry = dict(
            moves=root_bits,
            best=neg_inf,
            best_action=first_legal(root_order, root_bits),
            done=jnp.bool_(False),
        )
        return jax.lax.while_loop(lambda c: ~c["done"], body, carry)["best_action"]

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        root_order = _visit_order(key, num_actions)
        # the root's moves by position in its visiting order
        root_bits = _pack_bits(state.legal_action_mask[root_order])
        if depth == 1:
            return root_only(state, root_order, root_bits)
        slots = jnp.arange(1, depth, dtype=jnp.int32)  # stack slot k holds the node at ply k+1

        def node_at(stack, p):
            def pick(root, column):
                for k in range(depth - 1):
                    root = jnp.where(p == k + 1, column[k], root)
                return root

            return jax.tree_util.tree_map(pick, state, stack)

        def at(x, p):  # x[p] for a per-ply array (rows for 2-d)
            hit = (plies == p).reshape((-1,) + (1,) * (x.ndim - 1))
            return jnp.sum(jnp.where(hit, x, jnp.zeros((), x.dtype)), axis=0, dtype=x.dtype)

        def body(c):
            p = c["p"]
            at_root, is_lp = p == 0, p == last
            node = node_at(c["stack"], p)
            best_p, alpha_p, beta_p = at(c["best"], p), at(c["alpha"], p), at(c["beta"], p)
            moves_p = at(c["moves"], p)
            # (a) the next move of a node below the last ply
            i, moves_left, found = _pop_lowest(moves_p)
            has_move = ~is_lp & found & (best_p < beta_p)
            i = jnp.minimum(i, num_actions - 1)
            a = jnp.where(at_root, root_order[i], i)
            child = env.step_legal(node, a)
            child_moves = _pack_bits(child.legal_action_mask)
            leaf, ended, sign = _leaf_value(env, node, child, p + 1, win_score)
            score = has_move & ended
            push = has_move & ~ended
            to_lp = push & (p + 1 == last)
            pop_node = ~is_lp & ~has_move
            lo, hi = alpha_p, beta_p
            c_alpha, c_beta = jnp.where(sign > 0, lo, -hi), jnp.where(sign > 0, hi, -lo)
            # (b) leaves of a leaf parent: the one on top (then the move of (a) was its first
            # leaf), or the child just pushed
            lp = jax.tree_util.tree_map(lambda n, ch: jnp.where(is_lp, n, ch), node, child)
            lp_on = is_lp | to_lp
            acts, valid, lp_moves, more = next_leaves(jnp.where(is_lp, moves_left, child_moves))
            vmax = jnp.maximum(
                jnp.max(score_leaves(lp, acts, valid & lp_on)),
                jnp.where(is_lp & found, leaf, neg_inf),
            )
            lp_best = jnp.maximum(jnp.where(is_lp, best_p, neg_inf), vmax)
            lp_alpha = jnp.maximum(jnp.where(is_lp, alpha_p, c_alpha), vmax)
            lp_beta = jnp.where(is_lp, beta_p, c_beta)
            lp_sign = jnp.where(is_lp, at(c["sign"], last), sign)
            lp_done = lp_on & ~(more & (lp_best < lp_beta))
            # (c) at most one value folds into a ply below the last: a scored child into p, or
            # a finished node (the node itself, or the settled leaf parent) into its parent
            pop = (pop_node & ~at_root) | lp_done
            f_on = score | pop
            f_ply = jnp.where(score, p, jnp.where(lp_done, last - 1, p - 1))
            f_v = jnp.where(
                score, leaf, jnp.where(lp_done, lp_sign * lp_best, at(c["sign"], p) * best_p)
            )
            f_act = jnp.where(score | to_lp, a, at(c["act"], f_ply))
            at_f = f_on & (plies == f_ply)
            improved = f_on & (f_ply == 0) & (f_v > c["best"][0])
            # (d) the node entered at ply p + 1 (a push that did not settle), or the leaf
            # parent that stays on top
            enter = push & ~(to_lp & lp_done)
            stay = is_lp & ~lp_done
            at_q = enter & (plies == p + 1)
            at_lp = (stay | (enter & to_lp)) & (plies == last)
            best = jnp.where(at_f, jnp.maximum(c["best"], f_v), c["best"])
            alpha = jnp.where(at_f, jnp.maximum(c["alpha"], f_v), c["alpha"])
            moves = jnp.where(
                at_lp[:, None],
                lp_moves,
                jnp.where(
                    at_q[:, None],
                    child_moves,
                    jnp.where((has_move & (plies == p))[:, None], moves_left, c["moves"]),
                ),
            )
            enter_slot = enter & (slots == p + 1)
            return dict(
                stack=jax.tree_util.tree_map(
                    lambda s, x: jnp.where(enter_slot.reshape((-1,) + (1,) * x.ndim), x, s),
                    c["stack"],
                    child,
                ),
                p=jnp.where(enter, p + 1, jnp.where(pop_node | (is_lp & lp_done), p - 1, p)),
                moves=moves,
                act=jnp.where(push & (plies == p), a, c["act"]),
                best=jnp.where(at_lp, lp_best, jnp.where(at_q, neg_inf, best)),
                alpha=jnp.where(at_lp, lp_alpha, jnp.where(at_q, c_alpha, alpha)),
                beta=jnp.where(at_q, c_beta, c["beta"]),
                sign=jnp.where(at_q, sign, c["sign"]),
                best_action=jnp.where(improved, f_act, c["best_action"]),
                done=pop_node & at_root,
            )

        carry = dict(
            stack=jax.tree_util.tree_map(
                lambda x: jnp.broadcast_to(x, (depth - 1,) + x.shape), state
            ),
            p=jnp.int32(0),  # ply of the node on top of the stack
            # moves not yet searched, per ply (a bit set: positions in the root's visiting
            # order at ply 0, action ids below)
            moves=jnp.zeros((depth,) + root_bits.shape, jnp.uint32).at[0].set(root_bits),
            act=jnp.zeros(depth, jnp.int32),  # move being searched below, per ply
            best=jnp.full(depth, neg_inf),
            alpha=jnp.full(depth, neg_inf),
            beta=jnp.full(depth, jnp.inf, jnp.float32),
            sign=jnp.ones(depth, jnp.float32),  # mover(p) == mover(p-1) ? +1 : -1
            best_action=first_legal(root_order, root_bits),
            done=jnp.bool_(False),
        )
        return jax.lax.while_loop(lambda c: ~c["done"], body, carry)["best_action"]

    return policy


def _check_depth(depth: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"search depth must be an integer >= 1, got {depth!r}")
