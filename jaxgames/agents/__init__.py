"""Agents: networks, algorithms (PPO; DQN plugs in the same way) and trained-policy loading.

    policy = jaxgames.agents.load_policy("runs/ttt-ppo")      # greedy, legal moves only
    action = policy(key, state)                                # one state; jax.vmap(policy) for many
    policy.value(state)                                        # value estimate, mover's view

Adding an algorithm is one line in :data:`ALGORITHMS`: its module provides ``Config``,
``default_config(game, game_options=None, quick=False, **overrides)`` and
``make_algorithm(config) -> jaxgames.training.algorithm.Algorithm``; the run driver, the
CLI (``jaxgames train <name>``) and :func:`load_policy` then work for it.
"""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType
from typing import Any

from jaxgames.agents.common import Agent, Policy, random_policy
from jaxgames.agents.networks import make_network

# name -> module; modules are imported lazily.
ALGORITHMS: dict[str, str] = {
    "ppo": "jaxgames.agents.ppo",
    "dqn": "jaxgames.agents.dqn",
    "winner_imitation": "jaxgames.agents.winner_imitation",
    "alphazero": "jaxgames.agents.alphazero",
}


def algorithm_module(name: str) -> ModuleType:
    """The module implementing algorithm ``name``; ``ValueError`` naming the valid ones."""
    if name not in ALGORITHMS:
        raise ValueError(
            f"unknown algorithm {name!r}; valid algorithms: {', '.join(sorted(ALGORITHMS))}"
        )
    return importlib.import_module(ALGORITHMS[name])


@dataclasses.dataclass(frozen=True)
class LoadedAgent:
    """A trained agent read from a run directory.

    agent (network wrapper), params (pytree), env (the game it was trained on), config,
    algorithm (name) and chunk (the checkpoint it came from).
    """

    agent: Agent
    params: Any
    env: Any
    config: Any
    algorithm: str
    chunk: int

    def policy(self, greedy: bool = True) -> Policy:
        return self.agent.policy(self.params, greedy)


def load_agent(run_dir: str) -> LoadedAgent:
    """Read the newest readable checkpoint of the run in ``run_dir``.

    All errors are ``ValueError`` subclasses with a message naming the problem:
    ``RunNotFoundError`` (also a ``FileNotFoundError``) for a missing run directory or
    ``config.json``, ``ValueError`` for a corrupt ``config.json``,
    :class:`~jaxgames.training.checkpoint.CheckpointError` if the run has no usable checkpoint.
    """
    import os

    import jax

    from jaxgames.training.checkpoint import CheckpointError, CheckpointStore
    from jaxgames.training.driver import read_run_config

    name, config = read_run_config(run_dir)
    algo = algorithm_module(name).make_algorithm(config)
    ckpt_dir = os.path.join(run_dir, "checkpoints")
    if not os.path.isdir(ckpt_dir):
        raise CheckpointError(f"run {run_dir!r} has no checkpoints yet (no {ckpt_dir})")
    store = CheckpointStore(ckpt_dir, keep=config.keep_checkpoints)
    try:
        template = jax.eval_shape(algo.init, jax.random.PRNGKey(config.seed))
        restored = store.restore_latest(template)
    finally:
        store.close()
    if restored is None:
        raise CheckpointError(f"run {run_dir!r} has no checkpoints yet")
    chunk, state = restored
    return LoadedAgent(algo.agent, algo.params(state), algo.env, config, name, chunk)


def load_policy(run_dir: str, greedy: bool = True) -> Policy:
    """``policy(key, state) -> int32[] action`` of the run in ``run_dir`` (newest checkpoint).

    Works on one state and under ``jax.vmap``/``jit``; only legal moves. ``greedy=False``
    samples from the masked policy. ``policy.value(state)`` is the value estimate (float32[],
    from the mover's view). Errors as :func:`load_agent`.
    """
    return load_agent(run_dir).policy(greedy)


__all__ = [
    "ALGORITHMS",
    "Agent",
    "LoadedAgent",
    "Policy",
    "algorithm_module",
    "load_agent",
    "load_policy",
    "make_network",
    "random_policy",
]
