"""Game registry: ``make(name, **options)`` builds an :class:`~jaxgames.core.Env`.

Each game lives in its own module of small pure functions plus a thin ``Env`` subclass.
Modules are imported lazily so that ``import jaxgames`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from jaxgames.core import Env, check_options

# name -> "module:EnvClass"; adding a game is one line here.
_REGISTRY: dict[str, str] = {
    "animal_shogi": "jaxgames.games.animal_shogi:AnimalShogi",
    "tic_tac_toe": "jaxgames.games.tic_tac_toe:TicTacToe",
    "reversi": "jaxgames.games.reversi:Reversi",
}


def registered_games() -> list[str]:
    """Names accepted by :func:`make`, sorted."""
    return sorted(_REGISTRY)


def env_class(name: str) -> type[Env]:
    """The Env subclass registered under ``name``; ``ValueError`` naming the valid games."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown game {name!r}; valid games: {', '.join(registered_games())}")
    module, cls = _REGISTRY[name].split(":")
    return getattr(importlib.import_module(module), cls)


def check_game(name: str, options: dict[str, Any]) -> None:
    """``ValueError`` for an unknown game, an unknown option or a bad option value, without
    building the env (configs call it on every change)."""
    cls = env_class(name)
    check_options(cls, options, name)
    cls.validate_options(**options)


def make(name: str, **options: Any) -> Env:
    """Build the game ``name`` with its ``options`` (e.g. ``make("reversi", size=6)``).

    Raises ``ValueError`` for an unknown game, an unknown option or a bad option value.
    """
    cls = env_class(name)
    check_options(cls, options, name)
    return cls(**options)
