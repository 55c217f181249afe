"""The training algorithms by name: ``jaxgames train <name>`` and run directories use it.

Adding an algorithm is one line in :data:`ALGORITHMS` and its presets in
:data:`jaxgames.agents.presets.PRESETS`: its module provides ``Config`` and
``make_algorithm(config, partners=None) -> jaxgames.agents.algorithm.Algorithm``; the run
driver, the CLI and :func:`jaxgames.runs.load_policy` then work for it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# name -> module; imported on first use (a plugin table, like the games registry)
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
