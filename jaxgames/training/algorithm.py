"""The interface between an algorithm (PPO, DQN, ...) and the shared run driver.

An algorithm module (e.g. :mod:`jaxgames.agents.ppo`) registered in
:data:`jaxgames.agents.ALGORITHMS` exposes

* ``Config``: a :class:`~jaxgames.training.config.TrainConfig` subclass,
* ``default_config(game, game_options=None, quick=False) -> Config`` (per-game defaults),
* ``make_algorithm(config) -> Algorithm``.

The driver never looks inside the train state: ALL mutable training state (parameters,
optimiser state, environments, replay buffers, the PRNG key, counters) lives in one pytree,
so a chunk is a pure function and a restored checkpoint continues bit-exactly.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax

from jaxgames.agents.common import Agent


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
                                      ``'data'``); ``None``: :func:`jaxgames.distributed.default_partition`
                                      (leaves under ``env_state`` split on their leading axis,
                                      everything else replicated)
    """

    name: str
    config: Any
    env: Any
    agent: Agent
    init: Callable[[jax.Array], Any]
    chunk: Callable[[Any], tuple[Any, dict[str, jax.Array]]]
    params: Callable[[Any], Any]
    partition: Callable[[Any], Any] | None = None

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
