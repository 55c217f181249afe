"""The interface between an algorithm (PPO, DQN, ...) and the shared run driver.

An algorithm module registered in :data:`jaxgames.agents.ALGORITHMS` exposes ``Config`` (a
:class:`~jaxgames.agents.config.TrainConfig`) and ``make_algorithm(config, partners=None) ->
Algorithm``; ``partners`` maps the specs of ``config.partners`` to policies (``None``:
stand-ins, enough to restore and act). ALL mutable training state lives in one pytree, so a
chunk is a pure function and a restored checkpoint continues bit-exactly.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import optax

from jaxgames.agents.common import Agent
from jaxgames.agents.networks import make_network
from jaxgames.core import feature_function


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """What the driver needs to run, checkpoint, evaluate and reload an algorithm.

    init(key) -> state; chunk(state) -> (state, float32[] metrics of ``updates_per_chunk``
    updates), pure and jittable; params(state): the acting network's parameters;
    partition(state) -> PartitionSpecs on the ``'data'`` mesh axis (``None``:
    :func:`jaxgames.distributed.default_partition`); with_params(state, params) -> state with
    every copy of the parameters replaced (``None``: ``state.replace(params=...)``), to start
    from a trained agent (``config.init_from``).
    """

    name: str
    config: Any
    env: Any
    agent: Agent
    init: Callable[[jax.Array], Any]
    chunk: Callable[[Any], tuple[Any, dict[str, jax.Array]]]
    params: Callable[[Any], Any]
    partition: Callable[[Any], Any] | None = None
    with_params: Callable[[Any, Any], Any] | None = None

    def start_from(self, state: Any, params: Any) -> Any:
        """``state`` with the network's parameters set to ``params``."""
        if self.with_params is not None:
            return self.with_params(state, params)
        return state.replace(params=params)

    @property
    def num_chunks(self) -> int:
        return self.config.num_updates // self.config.updates_per_chunk

    @property
    def steps_per_chunk(self) -> int:
        return self.config.updates_per_chunk * self.config.steps_per_update

    @property
    def total_steps(self) -> int:
        """Environment steps of the whole run (``total_steps`` rounded to whole chunks)."""
        return self.num_chunks * self.steps_per_chunk

    def make_train(self) -> Callable[[jax.Array], tuple[Any, dict[str, jax.Array]]]:
        """``train(key) -> (state, metrics [num_chunks])``: the whole run as one pure function
        (jit it, or vmap it over seeds)."""

        def train(key):
            state = self.init(key)
            return jax.lax.scan(lambda s, _: self.chunk(s), state, None, length=self.num_chunks)

        return train


def check_standalone(config: Any, partners: Mapping[str, Any] | None) -> None:
    """``make_train(config, partners)`` runs what it is given, so the config fields that only
    the run driver (:func:`jaxgames.training.run_training`) applies are refused here rather
    than dropped: training partners named by spec without their policies (they would play at
    random; ``random`` itself needs none), and ``init_from`` (the driver loads that agent).
    ``eval_games``, ``seed`` (the driver's ``PRNGKey(seed)``; ``train(key)`` takes its key)
    and the checkpoint fields are the driver's: ``make_train`` returns the training metrics
    alone."""
    if partners is None and any(spec != "random" for spec in config.partners):
        raise ValueError(
            f"config.partners={dict(config.partners)!r} names opponents that make_train cannot "
            "build itself; pass their policies, make_train(config, partners=jaxgames.specs."
            "make_partners(config.partners, config.make_env())), or train with "
            "jaxgames.training.run_training"
        )
    if config.init_from:
        raise ValueError(
            f"config.init_from={config.init_from!r}: make_train starts from a fresh network; "
            "jaxgames.training.run_training starts from that agent"
        )


# ----------------------------------------------------------------------------- shared building
def check_config_type(config: Any, config_class: type) -> None:
    """``TypeError`` unless ``config`` is a ``config_class`` (the algorithm's own config)."""
    if not isinstance(config, config_class):
        raise TypeError(
            f"make_algorithm expects a config of type {config_class.__name__}, "
            f"got {type(config).__name__}"
        )


def make_agent(config: Any, env: Any, agent_class: type[Agent] = Agent) -> Agent:
    """The network wrapper of ``config`` (network, net, features) for ``env``."""
    network = make_network(config.network, env.num_actions, **config.net)
    features = feature_function(env, config.features)
    return agent_class(network, tuple(env.observation_shape), features)


def make_optimizer(config: Any, num_steps: int) -> optax.GradientTransformation:
    """Adam after global-norm clipping; with ``anneal_lr`` the learning rate decays linearly to 0
    over ``num_steps`` optimiser steps."""
    lr: Any = config.learning_rate
    if config.anneal_lr:
        lr = optax.linear_schedule(config.learning_rate, 0.0, num_steps)
    return optax.chain(
        optax.clip_by_global_norm(config.max_grad_norm), optax.adam(lr, eps=config.adam_eps)
    )


def make_chunk(
    update: Callable[[Any, Any], tuple[Any, dict[str, jax.Array]]],
    updates_per_chunk: int,
    finish: Callable[[Any, dict[str, jax.Array], dict[str, jax.Array]], tuple[Any, dict]]
    | None = None,
) -> Callable[[Any], tuple[Any, dict[str, jax.Array]]]:
    """``chunk(state) -> (state, mean metrics)``: ``updates_per_chunk`` updates in one
    ``lax.scan``; ``finish(state, stacked, means) -> (state, metrics)`` may add chunk-level
    metrics from the stacked ones."""

    def chunk(state: Any) -> tuple[Any, dict[str, jax.Array]]:
        state, stacked = jax.lax.scan(update, state, None, length=updates_per_chunk)
        means = jax.tree_util.tree_map(jnp.mean, stacked)
        return (state, means) if finish is None else finish(state, stacked, means)

    return chunk


def chunked_algorithm(
    name: str, config: Any, env: Any, agent: Agent, init: Callable, update: Callable, **fields: Any
) -> Algorithm:
    """The :class:`Algorithm` whose chunk runs ``update`` (:func:`make_chunk`; ``finish`` among
    ``fields``, the rest :class:`Algorithm` fields) and whose network is ``state.params``."""
    chunk = make_chunk(update, config.updates_per_chunk, fields.pop("finish", None))
    return Algorithm(name, config, env, agent, init, chunk, _params, **fields)


def _params(state: Any) -> Any:
    return state.params
