"""The batch of games an algorithm learns from: self-play games, plus optional groups of games
against fixed *training partners* (greedy, alphabeta:D, a saved agent, ...).

    games = make_training_games(env, num_envs=128, partners={"greedy": 0.25, "alphabeta:2": 0.25})
    states = games.init(key)                      # [128] games, the learner to move in each
    out = games.step(states, actions, key)        # SelfPlayStep, every row in its mover's frame

Layout of the env axis (static slices, so each partner policy runs only on its own games)::

    envs  0 .. 63    self-play   the network plays both sides; consecutive plies alternate movers
    envs 64 .. 95    vs greedy   the network plays one side (a fair coin per game), the partner
    envs 96 .. 127   vs ab:2     replies inside ``step``; the learner is to move in every state

In a partner game one row of the batch is one *learner* move plus the partner's replies, so
``reward`` is the learner's reward over that window, ``sign`` is +1 (the learner moves next)
and ``done`` says the game ended in it (by either move). Negamax GAE and n-step targets
therefore need no special case: they read ``sign`` as in self-play (where it is -1 after a
normal ply). When a game ends it is reset and, if the coin gives the partner the first move,
the partner opens before the learner sees the position.

Why partners: self-play between equals rarely exposes the systematic weaknesses a fixed
heuristic player punishes; a share of games against such players is the classic remedy (a
fixed "league"). The evaluation arena is separate: partners change the training data only.
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
    """``env`` whose every new game (``init``) starts after n uniformly random legal plies,
    n drawn uniformly from 0 .. ``max_plies`` per game (from the initial position where those
    plies would end the game); everything else is ``env``'s. Hashed by identity.

    Why: random openings often leave one side lost by force, in positions self-play between
    equals never reaches; games that start there teach the network to play them. KataGo
    varies its self-play openings for the same reason (Wu 2019). The random plies are part of
    the new game's start, never learned from."""

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
    """Let ``partner`` move until ``learner`` is to move or the game is over (one reply in
    alternating games). Returns (state, float32[] learner's rewards summed over those moves)."""

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


def _fresh_partner_game(env: Any, partner: Policy, key: jax.Array) -> Any:
    """A new game in which the learner plays a random colour (the partner opens if needed)."""
    k_init, k_coin, k_move = jax.random.split(key, 3)
    state = env.init(k_init)
    learner = jax.random.bernoulli(k_coin).astype(jnp.int32)
    state, _ = _play_partner(env, partner, state, learner, k_move)
    return state


def partner_step(
    env: Any, partner: Policy, states: Any, actions: jax.Array, key: jax.Array
) -> SelfPlayStep:
    """One learner move in each of a batch of games against ``partner`` (leading axis B),
    followed by the partner's replies, auto-reset (fresh game, random colours) when the game
    ended. Returns a :class:`SelfPlayStep` in the learner's frame (``sign`` = +1).

    The replies and, where a game ended, the new game's opening by the partner are played in
    ONE loop: a game that ends is replaced by its fresh game inside the loop, which goes on
    while the partner is to move. Under ``vmap`` the loop runs as long as its longest game, so
    a step costs one partner move for the block (two in the steps where some game ended on the
    partner's reply and the partner opens the next one) instead of a reply plus an opening for
    every game. Same keys, moves and results as a separate :func:`_fresh_partner_game` per game.
    """

    keys = jax.random.split(key, actions.shape[0])

    def full(state, action, k):
        k_move, k_reset = jax.random.split(k)
        # the fresh game exactly as _fresh_partner_game(env, partner, k_reset) builds it
        k_init, k_coin, k_open = jax.random.split(k_reset, 3)
        fresh = env.init(k_init)
        fresh_learner = jax.random.bernoulli(k_coin).astype(jnp.int32)

        def finish(c, s):
            """Record the end of the game ``s`` and switch to the fresh game where it ended."""
            ended = ~c["done"] & (s.terminated | s.truncated)
            c = dict(c)
            c["done"] = c["done"] | ended
            c["outcome"] = jnp.where(ended, s.rewards, c["outcome"])
            c["length"] = jnp.where(ended, s.step_count, c["length"])
            c["state"] = jax.tree_util.tree_map(lambda f, x: jnp.where(ended, f, x), fresh, s)
            c["learner"] = jnp.where(ended, fresh_learner, c["learner"])
            c["key"] = jnp.where(ended, k_open, c["key"])
            return c

        def cond(c):
            s = c["state"]
            return (s.current_player != c["learner"]) & ~(s.terminated | s.truncated)

        def body(c):
            s = c["state"]
            k, k_act = jax.random.split(c["key"])
            s = env.step(s, partner(k_act, s))
            c = dict(c, key=k)
            # the learner's rewards count while the learner's game lasts (not in the opening)
            c["replies"] = jnp.where(
                c["done"], c["replies"], c["replies"] + s.rewards[c["learner"]]
            )
            return finish(c, s)

        learner = state.current_player
        moved = env.step(state, action)
        carry = dict(
            state=moved,
            learner=learner,
            key=k_move,
            replies=jnp.float32(0.0),
            done=jnp.bool_(False),
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
        )

    nxt, reward, done, outcome, length = jax.vmap(full)(states, actions, keys)
    return SelfPlayStep(
        nxt, reward.astype(jnp.float32), done, jnp.ones_like(reward, jnp.float32), outcome, length
    )


@dataclasses.dataclass(frozen=True, eq=False)
class TrainingGames:
    """``num_envs`` games: ``num_selfplay`` self-play games first, then one block per partner.

    ``init(key) -> states[num_envs]``; ``step(states, actions int32[num_envs], key) ->
    SelfPlayStep``; ``episode_stats(...)`` turns a rollout into training metrics (with the
    learner's win/loss rates against each partner).
    """

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
        """Training metrics from a rollout's ``SelfPlayStep`` fields stacked over time
        (``[T, num_envs]``: ``done``, ``outcome[..., 0]``, ``length``, ``reward``) -> float32[]:

        episodes            games finished (all groups)
        episode_length      their mean length in plies
        selfplay_first_win  first player's win rate in the finished self-play games
        selfplay_draw       draw rate there
        win_vs_<p>, loss_vs_<p>  the learner's rates in the finished games against partner p
        (rates are 0 when no game of the group finished)
        """

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
    """:class:`TrainingGames` for ``env``: ``partners`` maps an opponent spec to its share of
    the ``num_envs`` games (the rest are self-play), ``policies`` maps the same specs to their
    policies (resolved by the caller, e.g. :func:`jaxgames.specs.make_partners`).

    ``policies=None`` puts the uniform random player in every partner slot: such games have
    the same structure (shapes, layout), which is all that restoring a checkpoint or acting
    needs; the run driver always passes the real partners. ``max_opening_plies`` > 0: every game
    (self-play and partner games alike) starts after 0 .. max_opening_plies random plies
    (:class:`RandomOpenings`)."""
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
