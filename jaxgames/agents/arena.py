"""Play two policies against each other for many games at once, on device.

    results = play_games(env, policy_a, policy_b, key, n_games=1000)   # a is player 0 (first)
    rates = outcome_rates(results, player=0)                         # a's win/draw/loss

A policy is ``policy(key, state) -> int32[] action`` for ONE state (e.g. a
:class:`~jaxgames.agents.common.Policy`, :func:`~jaxgames.agents.common.random_policy`); it is
vmapped here. All games advance together in one ``lax.while_loop`` until every game is over
(or ``max_plies``), so the whole match is a single jittable computation.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxgames.agents.common import PolicyFn


class GameResults(NamedTuple):
    """Outcome of ``n`` games.

    rewards:  float32[n, 2] final rewards by player id (+1 win, -1 loss, 0 draw)
    plies:    int32[n]      plies played
    finished: bool[n]       the game ended (False only if ``max_plies`` cut it off)
    """

    rewards: jax.Array
    plies: jax.Array
    finished: jax.Array


def play_games(env, policy_a: PolicyFn, policy_b: PolicyFn, key: jax.Array, n_games: int, max_plies: int = 2000) -> GameResults:
    """Play ``n_games`` games of ``env``: ``policy_a`` is player 0 (moves first), ``policy_b``
    player 1. Jittable (``n_games``/``max_plies`` static). Both policies get independent keys
    every ply. Returns :class:`GameResults`.
    """
    if int(n_games) < 1:
        raise ValueError(f"n_games must be >= 1, got {n_games}")
    k_init, k_play = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(k_init, n_games))
    rewards = jnp.zeros((n_games, env.num_players), jnp.float32)

    def done_of(s):
        return s.terminated | s.truncated

    def cond(carry):
        s, _, _, ply = carry
        return (~jnp.all(done_of(s))) & (ply < max_plies)

    def body(carry):
        s, total, k, ply = carry
        k, ka, kb = jax.random.split(k, 3)
        a = jax.vmap(policy_a)(jax.random.split(ka, n_games), s)
        b = jax.vmap(policy_b)(jax.random.split(kb, n_games), s)
        action = jnp.where(s.current_player == 0, a, b)
        s = jax.vmap(env.step)(s, action)  # finished games are no-ops with zero rewards
        return s, total + s.rewards, k, ply + 1

    states, rewards, _, _ = jax.lax.while_loop(cond, body, (states, rewards, k_play, jnp.int32(0)))
    return GameResults(rewards, states.step_count, done_of(states))


def outcome_rates(results: GameResults, player: int) -> dict[str, jax.Array]:
    """Fractions of games won / drawn / lost by ``player`` (0 or 1): dict of float32[].

    Unfinished games count as draws.
    """
    r = results.rewards[:, player]
    return {
        "win": jnp.mean(r > 0).astype(jnp.float32),
        "draw": jnp.mean(r == 0).astype(jnp.float32),
        "loss": jnp.mean(r < 0).astype(jnp.float32),
    }


def evaluate_vs(env, policy: PolicyFn, opponent: PolicyFn, key: jax.Array, n_games: int) -> dict[str, jax.Array]:
    """``policy`` against ``opponent``, ``n_games`` as each side.

    Returns float32[] rates keyed ``{win,draw,loss}_first`` (policy is player 0) and
    ``{win,draw,loss}_second`` (policy is player 1). Jittable.
    """
    k1, k2 = jax.random.split(key)
    first = outcome_rates(play_games(env, policy, opponent, k1, n_games), 0)
    second = outcome_rates(play_games(env, opponent, policy, k2, n_games), 1)
    out = {f"{k}_first": v for k, v in first.items()}
    out.update({f"{k}_second": v for k, v in second.items()})
    return out
