"""Agents: networks, the training algorithms (PPO, DQN, Gumbel AlphaZero, winner imitation),
play-time search, and trained-policy loading.

    policy = jaxgames.agents.load_policy("runs/ttt-ppo")  # greedy, legal moves only
    action = policy(key, state)                            # one state; jax.vmap(policy) for many
    policy.value(state)                                    # value estimate, mover's view
    jaxgames.agents.load_pretrained("tic_tac_toe")         # an agent shipped in the package

Algorithms are registered by name in :mod:`jaxgames.agents.registry`. The loaders of run
directories live one layer up, in :mod:`jaxgames.runs`, and of the shipped agents in
:mod:`jaxgames.pretrained`; they are re-exported here on first use (a module
``__getattr__``), so that importing a network does not load the checkpoint machinery and no
import runs upwards at load time.
"""

from __future__ import annotations

from typing import Any

from jaxgames.agents.common import Agent, Policy, random_policy
from jaxgames.agents.networks import make_network
from jaxgames.agents.registry import ALGORITHMS, algorithm_module

_FROM_RUNS = ("LoadedAgent", "load_agent", "load_policy")
_FROM_PRETRAINED = ("load_pretrained", "pretrained_names")


def __getattr__(name: str) -> Any:
    if name in _FROM_RUNS:
        import jaxgames.runs  # deferred: jaxgames.runs sits above the agents (see docstring)

        return getattr(jaxgames.runs, name)
    if name in _FROM_PRETRAINED:
        import jaxgames.pretrained  # deferred, as jaxgames.runs

        return getattr(jaxgames.pretrained, name)
    raise AttributeError(f"module 'jaxgames.agents' has no attribute {name!r}")


__all__ = [
    "ALGORITHMS",
    "Agent",
    "LoadedAgent",
    "Policy",
    "algorithm_module",
    "load_agent",
    "load_policy",
    "load_pretrained",
    "make_network",
    "pretrained_names",
    "random_policy",
]
