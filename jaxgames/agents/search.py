"""Tree search over the real game guided by a trained network: Gumbel MuZero (mctx;
Danihelka et al. 2022, "Policy improvement by planning with Gumbel").

    policy = SearchPolicy(env, jaxgames.load_policy("runs/r6-ppo"), num_simulations=32)

The network proposes moves (prior) and judges positions (value); the tree's model is the
game itself, values from the view of the player to move::

    edge  s --a--> s'   s' = env.step(s, a)
    reward              s'.rewards[mover of s]            (nonzero only on the final move)
    discount            0 if s' is over, -1 if the other player moves in s' (a reversi pass
                        is the other player's ply), +1 if the same player moves again
    prior, value of s'  the guide's masked logits and value at s' (value 0 if s' is over)

A finished game is absorbing, so simulations past its end back up the exact result.
``win_check`` adds one ply of exact lookahead at every expanded node: where the mover can win
at once, the value is +1 and the prior keeps only the winning moves. A network trained in
self-play can misjudge positions self-play never reaches and hide the opponent's winning
reply from the tree; with the check, a move allowing it backs up -1 on its first visit.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import mctx

from jaxgames.agents.common import NetworkPolicy, masked_logits
from jaxgames.core import Env
from jaxgames.validation import check_bool, check_float, check_int

Array = jax.Array


def guide_outputs(guide: NetworkPolicy, states: Any) -> tuple[Array, Array]:
    """(masked prior logits float32[B, A], value float32[B]) of a batch of states, one
    :meth:`NetworkPolicy.search_outputs` call each."""
    logits, value = jax.vmap(guide.search_outputs)(states)
    return masked_logits(logits, states.legal_action_mask), value.astype(jnp.float32)


def noisy_prior(
    key: Array, logits: Array, mask: Array, fraction: float, total_alpha: float
) -> Array:
    """float32[B, A]: log((1 - fraction) softmax(logits) + fraction eta), eta ~
    Dirichlet(total_alpha / n) on the n legal moves of each row (AlphaZero's root noise)."""
    legal = mask.sum(-1, keepdims=True).astype(jnp.float32)
    alpha = jnp.where(mask, total_alpha / jnp.maximum(legal, 1.0), 1.0)
    gamma = jnp.where(mask, jax.random.gamma(key, alpha), 0.0)
    eta = gamma / jnp.maximum(gamma.sum(-1, keepdims=True), 1e-30)
    mixed = (1.0 - fraction) * jax.nn.softmax(logits, axis=-1) + fraction * eta
    return masked_logits(jnp.log(jnp.maximum(mixed, 1e-30)), mask)


def immediate_wins(env: Env, states: Any) -> Array:
    """bool[B, A]: the legal moves that win at once (A ``env.step_legal`` calls per state,
    illegal children masked out)."""

    def one(state):
        actions = jnp.arange(env.num_actions, dtype=jnp.int32)
        children = jax.vmap(env.step_legal, in_axes=(None, 0))(state, actions)
        won = children.rewards[:, state.current_player] > 0
        return state.legal_action_mask & children.terminated & won

    return jax.vmap(one)(states)


def with_win_check(env: Env, states: Any, prior: Array, value: Array) -> tuple[Array, Array]:
    """(prior float32[B, A], value float32[B]) after ``win_check`` (module docstring)."""
    wins = immediate_wins(env, states)
    can_win = wins.any(-1)
    prior = jnp.where(can_win[:, None], masked_logits(jnp.zeros_like(prior), wins), prior)
    return prior, jnp.where(can_win, 1.0, value)


def make_recurrent_fn(env: Env, guide: NetworkPolicy, win_check: bool = False):
    """mctx's ``recurrent_fn(params (unused), key, action int32[B], states) ->
    (RecurrentFnOutput, states')`` of the module docstring's tree."""

    def recurrent_fn(params, key, action, states):
        del params, key
        children = jax.vmap(env.step)(states, action)
        mover = states.current_player
        reward = jnp.take_along_axis(children.rewards, mover[:, None], axis=1)[:, 0]
        done = children.terminated | children.truncated
        same_mover = children.current_player == mover
        discount = jnp.where(done, 0.0, jnp.where(same_mover, 1.0, -1.0)).astype(jnp.float32)
        prior, value = guide_outputs(guide, children)
        if win_check:  # a finished child has no legal move, so no win: its value stays 0
            prior, value = with_win_check(env, children, prior, value)
        out = mctx.RecurrentFnOutput(
            reward=reward.astype(jnp.float32),
            discount=discount,
            prior_logits=prior,
            value=jnp.where(done, 0.0, value),
        )
        return out, children

    return recurrent_fn


@dataclasses.dataclass(frozen=True, kw_only=True)
class SearchConfig:
    """The knobs of one Gumbel MuZero search (:func:`search_batch`).

    max_num_considered_actions: root moves kept by the Gumbel top-k (sequential halving)
    gumbel_scale:     0 plays the best move after sequential halving, 1 samples (training)
    value_scale:      c_scale of sigma(q) = (50 + max_b N(b)) * c_scale * q (mctx's default)
    rescale_values:   min-max rescale the completed Q-values to [0, 1] first (mctx's default)
    root_noise:       share eps of Dirichlet noise in the root prior (Silver et al. 2017)
    root_noise_alpha: its total concentration over the legal moves (KataGo, Wu 2019)
    win_check:        one ply of exact lookahead at every expanded node (module docstring)
    """

    num_simulations: int = 32
    max_num_considered_actions: int = 16
    gumbel_scale: float = 0.0
    value_scale: float = 0.1
    rescale_values: bool = True
    root_noise: float = 0.0
    root_noise_alpha: float = 10.83
    win_check: bool = False

    def __post_init__(self) -> None:
        check_int("num_simulations", self.num_simulations)
        check_int("max_num_considered_actions", self.max_num_considered_actions)
        check_float("gumbel_scale", self.gumbel_scale, 0.0, float("inf"))
        check_float("value_scale", self.value_scale, 0.0, float("inf"))
        check_bool("rescale_values", self.rescale_values)
        check_float("root_noise", self.root_noise, 0.0, 1.0)
        check_float("root_noise_alpha", self.root_noise_alpha, 0.0, float("inf"), low_open=True)
        check_bool("win_check", self.win_check)


def search_batch(
    env: Env, guide: NetworkPolicy, key: Array, states: Any, config: SearchConfig
) -> mctx.PolicyOutput:
    """Search from unfinished root states [B] -> :class:`mctx.PolicyOutput` (``action``
    int32[B], ``action_weights`` float32[B, A] the improved policy, ``search_tree``)."""
    prior, value = guide_outputs(guide, states)
    if config.win_check:
        prior, value = with_win_check(env, states, prior, value)
    if config.root_noise > 0:
        key, k_noise = jax.random.split(key)
        prior = noisy_prior(
            k_noise, prior, states.legal_action_mask, config.root_noise, config.root_noise_alpha
        )
    root = mctx.RootFnOutput(prior_logits=prior, value=value, embedding=states)
    return mctx.gumbel_muzero_policy(
        params=(),
        rng_key=key,
        root=root,
        recurrent_fn=make_recurrent_fn(env, guide, config.win_check),
        num_simulations=config.num_simulations,
        invalid_actions=~states.legal_action_mask,
        max_num_considered_actions=config.max_num_considered_actions,
        gumbel_scale=config.gumbel_scale,
        qtransform=functools.partial(
            mctx.qtransform_completed_by_mix_value,
            value_scale=config.value_scale,
            rescale_values=config.rescale_values,
        ),
    )


class SearchPolicy:
    """``policy(key, state) -> int32[]``: ``guide`` plus search, ``SearchPolicy(env, guide,
    config)`` or with the knobs of :class:`SearchConfig`. The interface of
    :class:`~jaxgames.agents.common.NetworkPolicy`; hashed by identity."""

    def __init__(
        self, env: Env, guide: NetworkPolicy, config: SearchConfig | None = None, **knobs: Any
    ):
        if config is not None and knobs:
            raise TypeError("give SearchPolicy a SearchConfig or its knobs, not both")
        self.env, self.guide = env, guide
        self.config = config if config is not None else SearchConfig(**knobs)
        # one compiled search per policy for all three entry points: called outside jit, the
        # search would otherwise run op by op, recompiling mctx's loop at every call; inside
        # an outer jit or vmap it is inlined and the unused outputs are dropped
        self._outputs = jax.jit(self._search_outputs)

    @property
    def greedy(self) -> bool:
        return self.config.gumbel_scale == 0

    def __call__(self, key: Array, state: Any) -> Array:
        return self._outputs(key, state)[0]

    def value(self, state: Any) -> Array:
        """float32[]: the root Q of the chosen move (the guide's value for a finished game)."""
        q = self._outputs(jax.random.PRNGKey(0), state)[1]
        return jnp.where(state.legal_action_mask.any(), q, self.guide.value(state))

    def probs(self, state: Any) -> Array:
        """float32[A]: the improved policy of the search (zero on illegal moves)."""
        return self._outputs(jax.random.PRNGKey(0), state)[2]

    def _search_outputs(self, key: Array, state: Any) -> tuple[Array, Array, Array]:
        """One state's search -> (action int32[], the chosen move's root Q float32[], probs
        float32[A])."""
        states = jax.tree_util.tree_map(lambda x: x[None], state)
        out = search_batch(self.env, self.guide, key, states, self.config)
        # a finished root has no legal move and gets an arbitrary action (stepping it is a no-op)
        action = out.action[0].astype(jnp.int32)
        q = out.search_tree.summary().qvalues[0, out.action[0]]
        probs = jnp.where(state.legal_action_mask, out.action_weights[0], 0.0)
        return action, q, probs


__all__ = [
    "SearchConfig",
    "SearchPolicy",
    "guide_outputs",
    "immediate_wins",
    "make_recurrent_fn",
    "noisy_prior",
    "search_batch",
    "with_win_check",
]
