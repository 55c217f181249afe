"""Tabular Q-learning for tic-tac-toe against a random opponent (the Godot article's baseline),
vectorised over many games on device.

One table ``float32[3**9, 9]`` by base-3 board code and square holds values from **X's point
of view** (X maximises, O minimises). Every ply of every game, the opponent's too, updates::

    target = r_X + gamma * (max_a' Q[s', a'] if X is to move in s' else min_a' Q[s', a'])
    (target = r_X when s' ended the game; r_X = +1 X won, -1 O won, 0 otherwise)

The agent plays epsilon-greedy, alternating colours between games (unless ``agent_player``
pins one); ``num_envs`` games advance one ply per ``lax.scan`` step. ``n`` updates of the same
``(s, a)`` in one step are ``n`` sequential updates towards their mean target,
``Q += (1 - (1 - lr) ** n) * (mean_target - Q)`` (exact when the targets agree).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.baselines.value_iteration import NUM_CODES, board_code
from jaxgames.core import random_action
from jaxgames.evaluation.match import play_games
from jaxgames.games import make
from jaxgames.games import tic_tac_toe as ttt


@dataclasses.dataclass(frozen=True)
class TabularQConfig:
    """Hyper-parameters of :func:`make_train`: agent_player None alternates colours;
    update_opponent_moves also backs up the opponent's plies; eval_points: evenly spaced
    evaluations of the greedy table, ``eval_games`` games against random each."""

    total_games: int = 30_000
    num_envs: int = 64
    epsilon: float = 0.1
    lr: float = 0.3
    gamma: float = 0.9
    agent_player: int | None = None
    update_opponent_moves: bool = True
    eval_points: int = 0
    eval_games: int = 1000

    def __post_init__(self):
        if self.total_games < 1 or self.num_envs < 1:
            raise ValueError(
                f"total_games and num_envs must be >= 1, got {self.total_games}, {self.num_envs}"
            )
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        if not 0.0 < self.lr <= 1.0:
            raise ValueError(f"lr must be in (0, 1], got {self.lr}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma}")
        if self.eval_points < 0 or self.eval_games < 2:
            raise ValueError(
                f"need eval_points >= 0 and eval_games >= 2, "
                f"got {self.eval_points}, {self.eval_games}"
            )
        if self.agent_player not in (None, 0, 1):
            raise ValueError(f"agent_player must be None, 0 or 1, got {self.agent_player}")

    @property
    def num_steps(self) -> int:
        """Scan length in plies: ``total_games`` games of 7.5 plies on average."""
        return -(-self.total_games * 15 // (2 * self.num_envs))


class TrainOutput(NamedTuple):
    """q: float32[3**9, 9] (X's view). curve: int32[num_steps] per-step counts of finished
    games, agent wins, draws, losses, and agent-as-X games and wins. evals: [eval_points] arrays
    of ``games`` so far and the greedy table's ``wins``, ``draws``, ``losses``, ``x_wins``,
    ``o_wins`` against random (empty without ``eval_points``)."""

    q: jax.Array
    curve: dict
    evals: dict


def greedy_action(q: jax.Array, state: ttt.TicTacToeState, key: jax.Array) -> jax.Array:
    """int32[] best move of one state's mover under the X-view table, random among ties."""
    sign = jnp.where(state.current_player == 0, 1.0, -1.0)
    v = sign * q[board_code(state.board)]
    v = jnp.where(state.legal_action_mask, v, -jnp.inf)
    best = state.legal_action_mask & (v >= jnp.max(v) - 1e-7)
    return random_action(key, jnp.where(jnp.any(best), best, state.legal_action_mask))


def q_policy(q: jax.Array):
    """Greedy ``policy(key, state) -> int32[]`` of a trained table."""
    return lambda key, state: greedy_action(q, state, key)


def make_train(config: TabularQConfig):
    """Return ``train(key) -> TrainOutput`` (jittable; one ``lax.scan`` over plies)."""
    env = make("tic_tac_toe")
    cfg = config
    n = cfg.num_envs

    def train(key: jax.Array) -> TrainOutput:
        states = jax.vmap(env.init)(jax.random.split(key, n))
        if cfg.agent_player is None:
            agent = (jnp.arange(n) % 2).astype(jnp.int32)
        else:
            agent = jnp.full(n, cfg.agent_player, jnp.int32)
        q0 = jnp.zeros((NUM_CODES, 9), jnp.float32)
        games0 = jnp.int32(0)

        def step(carry, k):
            q, states, agent, games = carry
            k_eps, k_exp, k_greedy, k_opp, k_reset = jax.random.split(k, 5)
            keys = lambda kk: jax.random.split(kk, n)  # noqa: E731
            greedy = jax.vmap(lambda s, kk: greedy_action(q, s, kk))(states, keys(k_greedy))
            explore = jax.vmap(random_action)(keys(k_exp), states.legal_action_mask)
            eps = jax.random.uniform(k_eps, (n,)) < cfg.epsilon
            rand_opp = jax.vmap(random_action)(keys(k_opp), states.legal_action_mask)
            agent_moves = states.current_player == agent
            action = jnp.where(agent_moves, jnp.where(eps, explore, greedy), rand_opp)

            nxt = jax.vmap(env.step)(states, action)
            done = nxt.terminated | nxt.truncated
            sign_next = jnp.where(nxt.current_player == 0, 1.0, -1.0)
            q_next = jnp.where(
                nxt.legal_action_mask, sign_next[:, None] * q[board_code(nxt.board)], -jnp.inf
            )
            boot = sign_next * jnp.max(q_next, axis=-1)
            target = nxt.rewards[:, 0] + cfg.gamma * jnp.where(done, 0.0, boot)

            # batched update: n colliding updates = n sequential steps towards their mean target
            idx = board_code(states.board) * 9 + action
            use = (agent_moves | cfg.update_opponent_moves).astype(jnp.float32)
            flat = q.reshape(-1)
            count = jnp.zeros_like(flat).at[idx].add(use)
            tsum = jnp.zeros_like(flat).at[idx].add(use * target)
            mean_t = tsum / jnp.maximum(count, 1.0)
            rate = 1.0 - (1.0 - cfg.lr) ** count
            q = (flat + rate * (mean_t - flat)).reshape(q.shape)

            # outcomes of finished games, from the agent's side
            r_agent = nxt.rewards[jnp.arange(n), agent]
            finished = done
            stats = dict(
                games=jnp.sum(finished).astype(jnp.int32),
                wins=jnp.sum(finished & (r_agent > 0)).astype(jnp.int32),
                draws=jnp.sum(finished & (r_agent == 0)).astype(jnp.int32),
                losses=jnp.sum(finished & (r_agent < 0)).astype(jnp.int32),
                x_games=jnp.sum(finished & (agent == 0)).astype(jnp.int32),
                x_wins=jnp.sum(finished & (agent == 0) & (r_agent > 0)).astype(jnp.int32),
            )
            fresh = jax.vmap(env.init)(keys(k_reset))
            states = jax.tree_util.tree_map(
                lambda f, x: jnp.where(done.reshape((n,) + (1,) * (x.ndim - 1)), f, x), fresh, nxt
            )
            if cfg.agent_player is None:
                agent = jnp.where(done, 1 - agent, agent)
            return (q, states, agent, games + stats["games"]), stats

        carry = (q0, states, agent, games0)
        if cfg.eval_points == 0:
            (q, *_), curve = jax.lax.scan(step, carry, jax.random.split(key, cfg.num_steps))
            return TrainOutput(q, curve, {})

        chunk = -(-cfg.num_steps // cfg.eval_points)
        half = cfg.eval_games // 2
        a_player = jnp.concatenate([jnp.zeros(half, jnp.int32), jnp.ones(half, jnp.int32)])
        rand = lambda k, s: random_action(k, s.legal_action_mask)  # noqa: E731

        def segment(carry, k):
            k_train, k_eval = jax.random.split(k)
            carry, curve = jax.lax.scan(step, carry, jax.random.split(k_train, chunk))
            total, _ = play_games(q_policy(carry[0]), rand, env, a_player, k_eval)
            mine = total[jnp.arange(2 * half), a_player]
            ev = dict(
                games=carry[3],
                wins=jnp.sum(mine > 0),
                draws=jnp.sum(mine == 0),
                losses=jnp.sum(mine < 0),
                x_wins=jnp.sum((mine > 0) & (a_player == 0)),
                o_wins=jnp.sum((mine > 0) & (a_player == 1)),
            )
            return carry, (curve, ev)

        (q, *_), (curve, evals) = jax.lax.scan(
            segment, carry, jax.random.split(key, cfg.eval_points)
        )
        curve = jax.tree_util.tree_map(lambda x: x.reshape(-1), curve)
        return TrainOutput(q, curve, evals)

    return train


def learning_curve(curve: dict, window: int = 1000):
    """Per-step counts int[T] -> (games played at each window's end int[W], win, draw and loss
    rates float[W]) over consecutive windows of at least ``window`` finished games, each
    ending at the first step that reaches its edge (a step's games are not split, so where a
    step finishes more than ``window`` games its window holds them all; no partial window)."""
    games = np.cumsum(np.asarray(curve["games"]))
    out = {k: np.cumsum(np.asarray(curve[k])) for k in ("wins", "draws", "losses")}
    edges = np.arange(window, games[-1] + 1, window)
    pos = np.unique(np.searchsorted(games, edges))  # first step reaching each edge, once
    g = games[pos]
    rates = {}
    for k, c in out.items():
        cg = c[pos]
        prev_c = np.concatenate([[0], cg[:-1]])
        prev_g = np.concatenate([[0], g[:-1]])
        rates[k] = (cg - prev_c) / np.maximum(g - prev_g, 1)
    return g, rates["wins"], rates["draws"], rates["losses"]
