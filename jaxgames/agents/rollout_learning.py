"""What the algorithms that learn from fresh rollouts share (PPO, Gumbel AlphaZero).

Each update: play ``num_steps`` plies in ``num_envs`` games, build targets with negamax
TD(lambda) (:func:`jaxgames.agents.common.negamax_gae`), then ``update_epochs`` passes over the
``num_envs * num_steps`` transitions in ``num_minibatches`` shuffled minibatches, one Adam step
each. The config fields, the train state, the setup (game, network, optimiser, training games),
and the learning step live here once (the chunk loop is
:func:`jaxgames.agents.algorithm.make_chunk`); each algorithm brings its acting rule, its
targets and its loss.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxgames import distributed
from jaxgames.agents.algorithm import check_config_type, make_agent, make_optimizer
from jaxgames.agents.common import Agent
from jaxgames.agents.config import TrainConfig
from jaxgames.agents.games_batch import TrainingGames, make_training_games
from jaxgames.validation import check_float, check_int, fail


@dataclasses.dataclass(frozen=True)
class RolloutConfig(TrainConfig):
    """Fields of rollout-then-learn algorithms (plus the shared :class:`TrainConfig` fields).

    num_steps:        plies per env per rollout (batch = num_envs * num_steps transitions)
    update_epochs:    passes over each batch
    num_minibatches:  minibatches per pass (must divide num_envs * num_steps)
    gae_lambda:       (GAE / TD) lambda, negamax form (``gamma`` is the discount)
    vf_coef:          value-loss weight
    anneal_lr, adam_eps: defaults differ from the base config's (decay on; eps 1e-5 as in
                      the PPO implementations this follows)
    """

    num_steps: int = 16
    update_epochs: int = 4
    num_minibatches: int = 4
    gae_lambda: float = 0.95
    vf_coef: float = 0.5
    anneal_lr: bool = True
    adam_eps: float = 1e-5

    def validate(self) -> None:
        super().validate()
        check_int("num_steps", self.num_steps)
        check_int("update_epochs", self.update_epochs)
        check_int("num_minibatches", self.num_minibatches)
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            fail(
                "num_minibatches",
                self.num_minibatches,
                f"must divide num_envs * num_steps = {self.num_envs * self.num_steps}",
            )
        check_float("gae_lambda", self.gae_lambda, 0.0, 1.0)
        check_float("vf_coef", self.vf_coef, 0.0, float("inf"))

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def steps_per_update(self) -> int:
        return self.batch_size


def optimise(
    loss_fn: Callable[[Any, Any], tuple[jax.Array, dict[str, jax.Array]]],
    optimizer: optax.GradientTransformation,
    params: Any,
    opt_state: Any,
    key: jax.Array,
    draw: Callable[[jax.Array], Any],
    num_epochs: int,
) -> tuple[Any, Any, jax.Array, dict[str, jax.Array]]:
    """``num_epochs`` rounds; each draws its minibatches with ``draw(key)`` (a pytree with leaves
    [num_minibatches, minibatch, ...]) and takes one optimiser step per minibatch.

    ``loss_fn(params, minibatch) -> (loss float32[], aux dict of float32[])``.
    Returns ``(params, opt_state, key, aux)`` with every aux entry (plus ``grad_norm``) stacked
    float32[num_epochs, num_minibatches]. Minibatches are split over devices when a mesh is set.
    """

    def epoch(carry, _):
        params, opt_state, key = carry
        key, k_draw = jax.random.split(key)
        mbs = distributed.constrain_data(draw(k_draw), axis=1)  # split over devices (if any)

        def minibatch(carry, mb):
            params, opt_state = carry
            grads, aux = jax.grad(loss_fn, has_aux=True)(params, mb)
            upd, opt_state = optimizer.update(grads, opt_state, params)
            aux["grad_norm"] = optax.tree.norm(grads)
            return (optax.apply_updates(params, upd), opt_state), aux

        (params, opt_state), aux = jax.lax.scan(minibatch, (params, opt_state), mbs)
        return (params, opt_state, key), aux

    (params, opt_state, key), aux = jax.lax.scan(
        epoch, (params, opt_state, key), None, length=num_epochs
    )
    return params, opt_state, key, aux


def shuffled_minibatches(
    data: Any, num_minibatches: int, transform: Callable[[jax.Array, Any], Any] | None = None
) -> Callable[[jax.Array], Any]:
    """A ``draw`` for :func:`optimise`: each call a fresh random permutation of ``data`` (leaves
    with leading axis N) cut into ``num_minibatches`` minibatches (leaves [num_minibatches,
    N / num_minibatches, ...]); ``transform(key, batch)``, if given, is applied to the
    permuted batch (leaves [N, ...]) first, e.g. a random symmetry per example."""
    n = jax.tree_util.tree_leaves(data)[0].shape[0]

    def draw(key: jax.Array) -> Any:
        if transform is not None:
            key, k_transform = jax.random.split(key)
        perm = jax.random.permutation(key, n)
        batch = jax.tree_util.tree_map(lambda x: x[perm], data)
        if transform is not None:
            batch = transform(k_transform, batch)
        return jax.tree_util.tree_map(lambda x: x.reshape(num_minibatches, -1, *x.shape[1:]), batch)

    return draw


@struct.dataclass
class RolloutState:
    """Everything that changes during training (checkpointed as one pytree)."""

    params: Any
    opt_state: Any
    env_state: Any  # batched game states [num_envs]
    key: jax.Array  # uint32[2]
    update: jax.Array  # int32[] updates done


@dataclasses.dataclass(frozen=True)
class RolloutSetup:
    """The pieces every rollout-then-learn algorithm builds from its config: the game, the
    network wrapper, the optimiser and the batch of training games (self-play + partners)."""

    env: Any
    agent: Agent
    optimizer: optax.GradientTransformation
    games: TrainingGames

    def init(self, key: jax.Array) -> RolloutState:
        """Fresh parameters, optimiser state and games: the state before the first update."""
        k_params, k_env, k_run = jax.random.split(key, 3)
        params = self.agent.init_params(k_params)
        return RolloutState(
            params, self.optimizer.init(params), self.games.init(k_env), k_run, jnp.int32(0)
        )

    def learn(
        self,
        config: RolloutConfig,
        loss_fn: Callable[[Any, Any], tuple[jax.Array, dict[str, jax.Array]]],
        state: RolloutState,
        env_state: Any,
        key: jax.Array,
        data: Any,
        draw: Callable[[jax.Array], Any] | None = None,
    ) -> tuple[RolloutState, dict[str, jax.Array]]:
        """One update's learning step: ``update_epochs`` shuffled passes over ``data`` (leaves
        [num_steps, num_envs, ...], flattened), or the minibatches ``draw`` draws instead (see
        :func:`optimise`; ``data`` is then unused). Returns the next state (``env_state`` and
        ``key`` from the rollout; other fields of a subclass state kept) and the loss metrics
        averaged over the minibatches."""
        if draw is None:
            flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), data)
            draw = shuffled_minibatches(flat, config.num_minibatches)
        params, opt_state, key, aux = optimise(
            loss_fn, self.optimizer, state.params, state.opt_state, key, draw, config.update_epochs
        )
        state = state.replace(
            params=params,
            opt_state=opt_state,
            env_state=env_state,
            key=key,
            update=state.update + 1,
        )
        return state, {k: v.mean() for k, v in aux.items()}


def make_setup(
    config: RolloutConfig,
    config_class: type = RolloutConfig,
    partners: Mapping[str, Any] | None = None,
) -> RolloutSetup:
    """:class:`RolloutSetup` of ``config`` (MLP/CNN/ResNet from ``config.network``);
    ``TypeError`` if ``config`` is not a ``config_class`` (the algorithm's own config);
    ``partners``: the partner policies, ``None`` for stand-ins (see
    :func:`jaxgames.agents.games_batch.make_training_games`)."""
    check_config_type(config, config_class)
    env = config.make_env()
    steps = config.num_updates * config.update_epochs * config.num_minibatches
    return RolloutSetup(
        env,
        make_agent(config, env),
        make_optimizer(config, steps),
        make_training_games(
            env,
            config.num_envs,
            config.partners,
            partners,
            config.max_opening_plies,
        ),
    )
