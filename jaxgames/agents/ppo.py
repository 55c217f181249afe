"""Masked self-play PPO (Schulman et al. 2017) on device, purejaxrl style.

One network plays both sides from the mover's point of view. Each update samples
``num_steps`` plies in ``num_envs`` games from the legal-move-masked policy (partners reply
inside the step, :mod:`~jaxgames.agents.games_batch`), builds negamax GAE targets
(:func:`~jaxgames.agents.common.negamax_gae`) and takes ``update_epochs x num_minibatches``
clipped-PPO steps, reusing each transition's stored legal mask for the ratio and the entropy.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, NamedTuple

import chex
import jax
import jax.numpy as jnp

from jaxgames.agents import presets
from jaxgames.agents.algorithm import Algorithm, check_standalone
from jaxgames.agents.common import (
    Agent,
    action_log_prob,
    batch_observation,
    masked_entropy,
    sample_masked,
)
from jaxgames.agents.games_batch import TrainingGames
from jaxgames.agents.rollout_learning import RolloutConfig, RolloutState, make_setup, play_plies
from jaxgames.validation import check_float


@dataclasses.dataclass(frozen=True)
class PPOConfig(RolloutConfig):
    """PPO fields besides :class:`~jaxgames.agents.rollout_learning.RolloutConfig`'s: clip_eps
    (ratio and value clipping) and ent_coef (entropy bonus weight)."""

    clip_eps: float = 0.2
    ent_coef: float = 0.01

    def validate(self) -> None:
        super().validate()
        check_float("clip_eps", self.clip_eps, 0.0, 1.0, low_open=True)
        check_float("ent_coef", self.ent_coef, 0.0, float("inf"))


Config = PPOConfig
#: the PPO preset of a game (:func:`jaxgames.agents.presets.default_config`)
default_config = functools.partial(presets.default_config, "ppo")


class Transition(NamedTuple):
    """One ply of the rollout (leaves [num_steps, num_envs, ...] after the scan)."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves when acting
    action: jax.Array  # int32
    log_prob: jax.Array  # float32 log pi_old(action)
    value: jax.Array  # float32 V_old(obs), mover's view
    reward: jax.Array  # float32 rewards[mover] of this step
    done: jax.Array  # bool   this step ended the game
    sign: jax.Array  # float32 +1 if the next state's mover is this mover, else -1
    plies: jax.Array  # int32 plies of this step (a partner's replies too): discount gamma**plies


#: the train state (params, opt_state, env_state, key, update), shared with Gumbel AlphaZero
PPOState = RolloutState


def ppo_loss(
    agent: Agent,
    params: Any,
    batch: Transition,
    advantages: jax.Array,
    targets: jax.Array,
    config: PPOConfig,
):
    """Clipped PPO loss on a flat batch -> (float32[], aux): the stored masks give the new
    log-probabilities and entropy (the ratio compares the same masked distributions);
    advantages are normalised per batch."""
    logits, value = agent.apply(params, batch.obs)
    chex.assert_equal_shape([logits, batch.mask])
    chex.assert_equal_shape([value, batch.value, advantages, targets, batch.log_prob])
    log_prob = action_log_prob(logits, batch.mask, batch.action)
    log_ratio = log_prob - batch.log_prob
    ratio = jnp.exp(log_ratio)
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    pg_loss = -jnp.minimum(
        ratio * adv, jnp.clip(ratio, 1 - config.clip_eps, 1 + config.clip_eps) * adv
    ).mean()
    v_clipped = batch.value + jnp.clip(value - batch.value, -config.clip_eps, config.clip_eps)
    v_loss = 0.5 * jnp.maximum((value - targets) ** 2, (v_clipped - targets) ** 2).mean()
    entropy = masked_entropy(logits, batch.mask).mean()
    total = pg_loss + config.vf_coef * v_loss - config.ent_coef * entropy
    aux = {
        "loss": total,
        "policy_loss": pg_loss,
        "value_loss": v_loss,
        "entropy": entropy,
        "approx_kl": ((ratio - 1) - log_ratio).mean(),
        "clip_frac": (jnp.abs(ratio - 1) > config.clip_eps).mean().astype(jnp.float32),
    }
    return total, aux


def play_rollout(
    games: TrainingGames, agent: Agent, params: Any, env_state: Any, key: jax.Array, num_steps: int
) -> tuple[Any, jax.Array, Transition, tuple[jax.Array, jax.Array, jax.Array]]:
    """``num_steps`` plies sampled from the masked policy (:func:`play_plies`)."""

    def act(env_state, key):
        obs, mask = batch_observation(env_state), env_state.legal_action_mask
        logits, value = agent.apply(params, obs)
        action, log_prob = sample_masked(key, logits, mask)
        return action, lambda out: Transition(
            obs, mask, action, log_prob, value, out.reward, out.done, out.sign, out.plies
        )

    return play_plies(games, act, env_state, key, num_steps)


def make_algorithm(config: PPOConfig, partners: Mapping[str, Any] | None = None) -> Algorithm:
    """PPO as an :class:`~jaxgames.agents.algorithm.Algorithm` for the run driver."""
    setup = make_setup(config, PPOConfig, partners)
    agent, games = setup.agent, setup.games

    def loss(params, minibatch):
        return ppo_loss(agent, params, *minibatch, config)

    def update(state: PPOState, _) -> tuple[PPOState, dict[str, jax.Array]]:
        env_state, key, traj, (done, p0_reward, length) = play_rollout(
            games, agent, state.params, state.env_state, state.key, config.num_steps
        )
        advantages, targets = setup.targets(config, state.params, env_state, traj)
        data = (traj, advantages, targets)
        state, metrics = setup.learn(config, loss, state, env_state, key, data)
        stats = games.episode_stats(done, p0_reward, length, traj.reward)
        return state, {**metrics, **stats, "value_mean": traj.value.mean()}

    return setup.algorithm("ppo", config, update)


def make_train(config: PPOConfig, partners: Mapping[str, Any] | None = None):
    """``train(key) -> (PPOState, metrics)``: the whole run as one pure, jittable,
    vmappable function (metrics float32[num_chunks] per name); ``partners``: the policies of
    ``config.partners`` (:func:`~jaxgames.agents.algorithm.check_standalone`)."""
    check_standalone(config, partners)
    return make_algorithm(config, partners).make_train()
