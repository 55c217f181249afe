"""A jaxgames game as a PettingZoo AEC environment (``PettingZooEnv("reversi", size=6)``).

For compatibility, not speed: one game, each move one jitted ``env.step`` and a copy to the
host. The conventions of PettingZoo's classic environments: agents ``player_0`` (moves first)
and ``player_1``; ``observe(agent)`` is ``{"observation": its view, "action_mask":
int8[num_actions]}`` (zeros but for the agent to move); rewards on the final move; an illegal
action ends the game with -1 for the mover. Needs ``pip install 'jaxgames[interop]'``.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxgames.core import Env, action_index
from jaxgames.interop import as_env
from jaxgames.validation import check_choice, require

_pettingzoo = require("pettingzoo", "interop", "jaxgames.interop.pettingzoo")
from gymnasium import spaces  # noqa: E402  (a PettingZoo dependency, present once it is)


class PettingZooEnv(_pettingzoo.AECEnv):
    """PettingZoo AEC view of one game (a name with ``options``, or an ``Env``);
    ``render_mode`` ``"ansi"`` returns the text diagram, ``"human"`` prints it."""

    metadata = {"render_modes": ["ansi", "human"], "name": "jaxgames", "is_parallelizable": False}

    def __init__(self, game: str | Env = "tic_tac_toe", render_mode: str | None = None, **options):
        super().__init__()
        check_choice("render_mode", render_mode, (None, "ansi", "human"))
        self.game = as_env(game, options)
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "name": f"jaxgames_{self.game.name}"}
        self.possible_agents = [f"player_{i}" for i in range(self.game.num_players)]
        self.agents = self.possible_agents[:]
        n = self.game.num_actions
        space = spaces.Dict(
            {
                # every game's observation is 0/1 planes (docs/api.md)
                "observation": spaces.Box(0.0, 1.0, self.game.observation_shape, np.float32),
                "action_mask": spaces.Box(0, 1, (n,), np.int8),
            }
        )
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self._init_fn = jax.jit(self.game.init)
        self._step_fn = jax.jit(self.game.step)
        self._observe_fn = jax.jit(self.game.observe)
        self._rng = np.random.default_rng()
        self.state: Any = None

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self._init_fn(jax.random.PRNGKey(int(self._rng.integers(2**31 - 1))))
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[int(self.state.current_player)]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self.possible_agents.index(agent)
        mask = np.zeros(self.game.num_actions, np.int8)
        if agent == self.agent_selection and not self._over():
            mask[:] = np.asarray(self.state.legal_action_mask)
        obs = np.asarray(self._observe_fn(self.state, np.int32(player)), np.float32)
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        # range-checked on the host: jit would narrow a large int64 onto a legal id
        a = action_index(action)
        a = a if 0 <= a < self.game.num_actions else -1  # -1: illegal, the mover loses
        self._cumulative_rewards[agent] = 0.0
        self.state = self._step_fn(self.state, np.int32(a))
        rewards = np.asarray(self.state.rewards)
        self.rewards = {name: float(rewards[i]) for i, name in enumerate(self.possible_agents)}
        if bool(self.state.terminated):
            self.terminations = {name: True for name in self.agents}
        if bool(self.state.truncated):
            self.truncations = {name: True for name in self.agents}
        if self._over():  # each player in turn then steps None once (PettingZoo's dead steps)
            mover = self.possible_agents.index(agent)
            self.agent_selection = self.possible_agents[(mover + 1) % len(self.possible_agents)]
        else:
            self.agent_selection = self.possible_agents[int(self.state.current_player)]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        from jaxgames.render import text

        if self.render_mode is None or self.state is None:
            return None
        diagram = text(self.state, self.game)
        if self.render_mode == "human":
            print(diagram)
            return None
        return diagram

    def close(self) -> None:
        pass

    def _over(self) -> bool:
        return bool(self.state.terminated) or bool(self.state.truncated)
