"""The batch of games an algorithm learns from: self-play games, then one block of games per
fixed *training partner* (greedy, alphabeta:D, a saved agent, ...).

    games = make_training_games(env, num_envs=128, partners={"greedy": 0.25, "alphabeta:2": 0.25})

The env axis is cut in static slices (self-play first), so each partner policy runs only on
its own games. In a partner game one row is one learner move plus the partner's replies:
``reward`` is the learner's over that window, ``sign`` is +1 (the learner moves next),
``done`` says the game ended in it and ``plies`` counts its plies (the row's discount is
``gamma ** plies``), so negamax GAE and n-step targets need no special case and discount per
ply as in self-play.
A new partner game gives the learner a random colour (the partner opens if needed).

Why partners: self-play between equals rarely exposes the systematic weaknesses a fixed
heuristic player punishes; a share of games against such players is the classic remedy (a
fixed "league"). They change the training data only, not the evaluation.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import jax
import jax.numpy as jnp

from jaxgames.agents.common import SelfPlayStep, selfplay_step
from jaxgames.agents.config import partner_sizes
from jaxgames.core import Policy, play_random_plies, random_policy


@dataclasses.dataclass(frozen=True, eq=False)
class RandomOpenings:
    """``env`` whose every new game starts after 0 .. ``max_plies`` uniformly random plies
    (none where they would end the game); hashed by identity. Random openings reach lopsided
    positions self-play between equals never does (KataGo varies its openings too, Wu 2019)."""

    env: Any
    max_plies: int

    def __getattr__(self, name: str) -> Any:  # the rest of the Env interface
        if name == "env":  # not set yet (copy, pickle): no endless lookup
            raise AttributeError(name)
        return getattr(self.env, name)

    def init(self, key: jax.Array) -> Any:
        k_init, k_count, k_play = jax.random.split(key, 3)
        fresh = self.env.init(k_init)
        count = jax.random.randint(k_count, (), 0, self.max_plies + 1)
        opened = play_random_plies(self.env, fresh, k_play, count)
        over = opened.terminated | opened.truncated
        return jax.tree_util.tree_map(lambda f, o: jnp.where(over, f, o), fresh, opened)


@dataclasses.dataclass(frozen=True, eq=False)
class PartnerGroup:
    """``size`` consecutive games against ``policy`` (named ``name``, an opponent spec)."""

    name: str
    size: int
    policy: Policy


def _play_partner(
    env: Any, partner: Policy, state: Any, learner: jax.Array, key: jax.Array
) -> tuple[Any, jax.Array]:
    """``partner`` moves until ``learner`` is to move or the game is over -> (state, float32[]
    the learner's rewards over those moves)."""

    def cond(c):
        s, _, _ = c
        return (s.current_player != learner) & ~(s.terminated | s.truncated)

    def body(c):
        s, total, k = c
        k, k_act = jax.random.split(k)
        s = env.step(s, partner(k_act, s))
        return s, total + s.rewards[learner], k

    state, total, _ = jax.lax.while_loop(cond, body, (state, jnp.float32(0.0), key))
    return state, total


def _first_position(env: Any, key: jax.Array) -> Any:
    """The game's own first position, without the random plies of :class:`RandomOpenings`."""
    return (env.env if isinstance(env, RandomOpenings) else env).init(key)


def _fresh_partner_game(env: Any, partner: Policy, key: jax.Array) -> Any:
    """A new game in which the learner plays a random colour (the partner opens if needed).

    A random opening can leave the partner a move that ends the game before the learner has
    moved (a win in one); such a game starts again from the game's first position, so the
    learner is never handed a finished game."""
    k_init, k_coin, k_move = jax.random.split(key, 3)
    learner = jax.random.bernoulli(k_coin).astype(jnp.int32)
    state, _ = _play_partner(env, partner, env.init(k_init), learner, k_move)
    again, _ = _play_partner(env, partner, _first_position(env, k_init), learner, k_move)
    over = state.terminated | state.truncated
    return jax.tree_util.tree_map(lambda a, s: jnp.where(over, a, s), again, state)


def partner_step(
    env: Any, partner: Policy, states: Any, actions: jax.Array, key: jax.Array
) -> SelfPlayStep:
    """One learner move in each of B games against ``partner``, the partner's replies, and an
    auto-reset -> :class:`SelfPlayStep` in the learner's frame (``sign`` +1).

    Replies and a new game's opening by the partner share ONE loop (an ended game is replaced
    by its fresh game inside it): under ``vmap`` a step then costs one partner move for the
    block, not a reply plus an opening. Same keys and moves as :func:`_fresh_partner_game`.
    """

    keys = jax.random.split(key, actions.shape[0])

    def full(state, action, k):
        k_move, k_reset = jax.random.split(k)
        # the fresh game exactly as _fresh_partner_game(env, partner, k_reset) builds it
        k_init, k_coin, k_open = jax.random.split(k_reset, 3)
        fresh = env.init(k_init)
        first = _first_position(env, k_init)
        fresh_learner = jax.random.bernoulli(k_coin).astype(jnp.int32)

        def finish(c, s):
            over = s.terminated | s.truncated
            ended = ~c["done"] & over
            # the fresh game ended in the partner's opening: once, from the first position
            again = c["done"] & over & ~c["again"]
            c = dict(c)
            c["done"] = c["done"] | ended
            c["again"] = c["again"] | again
            c["outcome"] = jnp.where(ended, s.rewards, c["outcome"])
            c["length"] = jnp.where(ended, s.step_count, c["length"])
            c["state"] = jax.tree_util.tree_map(
                lambda f, a, x: jnp.where(ended, f, jnp.where(again, a, x)), fresh, first, s
            )
            c["learner"] = jnp.where(ended, fresh_learner, c["learner"])
            c["key"] = jnp.where(ended | again, k_open, c["key"])
            return c

        def cond(c):
            s = c["state"]
            return (s.current_player != c["learner"]) & ~(s.terminated | s.truncated)

        def body(c):
            s = c["state"]
            k, k_act = jax.random.split(c["key"])
            s = env.step(s, partner(k_act, s))
            c = dict(c, key=k)
            # the learner's rewards and plies count while the learner's game lasts (not in
            # the opening)
            c["replies"] = jnp.where(
                c["done"], c["replies"], c["replies"] + s.rewards[c["learner"]]
            )
            c["plies"] = jnp.where(c["done"], c["plies"], c["plies"] + 1)
            return finish(c, s)

        learner = state.current_player
        moved = env.step(state, action)
        carry = dict(
            state=moved,
            learner=learner,
            key=k_move,
            replies=jnp.float32(0.0),
            plies=jnp.int32(1),
            done=jnp.bool_(False),
            again=jnp.bool_(False),
            outcome=jnp.zeros_like(moved.rewards, jnp.float32),
            length=jnp.int32(0),
        )
        out = jax.lax.while_loop(cond, body, finish(carry, moved))
        return (
            out["state"],
            moved.rewards[learner] + out["replies"],
            out["done"],
            out["outcome"],
            out["length"].astype(jnp.int32),
            out["plies"],
        )

    nxt, reward, done, outcome, length, plies = jax.vmap(full)(states, actions, keys)
    sign = jnp.ones_like(reward, jnp.float32)
    return SelfPlayStep(nxt, reward.astype(jnp.float32), done, sign, outcome, length, plies)


@dataclasses.dataclass(frozen=True, eq=False)
class TrainingGames:
    """``num_envs`` games: ``num_selfplay`` self-play games, then one block per partner."""

    env: Any
    num_envs: int
    partners: tuple[PartnerGroup, ...] = ()

    @property
    def num_selfplay(self) -> int:
        return self.num_envs - sum(p.size for p in self.partners)

    def _slices(self):
        start = self.num_selfplay
        for p in self.partners:
            yield p, slice(start, start + p.size)
            start += p.size

    def init(self, key: jax.Array) -> Any:
        """Fresh games, leading axis ``num_envs``; in partner games the learner is to move."""
        keys = jax.random.split(key, self.num_envs)
        states = jax.vmap(self.env.init)(keys)
        if not self.partners:
            return states
        parts = [_take(states, slice(0, self.num_selfplay))]
        for p, sl in self._slices():
            parts.append(
                jax.vmap(lambda k, p=p: _fresh_partner_game(self.env, p.policy, k))(keys[sl])
            )
        return _concat(parts)

    def step(self, states: Any, actions: jax.Array, key: jax.Array) -> SelfPlayStep:
        """One learner ply in every game (plus partner replies where there is a partner)."""
        if not self.partners:
            return selfplay_step(self.env, states, actions, key)
        k_self, *k_groups = jax.random.split(key, 1 + len(self.partners))
        outs = []
        if self.num_selfplay:
            sl = slice(0, self.num_selfplay)
            outs.append(selfplay_step(self.env, _take(states, sl), actions[sl], k_self))
        for (p, sl), k in zip(self._slices(), k_groups):
            outs.append(partner_step(self.env, p.policy, _take(states, sl), actions[sl], k))
        return SelfPlayStep(*(_concat(list(field)) for field in zip(*outs)))

    def episode_stats(
        self, done: jax.Array, first_reward: jax.Array, length: jax.Array, reward: jax.Array
    ) -> dict[str, jax.Array]:
        """float32[] metrics of a rollout's ``SelfPlayStep`` fields [T, num_envs]: episodes,
        episode_length, the self-play first-player win and draw rates, and the learner's
        ``win_vs_<p>`` / ``loss_vs_<p>`` rates against each partner (0 with no finished game)."""

        def rate(d, hit):
            return (d & hit).sum() / jnp.maximum(d.sum(), 1).astype(jnp.float32)

        sp = slice(0, self.num_selfplay)
        d_sp = done[:, sp]
        stats = {
            "episodes": done.sum().astype(jnp.float32),
            "episode_length": length.sum() / jnp.maximum(done.sum(), 1).astype(jnp.float32),
            "selfplay_first_win": rate(d_sp, first_reward[:, sp] > 0),
            "selfplay_draw": rate(d_sp, first_reward[:, sp] == 0),
        }
        for p, sl in self._slices():
            stats[f"win_vs_{p.name}"] = rate(done[:, sl], reward[:, sl] > 0)
            stats[f"loss_vs_{p.name}"] = rate(done[:, sl], reward[:, sl] < 0)
        return stats


def _take(tree: Any, sl: slice) -> Any:
    return jax.tree_util.tree_map(lambda x: x[sl], tree)


def _concat(parts: list[Any]) -> Any:
    return jax.tree_util.tree_map(lambda *xs: jnp.concatenate(xs, axis=0), *parts)


def make_training_games(
    env: Any,
    num_envs: int,
    partners: Mapping[str, float] | None = None,
    policies: Mapping[str, Policy] | None = None,
    max_opening_plies: int = 0,
) -> TrainingGames:
    """:class:`TrainingGames`: ``partners`` maps an opponent spec to its share of the games,
    ``policies`` the same specs to their policies (:func:`jaxgames.specs.make_partners`;
    ``None``: random stand-ins of the same structure, enough to restore or act).
    ``max_opening_plies``: every game opens with random plies (:class:`RandomOpenings`)."""
    sizes = partner_sizes(num_envs, partners or {})
    if policies is None:
        policies = {name: random_policy for name in sizes}
    missing = sorted(set(sizes) - set(policies))
    if missing:
        raise ValueError(f"no policy given for training partner(s) {missing}")
    groups = tuple(PartnerGroup(name, size, policies[name]) for name, size in sizes.items())
    return TrainingGames(
        RandomOpenings(env, max_opening_plies) if max_opening_plies else env, num_envs, groups
    )
