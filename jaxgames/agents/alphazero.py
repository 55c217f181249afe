"""Gumbel AlphaZero: the network learns from its own search, on device (Danihelka et al. 2022,
"Policy improvement by planning with Gumbel").

PPO's rollout-then-learn loop (:mod:`~jaxgames.agents.rollout_learning`), but every learner
move is a Gumbel MuZero search over the real game guided by the current network
(:func:`~jaxgames.agents.search.search_batch`), and the network learns what it found:

    policy target   the search's improved policy pi' (prior logits + completed Q-values)
    value target    the negamax return to the rollout's end from the mover's view, discounted
                    by gamma per ply (gae_lambda = 1): the game's outcome where the game ends
                    within the rollout, as in AlphaZero (Silver et al. 2018), else bootstrapped
                    from the network's value of the rollout's last position (an n-step return,
                    as MuZero's, Schrittwieser et al. 2020)
    replay          replay_size > 0 keeps the last searched positions in an on-device ring and
                    samples minibatches from it (AlphaZero's window of recent games)
    augment         each example moved by a random symmetry of the game (AlphaGo Zero)
    loss            cross-entropy(pi', masked policy) + vf_coef * 0.5 * (V - target)^2

Root noise: trained on its own pi', the prior can collapse onto a few moves, and a move it has
written off then stays out of the search's reach (mctx min-max rescales the completed
Q-values); AlphaZero's Dirichlet root noise (``root_noise``, Silver et al. 2017) keeps every
legal move within reach. A ply costs ``num_simulations + 1`` network calls.
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
from jaxgames.agents.algorithm import Algorithm, check_standalone
from jaxgames.agents.common import Agent, batch_observation, masked_log_probs
from jaxgames.agents.games_batch import TrainingGames
from jaxgames.agents.replay import TrajectoryBuffer, TrajectoryBufferState, make_trajectory_buffer
from jaxgames.agents.rollout_learning import (
    RolloutConfig,
    RolloutState,
    make_setup,
    play_plies,
    shuffled_minibatches,
)
from jaxgames.agents.search import SearchConfig, search_batch
from jaxgames.core import Env, Symmetries, apply_symmetry
from jaxgames.validation import check_bool, check_int


@dataclasses.dataclass(frozen=True)
class AlphaZeroConfig(RolloutConfig):
    """Gumbel AlphaZero fields besides
    :class:`~jaxgames.agents.rollout_learning.RolloutConfig`'s.

    num_simulations .. win_check: the search of every training ply (:attr:`search`)
    gae_lambda:   1: the value target is the return to the rollout's end (module docstring);
                  below 1 it mixes in the root values, which average the sequential-halving
                  visits rather than value pi'
    replay_size:  searched positions kept (whole plies of num_envs games, at least one
                  rollout); 0: the fresh rollout only
    augment:      move every example by a random symmetry of the game
    """

    retired: ClassVar[Mapping[str, Any]] = {
        **RolloutConfig.retired,
        "explore_plies": 0,
        "full_search_every": 1,
        "cheap_simulations": 1,
        "reanalyse_rows": 0,
        "value_target": "return",
        "noisy_target": True,
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

    def scaled_fields(self, num_envs: int, max_minibatch: int) -> dict[str, Any]:
        """The rollout's rule, and a replay ring of the same plies of every game."""
        fields = super().scaled_fields(num_envs, max_minibatch)
        if self.replay_size:
            fields["replay_size"] = self.replay_rows * num_envs
        return fields

    @property
    def search(self) -> SearchConfig:
        """The search of every training ply (the fields of :class:`SearchConfig`)."""
        return SearchConfig(
            **{f.name: getattr(self, f.name) for f in dataclasses.fields(SearchConfig)}
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
    """One learner move of the rollout (leaves [num_steps, num_envs, ...] after the scan)."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves of obs
    policy_target: jax.Array  # float32[..., A] the search's improved policy (0 on illegal moves)
    value: jax.Array  # float32 the search's root value, mover's view
    reward: jax.Array  # float32 rewards[mover] of this step
    done: jax.Array  # bool   this step ended the game
    sign: jax.Array  # float32 +1 if the next state's mover is this mover, else -1
    plies: jax.Array  # int32 plies of this step (a partner's replies too): discount gamma**plies


class SearchTarget(NamedTuple):
    """One searched position to learn from (what the replay buffer stores)."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves of obs
    policy: jax.Array  # float32[..., A] the search's improved policy pi' (0 on illegal moves)
    value: jax.Array  # float32[...] value target, mover's view (the rollout's return)


@struct.dataclass
class AlphaZeroState(RolloutState):
    """The PPO train state plus the replay buffer of :class:`SearchTarget` (``None`` when
    ``replay_size`` is 0: then exactly the leaves of a PPO state)."""

    buffer: TrajectoryBufferState | None = None


def augment_targets(symmetries: Symmetries, key: jax.Array, batch: SearchTarget) -> SearchTarget:
    """Each example of ``batch`` (leaves [B, ...]) moved by its own uniform symmetry: a symmetry
    of the rules maps a position's search target onto the moved position's."""
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
    """Positions drawn uniformly with replacement from the replay ring ``buf``, each moved by a
    random symmetry if given: leaves [num_minibatches, minibatch_size, ...]."""
    k_sample, k_augment = jax.random.split(key)
    rows, envs = buffer.sample_indices(buf, k_sample, num_minibatches * minibatch_size, 1)
    batch = jax.tree_util.tree_map(lambda x: x[:, 0], buffer.gather(buf, rows, envs))
    if symmetries is not None:
        batch = augment_targets(symmetries, k_augment, batch)
    return jax.tree_util.tree_map(
        lambda x: x.reshape(num_minibatches, minibatch_size, *x.shape[1:]), batch
    )


def alphazero_loss(agent: Agent, params: Any, batch: SearchTarget, config: AlphaZeroConfig):
    """Cross-entropy to pi' plus the value regression on a flat batch -> (float32[], aux);
    ``policy_kl`` = policy_loss - H(pi') = KL(pi' || pi)."""
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
    """``num_steps`` searched plies of every game -> (env_state, key, Transitions [num_steps,
    num_envs], (done, first player's outcome, length) per ply)."""
    guide = agent.policy(params)

    def act(env_state, key):
        out = search_batch(env, guide, key, env_state, search)
        root_value = out.search_tree.summary().value
        mask = env_state.legal_action_mask
        policy = jnp.where(mask, out.action_weights, 0.0)
        obs = batch_observation(env_state)
        return out.action, lambda step: Transition(
            obs, mask, policy, root_value, step.reward, step.done, step.sign, step.plies
        )

    return play_plies(games, act, env_state, key, num_steps)


def make_algorithm(config: AlphaZeroConfig, partners: Mapping[str, Any] | None = None) -> Algorithm:
    """Gumbel AlphaZero as an :class:`~jaxgames.agents.algorithm.Algorithm` for the run driver."""
    setup = make_setup(config, AlphaZeroConfig, partners)
    env, agent, games = setup.env, setup.agent, setup.games
    symmetries = env.symmetries if config.augment and env.symmetries.count > 1 else None
    search = config.search
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
        return AlphaZeroState(**vars(state), buffer=buf)

    def loss(params, minibatch):
        return alphazero_loss(agent, params, minibatch, config)

    def update(state: AlphaZeroState, _) -> tuple[AlphaZeroState, dict[str, jax.Array]]:
        env_state, key, traj, (done, p0_reward, length) = search_rollout(
            env, games, agent, search, state.params, state.env_state, state.key, config.num_steps
        )
        _, targets = setup.targets(config, state.params, env_state, traj)
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
        state, metrics = setup.learn(config, loss, state, env_state, key, data, draw)
        stats = games.episode_stats(done, p0_reward, length, traj.reward)
        return state, {**metrics, **stats, "value_mean": traj.value.mean(), **extra}

    # buffer leaves [rows, num_envs, ...]: split over devices by game, like env_state
    partition = distributed.partition_by_field(env_state=0, buffer=1)
    return setup.algorithm("alphazero", config, update, init=init, partition=partition)


def make_train(config: AlphaZeroConfig, partners: Mapping[str, Any] | None = None):
    """``train(key) -> (AlphaZeroState, metrics)``: the whole run as one pure, jittable,
    vmappable function (metrics float32[num_chunks] per name); ``partners``: the policies of
    ``config.partners`` (:func:`~jaxgames.agents.algorithm.check_standalone`)."""
    check_standalone(config, partners)
    return make_algorithm(config, partners).make_train()
