"""Winner imitation (the animal-shogi article), on device: self-play from random openings, then
supervised learning of the policy on the WINNER's moves only.

Each update plays ``num_envs`` complete games in parallel (a scan of ``max_plies`` plies;
finished games idle as no-ops)::

    ply 0 .. k-1      uniformly random legal moves (k = opening_plies; diversifies the games)
    ply k ..          moves sampled in proportion to the policy among the legal moves
                      (softmax of logits / temperature, illegal moves masked out)
    after the game    every policy move of the player who won gets weight 1, the loser's
                      moves weight 0, moves of drawn games ``draw_weight`` (0: ignored);
                      opening moves and games cut off at max_plies are never trained on
    learn             update_epochs Adam steps on the weighted cross-entropy of the RAW
                      (unmasked) softmax: the network itself has to learn which moves are
                      legal, which is what the article's legal-move rate measures

Metrics per chunk (besides the driver's greedy-vs-random evaluation):

    legal_rate        fraction of self-play positions where the argmax of the raw, unmasked
                      policy is a legal move (the article's measure of learning the rules)
    vs_init/{win,draw,loss}_{first,second}
                      the current policy (sampling among legal moves) against the randomly
                      initialised network of the run, ``eval_vs_init_games`` games per colour

Environment steps (for ``total_steps`` and the progress bar) count ply slots:
``num_envs * max_plies`` per update, including the idle slots after a game ended.

    jaxgames train winner_imitation --game tic_tac_toe
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
    make_agent,
    make_chunk,
    make_optimizer,
)
from jaxgames.agents.common import Agent, batch_observation, masked_entropy, sample_masked
from jaxgames.agents.config import TrainConfig
from jaxgames.core import random_action
from jaxgames.evaluation.match import evaluate_vs
from jaxgames.validation import check_float, check_int, fail


@dataclasses.dataclass(frozen=True)
class WinnerImitationConfig(TrainConfig):
    """Winner-imitation hyper-parameters (plus the shared :class:`TrainConfig` fields).

    max_plies:           plies per self-play game (longer games are cut off and ignored)
    opening_plies:       k uniformly random plies at the start of every game
    temperature:         sampling temperature of the policy moves (> 0)
    draw_weight:         weight of both players' moves in drawn games (0: draws ignored)
    update_epochs:       Adam steps per batch of games
    eval_vs_init_games:  games per colour against the initial network, once per chunk (0: off)
    """

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
    """Everything that changes during training (checkpointed as one pytree)."""

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
    """``num_envs`` self-play games: k random opening plies, then moves sampled from the
    masked policy. Returns (plies [max_plies, num_envs], final rewards float32[num_envs, 2],
    finished bool[num_envs])."""
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
    """Training weight of every ply: float32[max_plies, num_envs].

    1 for the winner's policy moves, 0 for the loser's, ``draw_weight`` for both players in
    drawn games; 0 for opening plies, idle plies after the end and games not finished.
    """
    mover_reward = jnp.where(
        plies.mover == 0, rewards[None, :, 0], rewards[None, :, 1]
    )  # two players
    draw = jnp.all(rewards == 0, axis=-1)[None]
    w = jnp.where(mover_reward > 0, 1.0, jnp.where(draw, draw_weight, 0.0))
    return w * (plies.live & ~plies.opening & finished[None]).astype(jnp.float32)


def imitation_loss(agent: Agent, params: Any, plies: Plies, weights: jax.Array):
    """Weighted cross-entropy of the RAW (unmasked) softmax on the chosen moves.
    Returns (loss float32[], aux dict)."""
    flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), plies)
    w = weights.reshape(-1)
    logits, _ = agent.apply(params, flat.obs)
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, flat.action[:, None], axis=1)[:, 0]
    loss = jnp.sum(w * nll) / jnp.maximum(w.sum(), 1.0)
    live = flat.live.astype(jnp.float32)
    legal = jnp.take_along_axis(flat.mask, jnp.argmax(logits, -1)[:, None], axis=1)[:, 0]
    aux = {
        "loss": loss,
        "legal_rate": jnp.sum(live * legal) / jnp.maximum(live.sum(), 1.0),
        "legal_mass": jnp.sum(live * jnp.sum(jnp.where(flat.mask, jnp.exp(logp), 0.0), -1))
        / jnp.maximum(live.sum(), 1.0),
        "entropy": jnp.sum(live * masked_entropy(logits, flat.mask)) / jnp.maximum(live.sum(), 1.0),
    }
    return loss, aux


def make_algorithm(
    config: WinnerImitationConfig, partners: Mapping[str, Any] | None = None
) -> Algorithm:
    """Winner imitation as an :class:`~jaxgames.agents.algorithm.Algorithm` for the run
    driver (self-play only: ``partners`` is accepted for the common signature and unused)."""
    check_config_type(config, WinnerImitationConfig)
    del partners  # config validation keeps config.partners empty
    env = config.make_env()
    agent = make_agent(config, env)
    optimizer = make_optimizer(config, config.num_updates * config.update_epochs)

    def init(key: jax.Array) -> WIState:
        k_params, k_run = jax.random.split(key)
        params = agent.init_params(k_params)
        frozen = jax.tree_util.tree_map(jnp.copy, params)  # distinct buffers (the driver donates)
        return WIState(params, frozen, optimizer.init(params), k_run, jnp.zeros((), jnp.int32))

    def update(state: WIState, _):
        key, k_play = jax.random.split(state.key)
        plies, rewards, finished = play_selfplay_games(
            env,
            agent,
            state.params,
            k_play,
            config.num_envs,
            config.max_plies,
            config.opening_plies,
            config.temperature,
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

    return Algorithm(
        name="winner_imitation",
        config=config,
        env=env,
        agent=agent,
        init=init,
        chunk=make_chunk(update, config.updates_per_chunk, finish),
        params=lambda s: s.params,
    )


def make_train(config: WinnerImitationConfig):
    """``train(key) -> (WIState, metrics)``: the whole run as one pure, jittable function."""
    return make_algorithm(config).make_train()
