"""The lean searches and partner games play exactly as the implementations they replaced.

``_old_*`` below are verbatim copies of the former ``evaluation/opponents.py`` searches
(full-width ``minimax``/``greedy`` stepping every action, alpha-beta building three full
candidate carries per iteration) and of the former ``agents/games_batch.partner_step`` (a fresh
game and the partner's opening computed for every game every step). The new code must pick the
same action for the same key on many random positions of every game, and the partner games
must give bit-identical states, rewards and outcomes: together they make a training chunk with
the preset's partners bit-identical to the former code's.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.agents import games_batch
from jaxgames.agents.common import SelfPlayStep
from jaxgames.agents.games_batch import _fresh_partner_game, _play_partner, make_training_games
from jaxgames.agents.presets import CLASSIC_PARTNERS
from jaxgames.core import random_action
from jaxgames.evaluation.opponents import (
    WIN_SCORE,
    _leaf_value,
    _visit_order,
    alphabeta_policy,
    greedy_policy,
    minimax_policy,
)


# ------------------------------------------------------------------ the former implementations
def _old_negamax_full_width(env, state, depth, ply, win_score):
    actions = jnp.arange(env.num_actions, dtype=jnp.int32)
    children = jax.vmap(env.step, in_axes=(None, 0))(state, actions)

    def child_value(child):
        leaf, done, sign = _leaf_value(env, state, child, jnp.int32(ply + 1), win_score)
        if depth == 1:
            return leaf
        vals = _old_negamax_full_width(env, child, depth - 1, ply + 1, win_score)
        inner = jnp.max(jnp.where(child.legal_action_mask, vals, -jnp.inf))
        return jnp.where(done, leaf, sign * inner)

    return jax.vmap(child_value)(children)


def _old_pick_first_best(key, values, mask):
    order = jax.random.permutation(key, values.shape[-1])
    v = jnp.where(mask, values, -jnp.inf)[order]
    return order[jnp.argmax(v)].astype(jnp.int32)


def _old_minimax_policy(env, depth, win_score=WIN_SCORE):
    def policy(key, state):
        values = _old_negamax_full_width(env, state, depth, 0, win_score)
        return _old_pick_first_best(key, values, state.legal_action_mask)

    return policy


def _old_greedy_policy(env, win_score=WIN_SCORE):
    return _old_minimax_policy(env, 1, win_score)


def _old_alphabeta_policy(env, depth, win_score=WIN_SCORE):
    num_actions = env.num_actions
    positions = jnp.arange(num_actions, dtype=jnp.int32)
    neg_inf = jnp.float32(-jnp.inf)

    def policy(key, state):
        root_order = jax.random.permutation(key, num_actions).astype(jnp.int32)
        stack = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (depth,) + x.shape), state)
        first = root_order[jnp.argmax(state.legal_action_mask[root_order])]
        carry = dict(
            stack=stack,
            p=jnp.int32(0),
            next_i=jnp.zeros(depth, jnp.int32),
            act=jnp.zeros(depth, jnp.int32),
            best=jnp.full(depth, neg_inf),
            alpha=jnp.full(depth, neg_inf),
            beta=jnp.full(depth, jnp.inf, jnp.float32),
            sign=jnp.ones(depth, jnp.float32),
            best_action=first.astype(jnp.int32),
            done=jnp.bool_(False),
        )

        def update(c, q, v, a):
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
            c1 = update(dict(c), p, leaf, a)
            c1["next_i"] = c["next_i"].at[p].set(i + 1)
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


def _old_partner_step(env, partner, states, actions, key):
    keys = jax.random.split(key, actions.shape[0])

    def full(state, action, k):
        k_move, k_reset = jax.random.split(k)
        learner = state.current_player
        moved = env.step(state, action)
        own = moved.rewards[learner]
        after, replies = _play_partner(env, partner, moved, learner, k_move)
        done = after.terminated | after.truncated
        fresh = _fresh_partner_game(env, partner, k_reset)
        nxt = jax.tree_util.tree_map(lambda f, x: jnp.where(done, f, x), fresh, after)
        outcome = jnp.where(done, after.rewards, 0.0).astype(jnp.float32)
        return (
            nxt,
            own + replies,
            done,
            outcome,
            jnp.where(done, after.step_count, 0).astype(jnp.int32),
            after.step_count - state.step_count,  # the learner's move and the replies
        )

    nxt, reward, done, outcome, length, plies = jax.vmap(full)(states, actions, keys)
    sign = jnp.ones_like(reward, jnp.float32)
    return SelfPlayStep(nxt, reward.astype(jnp.float32), done, sign, outcome, length, plies)


# ------------------------------------------------------------------ positions
GAMES = {"tic_tac_toe": ({}, 9), "reversi": ({"size": 8}, 60), "animal_shogi": ({}, 40)}


def _env(name):
    options = {"reversi6": {"size": 6}}.get(name, GAMES.get(name, ({}, 0))[0])
    return jaxgames.make(name.rstrip("0123456789"), **options)


def random_positions(env, key, n, max_plies):
    """n live states after a uniformly random number (0..max_plies) of random plies (a game that
    ended is replaced by its last live position)."""
    k_len, k_play = jax.random.split(key)
    lengths = jax.random.randint(k_len, (n,), 0, max_plies + 1)

    def one(k, length):
        def body(t, s):
            nxt = env.step(s, random_action(jax.random.fold_in(k, t), s.legal_action_mask))
            keep = (t < length) & ~(nxt.terminated | nxt.truncated)
            return jax.tree_util.tree_map(lambda x, y: jnp.where(keep, x, y), nxt, s)

        return jax.lax.fori_loop(0, max_plies, body, env.init(k))

    return jax.jit(jax.vmap(one))(jax.random.split(k_play, n), lengths)


def _act(policies, keys, states):
    """The actions of every policy (one compiled function for all of them) -> list of int[N]."""
    fn = jax.jit(lambda k, s: [jax.vmap(p)(k, s) for p in policies])
    return [np.asarray(a) for a in fn(keys, states)]


@pytest.fixture(scope="module", params=sorted(GAMES))
def game(request):
    env = _env(request.param)
    states = random_positions(env, jax.random.PRNGKey(21), 96, GAMES[request.param][1])
    assert not np.asarray(states.terminated | states.truncated).any()
    # a finished game too (no legal move): every search returns its first visited action
    done = jax.tree_util.tree_map(lambda x: x[:1], states).replace(
        terminated=jnp.ones(1, bool),
        legal_action_mask=jnp.zeros_like(states.legal_action_mask[:1]),
    )
    states = jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a, b]), states, done)
    return request.param, env, states


def _keys(seed, n):
    return jax.random.split(jax.random.PRNGKey(seed), n)


@pytest.mark.parametrize("n", [9, 65, 132, 257])
def test_visiting_order_is_jax_random_permutation(n):
    keys = _keys(n, 300)
    np.testing.assert_array_equal(
        jax.vmap(lambda k: _visit_order(k, n))(keys),
        jax.vmap(lambda k: jax.random.permutation(k, n))(keys),
    )


def test_greedy_plays_as_before(game):
    name, env, states = game
    n = states.current_player.shape[0]
    mask = np.asarray(states.legal_action_mask)
    tiled = jax.tree_util.tree_map(lambda x: jnp.concatenate([x, x, x]), states)
    keys = _keys(100, 3 * n)  # three keys per position
    old, *new = _act(
        [
            _old_greedy_policy(env),
            greedy_policy(env),
            greedy_policy(env, full_width=True),
            greedy_policy(env, full_width=False),
            greedy_policy(env, chunk=3, full_width=False),  # several loop iterations
        ],
        keys,
        tiled,
    )
    for a in new:
        np.testing.assert_array_equal(a, old, name)
    live = np.tile(mask.any(-1), 3)
    assert np.tile(mask, (3, 1))[np.arange(3 * n), old][live].all()
    assert (old[:n] != old[n : 2 * n]).any()  # the key breaks ties


# depth 2 is alpha-beta against full-width minimax in test_opponents.py
@pytest.mark.parametrize("depth, leaves", [(1, None), (3, None), (3, 3)])
def test_alphabeta_plays_as_before(game, depth, leaves):
    name, env, states = game
    if depth == 3 and name != "tic_tac_toe":
        states = jax.tree_util.tree_map(lambda x: x[-40:], states)
    n = states.current_player.shape[0]
    new, old = _act(
        [alphabeta_policy(env, depth, leaves=leaves), _old_alphabeta_policy(env, depth)],
        _keys(200 + depth, n),
        states,
    )
    np.testing.assert_array_equal(new, old, name)
    mask = np.asarray(states.legal_action_mask)
    live = mask.any(-1)
    assert mask[np.arange(n), new][live].all()


def test_minimax_plays_as_before(game):
    name, env, states = game
    if name != "tic_tac_toe":
        states = jax.tree_util.tree_map(lambda x: x[-12:], states)
    n = states.current_player.shape[0]
    new, old = _act([minimax_policy(env, 2), _old_minimax_policy(env, 2)], _keys(300, n), states)
    np.testing.assert_array_equal(new, old)


# ------------------------------------------------------------------ partner games
PRESET = CLASSIC_PARTNERS  # the reversi and animal-shogi PPO and DQN presets' partners


def _policies(env):
    greedy, ab2 = greedy_policy(env), alphabeta_policy(env, 2)
    return {"random": jaxgames.core.random_policy, "greedy": greedy, "alphabeta:2": ab2}


def _assert_trees_equal(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _rollout(env, policies, key, plies):
    games = make_training_games(env, 64, PRESET, policies)
    states = games.init(key)

    def ply(s, k):
        k_act, k_step = jax.random.split(k)
        out = games.step(s, random_action(k_act, s.legal_action_mask), k_step)
        return out.state, out

    return jax.jit(lambda s, ks: jax.lax.scan(ply, s, ks))(states, jax.random.split(key, plies))


def test_partner_games_play_as_before(monkeypatch):
    """Partner games (replies and new games' openings in one loop) give bit-identical states,
    rewards and outcomes to the former step (same partners) over a long random rollout of
    tic-tac-toe, where games end (and restart, half with the partner opening) all the time."""
    env = _env("tic_tac_toe")
    key = jax.random.PRNGKey(5)
    new = _rollout(env, _policies(env), key, 100)
    monkeypatch.setattr(games_batch, "partner_step", _old_partner_step)
    old = _rollout(env, _policies(env), key, 100)
    done = np.asarray(old[1].done)[:, 24:]  # the 40 partner games (24 self-play ones first)
    assert done.sum() > 500
    _assert_trees_equal(new, old)
