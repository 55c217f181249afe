"""Adapters to other libraries' APIs, each imported on its own: ``pettingzoo.PettingZooEnv``
(an AEC environment, one game on the host; the ``interop`` extra) and ``pgx.PgxEnv`` (pgx's
``Env``/``State`` API, pure JAX; pgx not needed)."""

from typing import Any

from jaxgames.core import Env
from jaxgames.games import make


def as_env(game: str | Env, options: dict[str, Any]) -> Env:
    """``game`` if it is an ``Env`` (then ``options`` are a ``ValueError``), else
    ``make(game, **options)``."""
    if isinstance(game, Env):
        if options:
            raise ValueError("give game options only with a game name, not with an Env")
        return game
    return make(game, **options)
