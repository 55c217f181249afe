"""Adapters that run jaxgames games under other libraries' APIs.

* :mod:`jaxgames.interop.pettingzoo`: ``PettingZooEnv``, a PettingZoo AEC environment (one
  game, stepped on the host; needs the ``interop`` extra);
* :mod:`jaxgames.interop.pgx`: ``PgxEnv``, pgx's ``Env``/``State`` API over a jaxgames game
  (pure JAX, ``jit``/``vmap`` as usual; pgx itself is not needed).

Each submodule is imported on its own, so the core package never needs PettingZoo.
"""
