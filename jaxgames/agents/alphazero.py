"""Gumbel AlphaZero: the network learns from its own search, entirely on device.

The rollout-then-learn loop of PPO (:mod:`jaxgames.agents.rollout_learning`), but every
learner move is chosen by a Gumbel MuZero search over the real game guided by the current
network (:func:`jaxgames.agents.search.search_batch`), and the network learns what the search
found (Danihelka et al. 2022, "Policy improvement by planning with Gumbel"):

    act       per ply, in num_envs games: a search with Gumbel noise -> the move to play and
              the improved policy pi' (softmax of prior logits + completed Q-values); partners
              reply inside the step (:mod:`jaxgames.agents.games_batch`)
    targets   policy: pi' of each searched position; value: the game's outcome from the
              mover's view, discounted by gamma per ply (negamax returns with gae_lambda = 1,
              :func:`~jaxgames.agents.common.negamax_gae`; the network's value bootstraps only
              games cut by the rollout's end), as in AlphaZero (Silver et al. 2018)
    replay    with replay_size > 0 the searched positions go into an on-device ring of the
              last replay_size (:mod:`jaxgames.agents.replay`, part of the train state) and
              each update samples its minibatches from it, as AlphaZero trains on a window of
              recent games; 0: shuffled passes over the fresh rollout
    augment   each example is moved by a random symmetry of the game (``env.symmetries``), as
              AlphaGo Zero did with the 8 symmetries of Go (Silver et al. 2017): a symmetry of
              the rules maps a position's search target onto the moved position's
    learn     update_epochs x num_minibatches Adam steps on
              cross-entropy(pi', masked policy) + vf_coef * 0.5 * (V - target)^2

    train = make_train(AlphaZeroConfig(game="tic_tac_toe"))     # pure; jit it, vmap it over seeds

Root noise: pi' moves a move's logit by a few units at most, and mctx min-max rescales the
completed Q-values, which blows up differences of thousandths when every move looks equally
lost. Trained on its own pi', the prior can collapse onto a few moves, and a move the network
has written off (a block, even a win) then stays out of the search's reach for good.
AlphaZero's Dirichlet noise at the root (``root_noise``, Silver et al. 2017) keeps every legal
move within reach.

A ply costs num_simulations + 1 network evaluations: fewer plies per second than PPO, a better
target per ply. The trained network is loaded like any other (``load_policy``: the network
alone, greedy); :class:`~jaxgames.agents.search.SearchPolicy` plays it with search (opponent
spec ``mcts:N:<run>``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar, Mapping, NamedTuple

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxgames import distributed
from jaxgames.agents import presets
from jaxgames.agents.algorithm import Algorithm, make_chunk
from jaxgames.agents.common import Agent, batch_observation, masked_log_probs, negamax_gae
from jaxgames.agents.games_batch import TrainingGames
from jaxgames.agents.replay import TrajectoryBuffer, TrajectoryBufferState, make_trajectory_buffer
from jaxgames.agents.rollout_learning import (
    RolloutConfig,
    RolloutState,
    make_setup,
    shuffled_minibatches,
)
from jaxgames.agents.search import SearchConfig, search_batch
from jaxgames.core import Env, Symmetries, apply_symmetry
from jaxgames.validation import check_bool, check_int


@dataclasses.dataclass(frozen=True)
class AlphaZeroConfig(RolloutConfig):
    """Gumbel AlphaZero hyper-parameters: the fields of
    :class:`~jaxgames.agents.rollout_learning.RolloutConfig` and ``TrainConfig``, and

    num_simulations, max_num_considered_actions, gumbel_scale, value_scale, rescale_values,
    root_noise, root_noise_alpha, win_check:
                  the search of every training ply (:attr:`search`, a
                  :class:`~jaxgames.agents.search.SearchConfig`; gumbel_scale 1 samples the move)
    gamma:        1 by default; below 1 a win sooner is worth more
    gae_lambda:   1 (default): the value target is the game's outcome; below 1 it mixes in
                  the search's root values, which average the sequential-halving visits (weak
                  moves too) rather than value the improved policy
    replay_size:  searched positions kept on device to learn from (rounded down to whole plies
                  of num_envs games, at least one rollout); 0: the fresh rollout only
    augment:      move every example of a minibatch by a random symmetry of the game
    """

    retired: ClassVar[Mapping[str, Any]] = {
        **RolloutConfig.retired,
        "explore_plies": 0,
        "full_search_every": 1,
        "cheap_simulations": 1,
        "reanalyse_rows": 0,
    }

    num_simulations: int = 8
    max_num_considered_actions: int = 16
    gumbel_scale: float = 1.0
    value_scale: float = 0.1
    rescale_values: bool = True
    root_noise: float = 0.0
    root_noise_alpha: float = 10.83
    win_check: bool = False
    gamma: float = 1.0
    gae_lambda: float = 1.0
    replay_size: int = 0
    augment: bool = True

    def validate(self) -> None:
        super().validate()
        self.search  # building the SearchConfig checks the search fields
        check_int("replay_size", self.replay_size, minimum=0)
        check_bool("augment", self.augment)

    @property
    def search(self) -> SearchConfig:
        """The search of every training ply."""
        return SearchConfig(
            num_simulations=self.num_simulations,
            max_num_considered_actions=self.max_num_considered_actions,
            gumbel_scale=self.gumbel_scale,
            value_scale=self.value_scale,
            rescale_values=self.rescale_values,
            root_noise=self.root_noise,
            root_noise_alpha=self.root_noise_alpha,
            win_check=self.win_check,
        )

    @property
    def replay_rows(self) -> int:
        """Plies of all num_envs games the replay ring holds (0: no replay)."""
        if self.replay_size == 0:
            return 0
        return max(self.replay_size // self.num_envs, self.num_steps)


Config = AlphaZeroConfig
#: the Gumbel AlphaZero preset of a game (:func:`jaxgames.agents.presets.default_config`)
default_config = functools.partial(presets.default_config, "alphazero")


class Transition(NamedTuple):
    """One learner move of the rollout, leaves shaped [num_steps, num_envs, ...] after the scan."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves of obs
    policy_target: jax.Array  # float32[..., A] the search's improved policy (0 on illegal moves)
    value: jax.Array  # float32 the search's root value, mover's view
    reward: jax.Array  # float32 rewards[mover] of this step
    done: jax.Array  # bool   this step ended the game
    sign: jax.Array  # float32 +1 if the next state's mover is this mover, else -1


class SearchTarget(NamedTuple):
    """One searched position to learn from (what the replay buffer stores); leaves
    [..., *item] with any batch axes."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves of obs
    policy: jax.Array  # float32[..., A] the search's improved policy pi' (0 on illegal moves)
    value: jax.Array  # float32[...] value target, mover's view (the game's outcome)


@struct.dataclass
class AlphaZeroState(RolloutState):
    """The rollout train state (params, opt_state, env_state, key, update; shared with PPO)
    plus the replay buffer of :class:`SearchTarget` (``None`` when ``replay_size`` is 0: the
    state then has exactly the leaves of a PPO state)."""

    buffer: TrajectoryBufferState | None = None


def augment_targets(symmetries: Symmetries, key: jax.Array, batch: SearchTarget) -> SearchTarget:
    """Each example of ``batch`` (leaves [B, ...]) moved by its own uniformly drawn symmetry of
    the game: a symmetry of the rules maps the search target of a position onto the search
    target of the moved position (the value is unchanged)."""
    k = jax.random.randint(key, batch.value.shape, 0, symmetries.count, dtype=jnp.int32)
    obs, mask, policy = apply_symmetry(symmetries, k, batch.obs, batch.mask, batch.policy)
    return SearchTarget(obs, mask, policy, batch.value)


def sample_targets(
    buffer: TrajectoryBuffer,
    buf: TrajectoryBufferState,
    key: jax.Array,
    num_minibatches: int,
    minibatch_size: int,
    symmetries: Symmetries | None = None,
) -> SearchTarget:
    """``num_minibatches * minibatch_size`` positions drawn uniformly (with replacement) from the
    written part of the replay buffer ``buf`` (of :class:`SearchTarget`), each moved by a random
    symmetry if ``symmetries`` is given: leaves [num_minibatches, minibatch_size, ...]."""
    k_sample, k_augment = jax.random.split(key)
    rows, envs = buffer.sample_indices(buf, k_sample, num_minibatches * minibatch_size, 1)
    batch = jax.tree_util.tree_map(lambda x: x[:, 0], buffer.gather(buf, rows, envs))
    if symmetries is not None:
        batch = augment_targets(symmetries, k_augment, batch)
    return jax.tree_util.tree_map(
        lambda x: x.reshape(num_minibatches, minibatch_size, *x.shape[1:]), batch
    )


def alphazero_loss(agent: Agent, params: Any, batch: SearchTarget, config: AlphaZeroConfig):
    """Cross-entropy to the search policy plus the value regression, on a flat batch (axis B).

    Returns (total float32[], aux dict of float32[]).
    """
    logits, value = agent.apply(params, batch.obs)
    chex.assert_equal_shape([logits, batch.mask, batch.policy])
    chex.assert_equal_shape([value, batch.value])
    logp = masked_log_probs(logits, batch.mask)
    policy_loss = -jnp.sum(jnp.where(batch.mask, batch.policy * logp, 0.0), axis=-1).mean()
    value_loss = 0.5 * ((value - batch.value) ** 2).mean()
    target_entropy = -jnp.sum(
        jnp.where(batch.policy > 0, batch.policy * jnp.log(batch.policy), 0.0), -1
    )
    total = policy_loss + config.vf_coef * value_loss
    aux = {
        "loss": total,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        # policy_loss - target_entropy = KL(pi' || pi): how far the network is from its search
        "policy_kl": policy_loss - target_entropy.mean(),
    }
    return total, aux


def search_rollout(
    env: Env,
    games: TrainingGames,
    agent: Agent,
    search: SearchConfig,
    params: Any,
    env_state: Any,
    key: jax.Array,
    num_steps: int,
) -> tuple[Any, jax.Array, Transition, tuple[jax.Array, jax.Array, jax.Array]]:
    """``num_steps`` plies of every game, each move searched over ``env`` guided by the network
    -> (env_state, key, Transitions [num_steps, num_envs], (done, first player's outcome,
    length) per ply)."""
    guide = agent.policy(params)

    def ply(carry, _):
        env_state, key = carry
        key, k_search, k_reset = jax.random.split(key, 3)
        out = search_batch(env, guide, k_search, env_state, search)
        root_value = out.search_tree.summary().value
        step = games.step(env_state, out.action, k_reset)
        mask = env_state.legal_action_mask
        policy = jnp.where(mask, out.action_weights, 0.0)
        t = Transition(
            batch_observation(env_state),
            mask,
            policy,
            root_value,
            step.reward,
            step.done,
            step.sign,
        )
        return (step.state, key), (t, (step.done, step.outcome[:, 0], step.length))

    (env_state, key), (traj, stats) = jax.lax.scan(ply, (env_state, key), None, length=num_steps)
    return env_state, key, traj, stats


def make_algorithm(config: AlphaZeroConfig, partners: Mapping[str, Any] | None = None) -> Algorithm:
    """Gumbel AlphaZero as an :class:`~jaxgames.agents.algorithm.Algorithm` for the run driver."""
    setup = make_setup(config, AlphaZeroConfig, partners)
    env, agent, games = setup.env, setup.agent, setup.games
    symmetries = env.symmetries if config.augment and env.symmetries.count > 1 else None
    buffer = None
    if config.replay_rows:
        buffer = make_trajectory_buffer(config.replay_rows, config.num_envs)

    def init(key: jax.Array) -> AlphaZeroState:
        state = setup.init(key)
        buf = None
        if buffer is not None:
            item = SearchTarget(
                jax.ShapeDtypeStruct(agent.observation_shape, jnp.float32),
                jax.ShapeDtypeStruct((env.num_actions,), jnp.bool_),
                jax.ShapeDtypeStruct((env.num_actions,), jnp.float32),
                jax.ShapeDtypeStruct((), jnp.float32),
            )
            buf = buffer.init(item)
        return AlphaZeroState(
            state.params, state.opt_state, state.env_state, state.key, state.update, buf
        )

    def update(state: AlphaZeroState, _) -> tuple[AlphaZeroState, dict[str, jax.Array]]:
        env_state, key, traj, (done, p0_reward, length) = search_rollout(
            env,
            games,
            agent,
            config.search,
            state.params,
            state.env_state,
            state.key,
            config.num_steps,
        )
        _, last_value = agent.apply(state.params, batch_observation(env_state))
        _, targets = negamax_gae(
            traj.reward,
            traj.value,
            traj.done,
            traj.sign,
            last_value,
            config.gamma,
            config.gae_lambda,
        )
        data = SearchTarget(traj.obs, traj.mask, traj.policy_target, targets)
        extra = {}
        if buffer is not None:  # the fresh rollout goes in, the minibatches come out
            state = state.replace(buffer=buffer.extend(state.buffer, data))
            draw = functools.partial(
                sample_targets,
                buffer,
                state.buffer,
                num_minibatches=config.num_minibatches,
                minibatch_size=config.batch_size // config.num_minibatches,
                symmetries=symmetries,
            )
            extra["replay_fill"] = (buffer.size(state.buffer) / buffer.capacity).astype(jnp.float32)
        elif symmetries is not None:  # shuffled passes over the fresh rollout, augmented
            flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), data)
            augment = functools.partial(augment_targets, symmetries)
            draw = shuffled_minibatches(flat, config.num_minibatches, augment)
        else:
            draw = None  # shuffled passes over the fresh rollout, as in PPO
        state, metrics = setup.learn(
            config,
            lambda p, mb: alphazero_loss(agent, p, mb, config),
            state,
            env_state,
            key,
            data,
            draw,
        )
        metrics.update(
            games.episode_stats(done, p0_reward, length, traj.reward),
            value_mean=traj.value.mean(),
            **extra,
        )
        return state, metrics

    return Algorithm(
        name="alphazero",
        config=config,
        env=env,
        agent=agent,
        init=init,
        chunk=make_chunk(update, config.updates_per_chunk),
        params=lambda s: s.params,
        # buffer leaves [rows, num_envs, ...]: split over devices by game, like env_state
        partition=distributed.partition_by_field(env_state=0, buffer=1),
    )


def make_train(config: AlphaZeroConfig):
    """``train(key) -> (AlphaZeroState, metrics)``: the whole run as one pure, jittable,
    vmappable function (metrics float32[num_chunks] per name)."""
    return make_algorithm(config).make_train()
