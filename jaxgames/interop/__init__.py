"""Adapters that run jaxgames games under other libraries' APIs.

* :mod:`jaxgames.interop.pettingzoo`: ``PettingZooEnv``, a PettingZoo AEC environment (one
  game, stepped on the host; needs the ``interop`` extra);
* :mod:`jaxgames.interop.pgx`: ``PgxEnv``, pgx's ``Env``/``State`` API over a jaxgames game
  (pure JAX, ``jit``/``vmap`` as usual; pgx itself is not needed).

Each submodule is imported on its own, so the core package never needs PettingZoo.
"""

from typing import Any

from jaxgames.core import Env
from jaxgames.games import make


def as_env(game: str | Env, options: dict[str, Any]) -> Env:
    """``game`` itself if it is an ``Env``, else ``make(game, **options)``; options given with
    an ``Env`` are a ``ValueError`` (they would be silently ignored)."""
    if isinstance(game, Env):
        if options:
            raise ValueError("give game options only with a game name, not with an Env")
        return game
    return make(game, **options)
