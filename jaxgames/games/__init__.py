"""The game registry, the one list of games: ``make(name, **options)`` builds an
:class:`~jaxgames.core.Env` (contract in :mod:`jaxgames.core`); tests and experiments that go
over every game read :func:`registered_games` / :func:`game_variants`. Game modules are
imported lazily."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any, NamedTuple

from jaxgames.core import Env, check_options


class GameEntry(NamedTuple):
    """One game: ``env`` is ``"module:EnvClass"``, ``variants`` the option sets it is tested
    and studied at (``({},)``: the defaults)."""

    env: str
    variants: tuple[dict[str, Any], ...] = ({},)


# name -> entry, in listing order; adding a game is one line here
_REGISTRY: dict[str, GameEntry] = {
    "tic_tac_toe": GameEntry("jaxgames.games.tic_tac_toe:TicTacToe"),
    "reversi": GameEntry("jaxgames.games.reversi:Reversi", ({"size": 6}, {"size": 8})),
    "animal_shogi": GameEntry("jaxgames.games.animal_shogi:AnimalShogi"),
}


def registered_games() -> list[str]:
    """Names accepted by :func:`make`, sorted."""
    return sorted(_REGISTRY)


def game_variants(name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(name, options)`` of every variant of every game (of ``name`` if given) in registry
    order, e.g. ``("reversi", {"size": 6})``; each ``options`` a fresh dict."""
    if name is not None:
        env_class(name)  # ValueError naming the valid games
    return [
        (game, dict(options))
        for game, entry in _REGISTRY.items()
        if name is None or game == name
        for options in entry.variants
    ]


def env_class(name: str) -> type[Env]:
    """The Env subclass registered under ``name``; ``ValueError`` naming the valid games."""
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"unknown game {name!r}; valid games: {', '.join(registered_games())}")
    module, cls = _REGISTRY[name].env.split(":")
    return getattr(importlib.import_module(module), cls)


def check_game(name: str, options: dict[str, Any]) -> None:
    """``ValueError`` for an unknown game, option or option value, without building the env."""
    cls = env_class(name)
    check_options(cls, options, name)
    cls.validate_options(**options)


def game_module(name: str) -> ModuleType:
    """The module of game ``name`` with its pure functions ``init``, ``step``, ``heuristic``
    and ``board_view`` (spec first: ``env.spec``); ``ValueError`` naming the valid games."""
    env_class(name)
    return importlib.import_module(_REGISTRY[name].env.split(":")[0])


def make(name: str, **options: Any) -> Env:
    """The game ``name`` with ``options`` (``make("reversi", size=6)``); ``ValueError`` for an
    unknown game, option or option value."""
    cls = env_class(name)
    check_options(cls, options, name)
    return cls(**options)


@functools.lru_cache(maxsize=32)
def shared_env(name: str, **options: Any) -> Env:
    """``make(name, **options)`` built once and shared (read-only), for host-side helpers such
    as a state drawing itself."""
    return make(name, **options)
