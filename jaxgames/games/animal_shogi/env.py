"""``jaxgames.make("animal_shogi", max_steps=256)``: the ``Env`` of animal shogi."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, check_one_game
from jaxgames.games.animal_shogi import notation, rules
from jaxgames.games.animal_shogi.rules import AnimalShogiSpec, AnimalShogiState
from jaxgames.validation import quote
from jaxgames.view import BoardView

#: the longest game-length cap: every state holds a ``uint32[max_steps, 2]`` position history,
#: so the cap is memory in every game of a batch
MAX_STEPS = 2**16


class AnimalShogi(Env):
    """``jaxgames.make("animal_shogi", max_steps=256)`` (the package docstring has the rules)."""

    name = "animal_shogi"
    rules_version = 1  # raise on any change to how a game plays out (core.Env)
    side_names = notation.SIDE_NAMES
    flip_for_second = True
    input_features = {"attacks": rules.attack_features}

    @classmethod
    def validate_options(cls, max_steps: int = 256) -> None:
        if (
            isinstance(max_steps, bool)
            or not isinstance(max_steps, (int, np.integer))
            or not 1 <= max_steps <= MAX_STEPS
        ):
            raise ValueError(
                f"invalid max_steps={max_steps!r}: must be an integer in 1..{MAX_STEPS} (plies "
                "before truncation)"
            )

    def __init__(self, max_steps: int = 256) -> None:
        self.validate_options(max_steps)
        self.max_steps = int(max_steps)
        self.spec = AnimalShogiSpec(self.max_steps)

    num_actions = rules.NUM_ACTIONS  # type: ignore[assignment]
    observation_shape = (4, 3, rules.OBS_PLANES)  # type: ignore[assignment]

    @property
    def config(self):
        return {"max_steps": self.max_steps}

    @property
    def symmetries(self):
        """The identity and the left-right mirror (:func:`rules.mirror_symmetries`)."""
        return rules.mirror_symmetries()

    @property
    def max_game_length(self) -> int:
        """``max_steps``: a game still running then is truncated."""
        return self.max_steps

    def _init(self, key):
        return rules.init_jit(self.spec)

    def _step(self, state, action):
        return rules.step(self.spec, state, action)

    def heuristic(self, state: AnimalShogiState) -> jax.Array:
        return rules.heuristic(self.spec, state)

    def board_view(self, state: AnimalShogiState) -> BoardView:
        return notation.board_view(self.spec, state)

    def to_text(self, state: AnimalShogiState) -> str:
        check_one_game(state, "env.to_text")
        # a draw by repetition or an illegal move: the only ends the position does not show
        unseen_end = bool(state.terminated) and int(state.winner) < 0
        return notation.position_text(
            np.asarray(state.board),
            np.asarray(state.hand),
            int(state.current_player),
            int(state.step_count),
            game_over=unseen_end,
        )

    def from_text(self, text: str) -> AnimalShogiState:
        board, hand, player, step_count, over = notation.parse_position(
            self.spec, text, with_game_over=True
        )
        state = rules.make_state_jit(self.spec, board, hand, player, step_count)
        if over and not bool(state.terminated):
            state = state.replace(
                terminated=jnp.bool_(True),
                truncated=jnp.bool_(False),
                legal_action_mask=jnp.zeros_like(state.legal_action_mask),
            )
        return state

    def action_to_text(self, state: AnimalShogiState, action: int) -> str:
        check_one_game(state, "env.action_to_text")
        return notation.action_text(action, int(state.current_player))

    def text_to_action(self, state: AnimalShogiState, text: str) -> int:
        action, why = notation.parse_move(state, text)
        s = quote(text.strip())
        if bool(state.terminated) or bool(state.truncated):
            raise ValueError(f"illegal move {s}: the game is over")
        if not bool(state.legal_action_mask[action]):
            raise ValueError(f"illegal move {s}: {why}; legal: {self.describe_legal(state)}")
        return action
