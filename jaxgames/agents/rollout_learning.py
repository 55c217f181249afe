"""What the rollout-then-learn algorithms share (PPO, Gumbel AlphaZero): the config fields, the
train state, the setup, the rollout loop, negamax targets and the learning step.

Each update plays ``num_steps`` plies in ``num_envs`` games, builds targets with negamax
TD(lambda) (:func:`~jaxgames.agents.common.negamax_gae`), then takes ``update_epochs`` passes
of ``num_minibatches`` shuffled minibatches, one Adam step each. Each algorithm brings its
acting rule, its targets and its loss.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxgames import distributed
from jaxgames.agents.algorithm import (
    Algorithm,
    check_config_type,
    chunked_algorithm,
    make_agent,
    make_optimizer,
)
from jaxgames.agents.common import Agent, batch_observation, negamax_gae, per_ply_discount
from jaxgames.agents.config import TrainConfig, minibatch_count, sqrt_scaled_rate
from jaxgames.agents.games_batch import TrainingGames, make_training_games
from jaxgames.validation import check_float, check_int, fail


@dataclasses.dataclass(frozen=True)
class RolloutConfig(TrainConfig):
    """Rollout fields besides :class:`TrainConfig`'s: num_steps plies per env per rollout,
    update_epochs passes of num_minibatches minibatches (dividing num_envs * num_steps),
    gae_lambda, vf_coef (value-loss weight); anneal_lr on and adam_eps 1e-5, as in the PPO
    implementations this follows."""

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

    def scaled_fields(self, num_envs: int, max_minibatch: int) -> dict[str, Any]:
        """:meth:`TrainConfig.scaled_to` for a rollout: ``update_epochs`` passes stay, so each
        ply is learned from as often; the minibatch grows with the games up to
        ``max_minibatch`` (more minibatches past it), the learning rate with its square root."""
        minibatch = self.batch_size // self.num_minibatches
        rows = num_envs * self.num_steps
        # as many minibatches (each grows with the games) unless they would pass the cap
        cap = max(minibatch, max_minibatch)
        count = minibatch_count(rows, max(self.num_minibatches, -(-rows // cap)))
        growth = rows / count / minibatch
        return {
            "num_envs": num_envs,
            "num_minibatches": count,
            "learning_rate": sqrt_scaled_rate(self.learning_rate, growth),
        }

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def optimizer_steps(self) -> int:
        return self.num_updates * self.update_epochs * self.num_minibatches

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
    """``num_epochs`` rounds of ``draw(key)`` (leaves [num_minibatches, minibatch, ...]), one
    optimiser step of ``loss_fn(params, minibatch) -> (float32[], aux)`` per minibatch (split
    over devices when a mesh is set) -> (params, opt_state, key, aux and ``grad_norm`` stacked
    float32[num_epochs, num_minibatches])."""

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
    """A ``draw`` for :func:`optimise`: a fresh permutation of ``data`` (leaves [N, ...]), then
    ``transform(key, batch)`` if given, cut into leaves [num_minibatches, N / num_minibatches,
    ...]."""
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
    """The train state (checkpointed as one pytree)."""

    params: Any
    opt_state: Any
    env_state: Any  # batched game states [num_envs]
    key: jax.Array  # uint32[2]
    update: jax.Array  # int32[] updates done


@dataclasses.dataclass(frozen=True)
class RolloutSetup:
    """What a rollout-then-learn algorithm builds from its config: the game, the network
    wrapper, the optimiser and the training games."""

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
        """One update's learning: ``update_epochs`` shuffled passes over ``data`` (leaves
        [num_steps, num_envs, ...]), or the minibatches of ``draw`` (:func:`optimise`) ->
        (next state with the rollout's ``env_state`` and ``key``, mean loss metrics)."""
        if draw is None:
            flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), data)
            draw = shuffled_minibatches(flat, config.num_minibatches)
        params, opt_state, key, aux = optimise(
            loss_fn, self.optimizer, state.params, state.opt_state, key, draw, config.update_epochs
        )
        learned = dict(params=params, opt_state=opt_state, env_state=env_state, key=key)
        state = state.replace(**learned, update=state.update + 1)
        return state, {k: v.mean() for k, v in aux.items()}

    def targets(
        self, config: RolloutConfig, params: Any, env_state: Any, traj: Any
    ) -> tuple[jax.Array, jax.Array]:
        """Negamax GAE (advantages, returns) float32[num_steps, num_envs] of a rollout ``traj``
        (reward, value, done, sign, plies), bootstrapped from the value of ``env_state``; a
        step of several plies (a partner's replies) is discounted once per ply."""
        _, last_value = self.agent.apply(params, batch_observation(env_state))
        t, c = traj, config
        later, gamma = per_ply_discount(c.gamma, t.plies)
        reward = t.reward * later
        return negamax_gae(reward, t.value, t.done, t.sign, last_value, gamma, c.gae_lambda)

    def algorithm(self, name: str, config: RolloutConfig, update: Callable, **fields) -> Algorithm:
        """The :class:`Algorithm` whose chunk runs ``update`` (init: :meth:`init` unless given)."""
        init = fields.pop("init", self.init)
        return chunked_algorithm(name, config, self.env, self.agent, init, update, **fields)


def play_plies(
    games: TrainingGames,
    act: Callable[[Any, jax.Array], tuple[jax.Array, Callable[[Any], Any]]],
    env_state: Any,
    key: jax.Array,
    num_steps: int,
) -> tuple[Any, jax.Array, Any, tuple[jax.Array, jax.Array, jax.Array]]:
    """``num_steps`` learner plies of every game: ``act(env_state, key) -> (action int32[B],
    record)`` and ``record(step)`` the transition of the :class:`SelfPlayStep` -> (env_state,
    key, transitions [num_steps, B], (done, first player's outcome, length) per ply)."""

    def ply(carry, _):
        env_state, key = carry
        key, k_act, k_reset = jax.random.split(key, 3)
        action, record = act(env_state, k_act)
        out = games.step(env_state, action, k_reset)
        return (out.state, key), (record(out), (out.done, out.outcome[:, 0], out.length))

    (env_state, key), (traj, stats) = jax.lax.scan(ply, (env_state, key), None, length=num_steps)
    return env_state, key, traj, stats


def make_setup(
    config: RolloutConfig,
    config_class: type = RolloutConfig,
    partners: Mapping[str, Any] | None = None,
) -> RolloutSetup:
    """:class:`RolloutSetup` of ``config`` (``TypeError`` unless a ``config_class``);
    ``partners``: the partner policies, ``None`` for stand-ins (:func:`make_training_games`)."""
    check_config_type(config, config_class)
    env, c = config.make_env(), config
    steps = c.optimizer_steps
    games = make_training_games(env, c.num_envs, c.partners, partners, c.max_opening_plies)
    return RolloutSetup(env, make_agent(config, env), make_optimizer(config, steps), games)
