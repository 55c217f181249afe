"""pgx's ``Env``/``State`` API over a jaxgames game, so code written for pgx runs on it.

    from jaxgames.interop.pgx import PgxEnv

    env = PgxEnv(jaxgames.make("reversi", size=6))   # or PgxEnv("reversi", size=6)
    state = jax.vmap(env.init)(keys)
    state = jax.vmap(env.step)(state, actions)          # pgx's step(state, action, key=None)

Pure JAX; pgx is not needed. A :class:`PgxState` holds pgx's fields computed from the jaxgames
state it wraps (``state.game``); they differ from jaxgames' in that ``observation`` is a stored
field (float32 planes), ``legal_action_mask`` is all True once the game is over (so a masked
softmax never divides by zero), ``_step_count`` is pgx's name of ``step_count`` and ``env_id``
names the variant (``"reversi_size6"``). Actions are the jaxgames ids (pgx's for tic-tac-toe
and 8x8 othello).
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
        self._id = f"{self.game.name}{opts}"

    def view(self, state: GameState) -> PgxState:
        """The pgx view of a jaxgames state."""
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
