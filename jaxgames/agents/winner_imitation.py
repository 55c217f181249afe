"""Winner imitation (the animal-shogi article): self-play from random openings, then supervised
learning of the policy on the winner's moves only, on device.

Each update plays ``num_envs`` whole games (a scan of ``max_plies`` plies; finished games
idle): ``opening_plies`` uniformly random plies, then moves sampled from the masked policy at
``temperature``. The winner's policy moves get weight 1, the loser's 0, drawn games'
``draw_weight``; openings and games cut off at ``max_plies`` are never trained on. The loss is
the weighted cross-entropy of the RAW (unmasked) softmax, so the network has to learn which
moves are legal: ``legal_rate`` (the raw argmax is legal) is the article's measure of that.
``vs_init/*`` scores the policy against the run's initial network. Environment steps count
ply slots, ``num_envs * max_plies`` per update, idle ones included.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxgames.agents import presets
from jaxgames.agents.algorithm import (
    Algorithm,
    check_config_type,
    check_standalone,
    chunked_algorithm,
    make_agent,
    make_optimizer,
)
from jaxgames.agents.common import Agent, batch_observation, masked_entropy, sample_masked
from jaxgames.agents.config import TrainConfig
from jaxgames.core import random_action
from jaxgames.evaluation.match import evaluate_vs
from jaxgames.validation import check_float, check_int, fail


@dataclasses.dataclass(frozen=True)
class WinnerImitationConfig(TrainConfig):
    """Winner-imitation fields besides :class:`TrainConfig`'s (module docstring);
    update_epochs: Adam steps per batch of games; eval_vs_init_games: games per colour against
    the initial network per chunk (0: off)."""

    max_plies: int = 100
    opening_plies: int = 4
    temperature: float = 1.0
    draw_weight: float = 0.0
    update_epochs: int = 1
    eval_vs_init_games: int = 128

    def validate(self) -> None:
        super().validate()
        check_int("max_plies", self.max_plies)
        check_int("opening_plies", self.opening_plies, minimum=0)
        if self.opening_plies >= self.max_plies:  # every ply an opening ply: nothing to learn
            fail(
                "opening_plies",
                self.opening_plies,
                f"must be less than max_plies = {self.max_plies} (openings are not trained on)",
            )
        check_float("temperature", self.temperature, 0.0, float("inf"), low_open=True)
        check_float("draw_weight", self.draw_weight, 0.0, 1.0)
        if self.partners:  # the method imitates the winners of pure self-play games
            fail(
                "partners",
                self.partners,
                "winner imitation learns from self-play only; leave it empty",
            )
        if self.max_opening_plies:  # its own games open with exactly opening_plies random plies
            fail(
                "max_opening_plies",
                self.max_opening_plies,
                "winner imitation opens its games with opening_plies; leave it 0",
            )
        check_int("update_epochs", self.update_epochs)
        check_int("eval_vs_init_games", self.eval_vs_init_games, minimum=0)

    @property
    def optimizer_steps(self) -> int:
        return self.num_updates * self.update_epochs

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.max_plies


Config = WinnerImitationConfig
#: the winner-imitation preset of a game (:func:`jaxgames.agents.presets.default_config`)
default_config = functools.partial(presets.default_config, "winner_imitation")


class Plies(NamedTuple):
    """The plies of a batch of games, leaves [max_plies, num_envs, ...]."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves
    action: jax.Array  # int32
    mover: jax.Array  # int32 player to move
    live: jax.Array  # bool the game was not over yet (the ply was really played)
    opening: jax.Array  # bool a random opening ply


@struct.dataclass
class WIState:
    """The train state (checkpointed as one pytree)."""

    params: Any
    init_params: Any  # the random-initialised network (the opponent of the vs_init metric)
    opt_state: Any
    key: jax.Array
    update: jax.Array  # int32[]


def play_selfplay_games(
    env,
    agent: Agent,
    params: Any,
    key: jax.Array,
    num_envs: int,
    max_plies: int,
    opening_plies: int,
    temperature: float,
) -> tuple[Plies, jax.Array, jax.Array]:
    """``num_envs`` self-play games -> (plies [max_plies, num_envs], final rewards
    float32[num_envs, 2], finished bool[num_envs])."""
    k_init, k_play = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(k_init, num_envs))

    def ply(carry, t):
        states, rewards, key = carry
        key, k_rand, k_pol = jax.random.split(key, 3)
        obs, mask = batch_observation(states), states.legal_action_mask
        logits, _ = agent.apply(params, obs)
        policy_action, _ = sample_masked(k_pol, logits / temperature, mask)
        rand_action = jax.vmap(random_action)(jax.random.split(k_rand, num_envs), mask)
        opening = t < opening_plies
        action = jnp.where(opening, rand_action, policy_action)
        live = ~(states.terminated | states.truncated)
        record = Plies(
            obs, mask, action, states.current_player, live, jnp.broadcast_to(opening, live.shape)
        )
        states = jax.vmap(env.step)(states, action)  # finished games: no-ops with zero rewards
        return (states, rewards + states.rewards, key), record

    init = (states, jnp.zeros((num_envs, env.num_players), jnp.float32), k_play)
    (states, rewards, _), plies = jax.lax.scan(ply, init, jnp.arange(max_plies))
    return plies, rewards, states.terminated | states.truncated


def winner_weights(
    plies: Plies, rewards: jax.Array, finished: jax.Array, draw_weight: float
) -> jax.Array:
    """float32[max_plies, num_envs]: 1 for the winner's policy moves, ``draw_weight`` in drawn
    games, else 0 (openings, idle plies, unfinished games)."""
    mover_reward = jnp.where(plies.mover == 0, rewards[None, :, 0], rewards[None, :, 1])
    draw = jnp.all(rewards == 0, axis=-1)[None]
    w = jnp.where(mover_reward > 0, 1.0, jnp.where(draw, draw_weight, 0.0))
    return w * (plies.live & ~plies.opening & finished[None]).astype(jnp.float32)


def imitation_loss(agent: Agent, params: Any, plies: Plies, weights: jax.Array):
    """Weighted cross-entropy of the raw softmax on the chosen moves -> (float32[], aux)."""
    flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), plies)
    w = weights.reshape(-1)
    logits, _ = agent.apply(params, flat.obs)
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, flat.action[:, None], axis=1)[:, 0]
    loss = jnp.sum(w * nll) / jnp.maximum(w.sum(), 1.0)
    live = flat.live.astype(jnp.float32)
    legal = jnp.take_along_axis(flat.mask, jnp.argmax(logits, -1)[:, None], axis=1)[:, 0]

    def live_mean(x):
        return jnp.sum(live * x) / jnp.maximum(live.sum(), 1.0)

    legal_mass = jnp.sum(jnp.where(flat.mask, jnp.exp(logp), 0.0), -1)
    entropy = masked_entropy(logits, flat.mask)
    aux = {"loss": loss, "legal_rate": live_mean(legal), "legal_mass": live_mean(legal_mass)}
    return loss, {**aux, "entropy": live_mean(entropy)}


def make_algorithm(
    config: WinnerImitationConfig, partners: Mapping[str, Any] | None = None
) -> Algorithm:
    """Winner imitation as an :class:`~jaxgames.agents.algorithm.Algorithm` (self-play only:
    ``partners`` is unused)."""
    check_config_type(config, WinnerImitationConfig)
    del partners  # config validation keeps config.partners empty
    env = config.make_env()
    agent = make_agent(config, env)
    optimizer = make_optimizer(config, config.optimizer_steps)

    def init(key: jax.Array) -> WIState:
        k_params, k_run = jax.random.split(key)
        params = agent.init_params(k_params)
        frozen = jax.tree_util.tree_map(jnp.copy, params)  # distinct buffers (the driver donates)
        return WIState(params, frozen, optimizer.init(params), k_run, jnp.zeros((), jnp.int32))

    def update(state: WIState, _):
        key, k_play = jax.random.split(state.key)
        c = config
        plies, rewards, finished = play_selfplay_games(
            env,
            agent,
            state.params,
            k_play,
            c.num_envs,
            c.max_plies,
            c.opening_plies,
            c.temperature,
        )
        weights = winner_weights(plies, rewards, finished, config.draw_weight)

        def step(carry, _):
            params, opt_state = carry
            grads, aux = jax.grad(lambda p: imitation_loss(agent, p, plies, weights), has_aux=True)(
                params
            )
            upd, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, upd), opt_state), aux

        (params, opt_state), aux = jax.lax.scan(
            step, (state.params, state.opt_state), None, length=config.update_epochs
        )
        metrics = {k: v[0] for k, v in aux.items()}  # measured before this batch's updates
        n = jnp.maximum(finished.sum(), 1)
        metrics.update(
            selfplay_first_win=jnp.sum(finished & (rewards[:, 0] > 0)) / n,
            selfplay_draw=jnp.sum(finished & (rewards[:, 0] == 0)) / n,
            unfinished=1.0 - finished.mean(),
            episode_length=plies.live.sum() / config.num_envs,
            trained_plies=(weights > 0).sum() / config.num_envs,
        )
        return state.replace(
            params=params, opt_state=opt_state, key=key, update=state.update + 1
        ), metrics

    def finish(state: WIState, stacked, out):
        if config.eval_vs_init_games > 0:
            key, k_eval = jax.random.split(state.key)
            rates = evaluate_vs(
                env,
                agent.policy(state.params, greedy=False),
                agent.policy(state.init_params, greedy=False),
                k_eval,
                config.eval_vs_init_games,
            )
            out.update({f"vs_init/{k}": v for k, v in rates.items()})
            state = state.replace(key=key)
        return state, out

    return chunked_algorithm("winner_imitation", config, env, agent, init, update, finish=finish)


def make_train(config: WinnerImitationConfig):
    """``train(key) -> (WIState, metrics)``: the whole run as one pure, jittable function
    (:func:`~jaxgames.agents.algorithm.check_standalone`)."""
    check_standalone(config, None)
    return make_algorithm(config).make_train()
