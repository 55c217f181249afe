"""jaxgames: board games as pure JAX functions, and agents that learn them on device.

import jaxgames
env = jaxgames.make("reversi", size=6)
state = env.init(key)
state = env.step(state, action)
"""

from jaxgames.core import (
    AutoResetStep,
    Env,
    GameState,
    IllegalActionError,
    random_action,
    random_policy,
    step_autoreset,
)
from jaxgames.games import game_variants, make, registered_games

__version__ = "0.1.0"

__all__ = [
    "AutoResetStep",
    "Env",
    "GameState",
    "IllegalActionError",
    "game_variants",
    "make",
    "random_action",
    "random_policy",
    "registered_games",
    "step_autoreset",
]
