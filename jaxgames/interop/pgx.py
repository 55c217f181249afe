"""pgx's ``Env``/``State`` API over a jaxgames game (``PgxEnv("reversi", size=6)``), pure JAX.

A :class:`PgxState` holds pgx's fields computed from the jaxgames state it wraps
(``state.game``): ``observation`` is a stored field, ``legal_action_mask`` is all True once
the game is over (a masked softmax never divides by zero), ``env_id`` names the variant
(``"jaxgames_reversi_size6"``). Actions are the jaxgames ids (pgx's for tic-tac-toe and 8x8
othello).
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
    """pgx's ``Env`` interface over a game (a name with ``options``, or an ``Env``)."""

    def __init__(self, game: str | Env = "tic_tac_toe", **options: Any):
        self.game = as_env(game, options)
        opts = "".join(f"_{k}{v}" for k, v in sorted(self.game.config.items()))
        # never one of pgx's own ids (pgx code dispatches on them: "tic_tac_toe" is pgx's)
        self._id = f"jaxgames_{self.game.name}{opts}"

    def view(self, state: GameState) -> PgxState:
        """The pgx view of a jaxgames state."""
        s, over = state, state.terminated | state.truncated
        mask = s.legal_action_mask | over[..., None]
        fields = (s.current_player, s.observation, s.rewards, s.terminated, s.truncated, mask)
        return PgxState(*fields, s.step_count, game=s, env_id=self._id)

    def init(self, key: jax.Array) -> PgxState:
        return self.view(self.game.init(key))

    def step(self, state: PgxState, action: jax.Array, key: jax.Array | None = None) -> PgxState:
        """pgx's ``step``; ``key`` is unused (the games are deterministic)."""
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
        """pgx's version of the rules."""
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
