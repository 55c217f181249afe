"""Pure Monte Carlo tree search with random rollouts (UCT), the reference opponent of game papers
(Kocsis & Szepesvari 2006; Browne et al. 2012), using nothing but the rules, so every game has
it: ``uct_policy(env, num_simulations=400)``.

Each simulation selects, from the root and while the node is live and fully expanded, the
child maximising UCB1 ``Q + c sqrt(ln N(node) / N(child))`` (``Q``: the mean result for the
player who chose the move, win 1, draw 1/2, loss 0; ``c = sqrt(2)``, Auer et al. 2002);
expands one random untried move; plays random moves to the end (a truncated game is a draw);
and backs the result up the path, each node from the view of the player who moved into it
(any turn order, passes included). The most visited root move is played.

The tree lives in fixed arrays of ``num_simulations + 1`` nodes (children, visits, results
and every node's state, so selection never replays moves). mctx is not used: its searches
take leaf values from a model (PUCT, Gumbel); UCB1 with random rollouts is this opponent's
definition.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from jaxgames.core import Env, GameState, Policy, random_action

#: default UCB1 exploration constant (results scaled to [0, 1])
EXPLORATION = math.sqrt(2.0)


class UCTOutput(NamedTuple):
    """Root statistics of one search: action int32[] (the most visited, random tie-break),
    visits int32[A] and values float32[A] (mean result for the mover, 0 where unvisited)."""

    action: jax.Array
    visits: jax.Array
    values: jax.Array


def _check(env: Env, num_simulations: int, exploration: float) -> None:
    if (
        isinstance(num_simulations, bool)
        or not isinstance(num_simulations, int)
        or (num_simulations < 1)
    ):
        raise ValueError(f"num_simulations must be an integer >= 1, got {num_simulations!r}")
    if not exploration >= 0:
        raise ValueError(f"exploration must be >= 0, got {exploration!r}")
    if env.num_players != 2:
        raise ValueError(f"UCT here is for two-player games, {env.name} has {env.num_players}")


def rollout(env: Env, key: jax.Array, state: GameState) -> jax.Array:
    """float32[2] final rewards by player id of random play from ``state`` to the end."""

    def cond(c):
        s, _, _ = c
        return ~(s.terminated | s.truncated)

    def body(c):
        s, k, _ = c
        k, sub = jax.random.split(k)
        s = env.step(s, random_action(sub, s.legal_action_mask))
        return s, k, s.rewards

    _, _, rewards = jax.lax.while_loop(cond, body, (state, key, state.rewards))
    return rewards.astype(jnp.float32)


def uct_search(
    env: Env, num_simulations: int, exploration: float = EXPLORATION
) -> Callable[[jax.Array, GameState], UCTOutput]:
    """``search(key, state) -> UCTOutput`` for one state (module docstring)."""
    _check(env, num_simulations, exploration)
    n_nodes = num_simulations + 1
    num_actions = env.num_actions
    c_explore = jnp.float32(exploration)

    def search(key: jax.Array, state: GameState) -> UCTOutput:
        nodes = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (n_nodes,) + x.shape), state)
        tree = dict(
            states=nodes,
            children=jnp.full((n_nodes, num_actions), -1, jnp.int32),
            parent=jnp.full(n_nodes, -1, jnp.int32),
            # player who chose the move into the node; its results are counted for that player
            chooser=jnp.zeros(n_nodes, jnp.int32),
            visits=jnp.zeros(n_nodes, jnp.float32),
            wins=jnp.zeros(n_nodes, jnp.float32),  # summed results in [0, 1] for `chooser`
        )

        def ucb_child(t, node):
            """The child of ``node`` maximising UCB1 (all legal moves have children)."""
            kids = t["children"][node]
            safe = jnp.maximum(kids, 0)
            n = t["visits"][safe]
            q = t["wins"][safe] / jnp.maximum(n, 1.0)
            explore = c_explore * jnp.sqrt(jnp.log(t["visits"][node]) / jnp.maximum(n, 1.0))
            score = jnp.where(kids >= 0, q + explore, -jnp.inf)
            return kids[jnp.argmax(score)]

        def simulate(i, carry):
            t, key = carry
            key, k_expand, k_roll = jax.random.split(key, 3)

            # 1. selection: descend while the node is live and fully expanded
            def live(node):
                s_over = t["states"].terminated[node] | t["states"].truncated[node]
                return ~s_over

            def untried(node):
                mask = t["states"].legal_action_mask[node]
                return mask & (t["children"][node] < 0)

            def select_cond(node):
                return live(node) & ~jnp.any(untried(node))

            leaf = jax.lax.while_loop(select_cond, lambda nd: ucb_child(t, nd), jnp.int32(0))

            # 2. expansion of one random untried move (unless the leaf is a finished game)
            expand = live(leaf)
            action = random_action(k_expand, untried(leaf))
            parent_state = jax.tree_util.tree_map(lambda x: x[leaf], t["states"])
            child_state = env.step(parent_state, action)
            new = jnp.int32(i + 1)
            node = jnp.where(expand, new, leaf)

            def put(x, y):
                return x.at[new].set(jnp.where(expand, y, x[new]))

            t = dict(
                t,
                states=jax.tree_util.tree_map(put, t["states"], child_state),
                children=t["children"]
                .at[leaf, action]
                .set(jnp.where(expand, new, t["children"][leaf, action])),
                parent=put(t["parent"], leaf),
                chooser=put(t["chooser"], parent_state.current_player),
            )

            # 3. rollout from the new node (a finished game returns its final rewards)
            start = jax.tree_util.tree_map(lambda x: x[node], t["states"])
            rewards = rollout(env, k_roll, start)
            result = (rewards + 1.0) / 2.0  # by player id, in [0, 1]

            # 4. backup along the parent pointers up to the root
            def back_body(c):
                visits, wins, nd = c
                visits = visits.at[nd].add(1.0)
                wins = wins.at[nd].add(result[t["chooser"][nd]])
                return visits, wins, t["parent"][nd]

            visits, wins, _ = jax.lax.while_loop(
                lambda c: c[2] >= 0, back_body, (t["visits"], t["wins"], node)
            )
            return dict(t, visits=visits, wins=wins), key

        k_tree, k_pick = jax.random.split(key)
        tree, _ = jax.lax.fori_loop(0, num_simulations, simulate, (tree, k_tree))

        kids = tree["children"][0]
        legal = state.legal_action_mask & (kids >= 0)
        visits = jnp.where(legal, tree["visits"][jnp.maximum(kids, 0)], 0.0)
        wins = jnp.where(legal, tree["wins"][jnp.maximum(kids, 0)], 0.0)
        values = wins / jnp.maximum(visits, 1.0)
        most = legal & (visits == jnp.max(jnp.where(legal, visits, -1.0)))
        action = random_action(k_pick, most)
        return UCTOutput(action=action, visits=visits.astype(jnp.int32), values=values)

    return search


def uct_policy(env: Env, num_simulations: int, exploration: float = EXPLORATION) -> Policy:
    """UCT as a policy ``policy(key, state) -> int32[]`` (a finished game: 0)."""
    search = uct_search(env, num_simulations, exploration)

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        return search(key, state).action

    return policy
