"""jaxgames: board games as pure JAX functions, and agents that learn them on device.

    env = jaxgames.make("reversi", size=6)
    state = env.step(env.init(key), action)
    policy = jaxgames.load_pretrained("reversi8")   # policy(key, state) -> action

The names below load on first use (a module ``__getattr__``), so importing the package or its
command line does not import JAX: the command line takes charge of Ctrl-C first.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"  # the one place it is written (pyproject.toml reads it)

_FROM_CORE = (
    "AutoResetStep",
    "Env",
    "GameState",
    "IllegalActionError",
    "Policy",
    "random_action",
    "random_policy",
    "step_autoreset",
)
_FROM_GAMES = ("game_variants", "make", "registered_games")
_FROM_RUNS = ("load_agent", "load_policy")
_FROM_PRETRAINED = ("load_pretrained", "pretrained_names")

__all__ = sorted(_FROM_CORE + _FROM_GAMES + _FROM_RUNS + _FROM_PRETRAINED)


def __getattr__(name: str) -> Any:
    if name in _FROM_CORE:
        from jaxgames import core

        return getattr(core, name)
    if name in _FROM_GAMES:
        from jaxgames import games

        return getattr(games, name)
    if name in _FROM_RUNS:
        from jaxgames import runs

        return getattr(runs, name)
    if name in _FROM_PRETRAINED:
        from jaxgames import pretrained

        return getattr(pretrained, name)
    try:  # a submodule not imported yet: ``import jaxgames; jaxgames.games.make(...)``
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
