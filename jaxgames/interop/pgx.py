"""pgx's ``Env``/``State`` API over a jaxgames game, so code written for pgx runs on it.

    from jaxgames.interop.pgx import PgxEnv

    env = PgxEnv(jaxgames.make("reversi", size=6))   # or PgxEnv("reversi", size=6)
    state = jax.vmap(env.init)(keys)
    state = jax.vmap(env.step)(state, actions)          # pgx's step(state, action, key=None)

Pure JAX like the game itself (``jit``/``vmap``/``scan``); pgx is not needed. A
:class:`PgxState` carries pgx's state fields, computed from the jaxgames state it wraps
(``state.game``):

* ``current_player``, ``rewards`` (float32[2] by player, final step only), ``terminated``,
  ``truncated``: the same as jaxgames';
* ``observation``: a stored field, as in pgx (jaxgames computes it in a property); float32 0/1
  planes from the mover's side (pgx's tic-tac-toe has bool planes);
* ``legal_action_mask``: all **True** once the game is over, as in pgx (so a masked softmax
  never divides by zero); jaxgames' own mask is all False then;
* ``_step_count``: pgx's (private) name of jaxgames' ``step_count`` (also an alias here);
* ``env_id``: the game's name and options, e.g. ``"reversi_size6"``.

The rules agree with pgx's: an illegal action ends the game with -1 for the mover and +1 for
the opponent, and stepping a finished game returns it with zero rewards.
``env.observe(state, player_id)`` gives any player's view (pgx deprecates the argument; here it
is :meth:`jaxgames.core.Env.observe`). Actions are the jaxgames ids (``docs/api.md``): for
tic-tac-toe and reversi 8x8 they are pgx's ``tic_tac_toe`` and ``othello`` ids.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxgames.core import Env, GameState
from jaxgames.interop import as_env


@struct.dataclass
class PgxState:
    """A pgx ``State``: pgx's field names over one jaxgames state (``game``)."""

    current_player: jax.Array
    observation: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    legal_action_mask: jax.Array
    _step_count: jax.Array
    game: Any  # the jaxgames state; stepping uses it, the fields above are read from it
    env_id: str = struct.field(pytree_node=False, default="")

    @property
    def step_count(self) -> jax.Array:
        return self._step_count


class PgxEnv:
    """pgx's ``Env`` interface (``init``, ``step``, ``observe``, ``id``, ``version``,
    ``num_players``, ``num_actions``, ``observation_shape``) over a jaxgames ``Env``.

    game: a registered name (``options`` go to :func:`jaxgames.make`) or an ``Env``.
    """

    def __init__(self, game: str | Env = "tic_tac_toe", **options: Any):
        self.game = as_env(game, options)
        opts = "".join(f"_{k}{v}" for k, v in sorted(self.game.config.items()))
        self._id = f"{self.game.name}{opts}"

    def view(self, state: GameState) -> PgxState:
        """The pgx view of a jaxgames state (one state, or a batch under ``vmap``)."""
        over = state.terminated | state.truncated
        return PgxState(
            current_player=state.current_player,
            observation=state.observation,
            rewards=state.rewards,
            terminated=state.terminated,
            truncated=state.truncated,
            legal_action_mask=state.legal_action_mask | over[..., None],
            _step_count=state.step_count,
            game=state,
            env_id=self._id,
        )

    def init(self, key: jax.Array) -> PgxState:
        return self.view(self.game.init(key))

    def step(self, state: PgxState, action: jax.Array, key: jax.Array | None = None) -> PgxState:
        """pgx's ``step(state, action, key=None)``; the games are deterministic, so ``key`` is
        accepted and unused."""
        del key
        return self.view(self.game.step(state.game, action))

    def observe(self, state: PgxState, player_id: jax.Array | None = None) -> jax.Array:
        """float32[observation_shape] from ``player_id``'s side (default: the player to move)."""
        if player_id is None:
            return state.observation
        return self.game.observe(state.game, jnp.asarray(player_id, jnp.int32))

    @property
    def id(self) -> str:
        return self._id

    @property
    def version(self) -> str:
        """pgx versions each game's rules; jaxgames' rules have had one version so far."""
        return "v0"

    @property
    def num_players(self) -> int:
        return self.game.num_players

    @property
    def num_actions(self) -> int:
        return self.game.num_actions

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return tuple(self.game.observation_shape)
