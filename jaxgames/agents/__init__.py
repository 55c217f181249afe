"""Agents: networks, the training algorithms (PPO, DQN, Gumbel AlphaZero, winner imitation)
and play-time search.

    from jaxgames.agents import algorithm_module, presets
    config = presets.default_config("ppo", "tic_tac_toe")   # the game's preset
    train = algorithm_module("ppo").make_train(config)      # pure: jit it, vmap it over seeds

Algorithms are registered by name in :mod:`jaxgames.agents.registry`, their presets are data in
:mod:`jaxgames.agents.presets`. Trained agents are
loaded from run directories by :mod:`jaxgames.runs` (``jaxgames.load_policy``) and from the
package by :mod:`jaxgames.pretrained` (``jaxgames.load_pretrained``), layers above this one.
"""

from __future__ import annotations

from jaxgames.agents.common import Agent, NetworkPolicy
from jaxgames.agents.networks import make_network
from jaxgames.agents.registry import ALGORITHMS, algorithm_module

__all__ = ["ALGORITHMS", "Agent", "NetworkPolicy", "algorithm_module", "make_network"]
