"""The interface between an algorithm (PPO, DQN, ...) and the shared run driver.

An algorithm module (e.g. :mod:`jaxgames.agents.ppo`) registered in
:data:`jaxgames.agents.ALGORITHMS` exposes

* ``Config``: a :class:`~jaxgames.agents.config.TrainConfig` subclass (its per-game presets
  are data: :mod:`jaxgames.agents.presets`),
* ``make_algorithm(config, partners=None) -> Algorithm``: ``partners`` maps each opponent spec
  of ``config.partners`` to its policy (the run driver resolves them with
  :func:`jaxgames.specs.make_partners`); ``None`` builds the algorithm to restore and act
  only (stand-in partners: the train state's structure does not depend on who they are).

The helpers below are the one way every algorithm builds its network wrapper
(:func:`make_agent`), its optimiser (:func:`make_optimizer`), checks its config type
(:func:`check_config_type`) and loops its updates into a chunk (:func:`make_chunk`).

The driver never looks inside the train state: ALL mutable training state (parameters,
optimiser state, environments, replay buffers, the PRNG key, counters) lives in one pytree,
so a chunk is a pure function and a restored checkpoint continues bit-exactly.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax
import jax.numpy as jnp
import optax

from jaxgames.agents.common import Agent
from jaxgames.agents.networks import make_network
from jaxgames.core import feature_function


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """What the driver needs to run, checkpoint, evaluate and reload an algorithm.

    init(key) -> train_state          pure; key: PRNGKey (uint32[2])
    chunk(train_state) -> (train_state, metrics)
                                      pure and jittable; runs ``updates_per_chunk`` updates and
                                      returns float32[] metrics (means over the chunk)
    params(train_state) -> params     the acting network's parameters (for evaluation/policies)
    agent:                            the network wrapper that turns params into a Policy
    num_chunks, steps_per_chunk:      the run is ``num_chunks`` chunks of ``steps_per_chunk``
                                      environment steps (derived from the config's
                                      ``num_updates``, ``updates_per_chunk``, ``steps_per_update``)
    partition(train_state) -> pytree of jax.sharding.PartitionSpec (optional)
                                      how the state is laid out on a device mesh (axis
                                      ``'data'``); ``None``:
                                      :func:`jaxgames.distributed.default_partition` (leaves
                                      under ``env_state`` split on their leading axis,
                                      everything else replicated)
    with_params(train_state, params) -> train_state (optional)
                                      the state with its network's parameters replaced (every
                                      copy: e.g. DQN's target network too); ``None``:
                                      ``train_state.replace(params=params)``. Used to start a
                                      run from a trained agent (``config.init_from``)
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
        """``state`` with the network's parameters set to ``params`` (see ``with_params``)."""
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
        """``train(key) -> (final train_state, metrics stacked over chunks [num_chunks])``:
        the whole run as one pure function (jit it, or vmap it over seeds)."""

        def train(key):
            state = self.init(key)
            return jax.lax.scan(lambda s, _: self.chunk(s), state, None, length=self.num_chunks)

        return train


# ----------------------------------------------------------------------------- shared building
def check_config_type(config: Any, config_class: type) -> None:
    """``TypeError`` unless ``config`` is a ``config_class`` (the algorithm's own config)."""
    if not isinstance(config, config_class):
        raise TypeError(
            f"make_algorithm expects a config of type {config_class.__name__}, "
            f"got {type(config).__name__}"
        )


def make_agent(config: Any, env: Any, agent_class: type[Agent] = Agent) -> Agent:
    """The network wrapper of ``config`` (``config.network`` with options ``config.net``, fed
    the input features ``config.features``) for ``env``'s actions and observations."""
    network = make_network(config.network, env.num_actions, **config.net)
    features = feature_function(env, config.features)
    return agent_class(network, tuple(env.observation_shape), features)


def make_optimizer(config: Any, num_steps: int) -> optax.GradientTransformation:
    """Adam (``config.adam_eps``) after global-norm clipping (``config.max_grad_norm``); with
    ``config.anneal_lr`` the learning rate decays linearly to 0 over ``num_steps`` optimiser
    steps (the run's total)."""
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
    """``chunk(state) -> (state, metrics)``: ``updates_per_chunk`` updates in one ``lax.scan``,
    metrics averaged over them (float32[] each). ``finish(state, stacked, means) -> (state,
    metrics)`` may add chunk-level metrics (sums, an evaluation) from the stacked per-update
    metrics ``[updates_per_chunk]``."""

    def chunk(state: Any) -> tuple[Any, dict[str, jax.Array]]:
        state, stacked = jax.lax.scan(update, state, None, length=updates_per_chunk)
        means = jax.tree_util.tree_map(jnp.mean, stacked)
        return (state, means) if finish is None else finish(state, stacked, means)

    return chunk
