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
    <run dir>       a trained agent through ``jaxgames.agents.load_policy``
    mcts:N:<run dir> the trained agent guiding N simulations of Gumbel MuZero search per move
                    (:class:`jaxgames.agents.search.SearchPolicy`; AlphaZero-style play)

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

import functools
import os
from typing import Callable

import jax
import jax.numpy as jnp

from jaxgames.core import Env, GameState
from jaxgames.core import random_policy as core_random_policy

Policy = Callable[[jax.Array, GameState], jax.Array]

#: terminal scores are ``reward * (WIN_SCORE - ply)``; heuristics are clipped to WIN_SCORE / 10
WIN_SCORE = 1e6

VALID_SPECS = (
    "random",
    "greedy",
    "minimax:D",
    "alphabeta:D",
    "perfect",
    "<run directory>",
    "mcts:N:<run directory>",
)


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
    from jaxgames.baselines.value_iteration import perfect_policy as _perfect

    return _perfect()


# ------------------------------------------------------------------ spec parser
def _check_depth(depth: int) -> None:
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"search depth must be an integer >= 1, got {depth!r}")


_BUILTIN_CACHE: dict = {}


def _parse_builtin(spec: str) -> str | None:
    """The normalised spec of a built-in opponent (``"alphabeta:3"``), ``None`` if ``spec``
    names none; ``ValueError`` for a built-in name with a bad argument."""
    name, _, arg = spec.partition(":")
    if name not in ("random", "greedy", "perfect", "minimax", "alphabeta"):
        return None
    if name in ("minimax", "alphabeta"):
        try:
            depth = int(arg)
        except ValueError:
            raise ValueError(
                f"bad opponent spec {spec!r}: {name} needs an integer depth, e.g. '{name}:3'"
            ) from None
        _check_depth(depth)
        return f"{name}:{depth}"
    if arg:
        raise ValueError(
            f"bad opponent spec {spec!r}: {name} takes no argument; valid: {', '.join(VALID_SPECS)}"
        )
    return name


def _parse_search(spec: str) -> tuple[int, str] | None:
    """(simulations, guide run directory) of an ``mcts:N:<run dir>`` spec, ``None`` for any
    other spec; ``ValueError`` for a malformed one."""
    name, _, rest = spec.partition(":")
    if name != "mcts":
        return None
    sims, _, run = rest.partition(":")
    try:
        n = int(sims)
    except ValueError:
        n = 0
    if n < 1 or not run:
        raise ValueError(
            f"bad opponent spec {spec!r}: use 'mcts:N:<run directory>' with N >= 1 simulations, "
            "e.g. 'mcts:16:runs/r6-ppo'"
        )
    if _parse_builtin(run) is not None or _parse_search(run) is not None:
        raise ValueError(
            f"bad opponent spec {spec!r}: the search needs a trained agent's run directory to "
            f"guide it, not {run!r}"
        )
    return n, run


def _checked_spec(spec: str, env: Env) -> tuple[str, bool]:
    """(normalised spec, is it built in?) after validating ``spec`` for ``env`` (see
    :func:`check_opponent_spec`)."""
    spec = str(spec).strip()
    search = _parse_search(spec)
    if search is not None:
        n, run = search
        return f"mcts:{n}:{_checked_spec(run, env)[0]}", False
    builtin = _parse_builtin(spec)
    if builtin is not None:
        if builtin == "perfect" and env.name != "tic_tac_toe":
            raise ValueError(
                f"the 'perfect' opponent exists only for tic_tac_toe, not {env.name!r}"
            )
        return builtin, True
    if os.path.isdir(spec):
        try:
            from jaxgames.training.driver import read_run_config
        except ImportError as e:
            raise ValueError(
                f"opponent {spec!r} is a directory, but trained agents cannot be loaded: "
                f"jaxgames.agents.load_agent is not available ({e})"
            ) from e
        from jaxgames.games import make

        _, config = read_run_config(spec)  # RunNotFoundError / ValueError name the problem
        trained_on = make(config.game, **config.game_options)
        if (trained_on.name, trained_on.config) != (env.name, env.config):
            raise ValueError(f"run {spec!r} was trained on {trained_on!r}, not on {env!r}")
        return spec, False
    raise ValueError(f"unknown opponent spec {spec!r}; valid: {', '.join(VALID_SPECS)}")


def check_opponent_spec(spec: str, env: Env) -> str:
    """Validate ``spec`` for ``env`` without building the policy; returns the normalised spec.

    Cheap enough for config validation: a run directory's ``config.json`` is read and its game
    compared with ``env``, but no checkpoint is restored (:func:`make_opponent` does that and
    reports a missing or corrupt checkpoint). ``ValueError`` naming the problem otherwise.
    """
    return _checked_spec(spec, env)[0]


def make_opponent(spec: str, env: Env) -> Policy:
    """Build a policy from a spec string.

    ``"random"``, ``"greedy"``, ``"minimax:D"``, ``"alphabeta:D"`` (D an integer >= 1),
    ``"perfect"`` (tic-tac-toe), the path of a run directory (a trained agent, loaded with
    ``jaxgames.agents.load_policy``) or ``"mcts:N:<run directory>"`` (that agent guiding N
    simulations of Gumbel MuZero search per move). Raises ``ValueError`` for anything else,
    listing the valid specs (the checks of :func:`check_opponent_spec`).
    """
    spec, builtin = _checked_spec(spec, env)
    if not builtin:
        from jaxgames.agents import load_agent

        search = _parse_search(spec)
        if search is not None:
            from jaxgames.agents.search import SearchPolicy

            n, run = search
            return SearchPolicy(env, load_agent(run).policy(), num_simulations=n)
        return load_agent(spec).policy()
    # built-in opponents are cached per (spec, game, options): the same spec gives the same
    # function object, so jitted arenas and batches of it compile once
    key = (spec, env.name, tuple(sorted(env.config.items())))
    if key not in _BUILTIN_CACHE:
        name, _, depth = spec.partition(":")
        if name in ("minimax", "alphabeta"):
            _BUILTIN_CACHE[key] = (minimax_policy if name == "minimax" else alphabeta_policy)(
                env, int(depth)
            )
        else:
            _BUILTIN_CACHE[key] = {
                "random": random_policy,
                "greedy": greedy_policy,
                "perfect": perfect_policy,
            }[name](env)
    return _BUILTIN_CACHE[key]


@functools.lru_cache(maxsize=None)
def _jitted_batch(policy: Policy):
    return jax.jit(jax.vmap(policy))


def act_batch(policy: Policy, keys: jax.Array, states: GameState) -> jax.Array:
    """Jitted ``vmap`` of ``policy`` (cached per policy when it is hashable):
    keys (B, 2) / batched states -> int32[B] actions."""
    try:
        fn = _jitted_batch(policy)
    except TypeError:  # unhashable policy object
        fn = jax.jit(jax.vmap(policy))
    return fn(keys, states)
