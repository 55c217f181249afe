"""Game registry: ``make(name, **options)`` builds an :class:`~jaxgames.core.Env`.

Each game lives in its own module (or package) of small pure functions plus a thin ``Env``
subclass (the contract is in :mod:`jaxgames.core`). Modules are imported lazily so that
``import jaxgames`` stays cheap.

This is the one list of games: tests, renderers and experiments that go over "every game"
read it (:func:`registered_games`, :func:`game_variants`) rather than naming games by hand.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any, NamedTuple

from jaxgames.core import Env, check_options


class GameEntry(NamedTuple):
    """One registered game.

    env:      ``"module:EnvClass"``
    variants: the option sets the game is tested and studied at (``make(name, **options)``),
              e.g. reversi on 6x6 and 8x8; ``({},)`` = the defaults only
    """

    env: str
    variants: tuple[dict[str, Any], ...] = ({},)


# name -> entry, in the order games are listed (tests, experiment defaults); adding a game is
# one line here.
_REGISTRY: dict[str, GameEntry] = {
    "tic_tac_toe": GameEntry("jaxgames.games.tic_tac_toe:TicTacToe"),
    "reversi": GameEntry("jaxgames.games.reversi:Reversi", ({"size": 6}, {"size": 8})),
    "animal_shogi": GameEntry("jaxgames.games.animal_shogi:AnimalShogi"),
}


def registered_games() -> list[str]:
    """Names accepted by :func:`make`, sorted."""
    return sorted(_REGISTRY)


def game_variants(name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(name, options)`` of every variant of every game (of ``name`` only if given), in
    registry order: ``[("tic_tac_toe", {}), ("reversi", {"size": 6}), ("reversi", {"size": 8}),
    ("animal_shogi", {})]``. Each ``options`` is a fresh dict."""
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
    if name not in _REGISTRY:
        raise ValueError(f"unknown game {name!r}; valid games: {', '.join(registered_games())}")
    module, cls = _REGISTRY[name].env.split(":")
    return getattr(importlib.import_module(module), cls)


def check_game(name: str, options: dict[str, Any]) -> None:
    """``ValueError`` for an unknown game, an unknown option or a bad option value, without
    building the env (configs call it on every change)."""
    cls = env_class(name)
    check_options(cls, options, name)
    cls.validate_options(**options)


def game_module(name: str) -> ModuleType:
    """The module (or package) of game ``name``, holding its pure functions ``init(spec)``,
    ``step(spec, state, action)``, ``heuristic(spec, state)`` and ``board_view(spec, state)``
    (call them with ``env.spec``); ``ValueError`` naming the valid games."""
    env_class(name)
    return importlib.import_module(_REGISTRY[name].env.split(":")[0])


def make(name: str, **options: Any) -> Env:
    """Build the game ``name`` with its ``options`` (e.g. ``make("reversi", size=6)``).

    Raises ``ValueError`` for an unknown game, an unknown option or a bad option value.
    """
    cls = env_class(name)
    check_options(cls, options, name)
    return cls(**options)


@functools.lru_cache(maxsize=32)
def shared_env(name: str, **options: Any) -> Env:
    """``make(name, **options)`` built once per game and options and then shared: for host-side
    helpers that need some env of a state's game (a state drawing itself in a notebook).
    Treat it as read-only."""
    return make(name, **options)
