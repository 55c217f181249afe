"""The browser board's game (:mod:`jaxgames.web.server` serves it): a human against an agent
spec (or another human), move by move, with undo, hints and game records. Every JAX call
happens here; :meth:`WebGame.view` turns a position into the plain JSON the page draws."""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Callable, Sequence

import jax
import numpy as np

from jaxgames import records, render
from jaxgames.core import Env, is_over
from jaxgames.evaluation.ladder import game_key, load_ladder
from jaxgames.games import check_game, game_variants, registered_games, shared_env
from jaxgames.pretrained import pretrained_dir, pretrained_names
from jaxgames.runs import run_env
from jaxgames.specs import make_opponent, parse_spec
from jaxgames.terminal import COLORS, keyed

#: the most hint moves listed (the most probable first)
HINT_MOVES = 8


@dataclasses.dataclass(frozen=True)
class Display:
    """How the page draws a position: legal-move marks, move numbers, the board turned round
    (``None``: turned for a human playing the side ``env.flip_for_second`` names)."""

    legal: bool = True
    numbers: bool = False
    flip: bool | None = None

    @classmethod
    def from_json(cls, data: Any) -> Display:
        """A :class:`Display` from the page's ``{"legal": ..., "numbers": ..., "flip": ...}``."""
        if not isinstance(data, dict):
            return cls()
        flip = data.get("flip")
        return cls(
            legal=bool(data.get("legal", True)),
            numbers=bool(data.get("numbers", False)),
            flip=None if flip is None else bool(flip),
        )


def agent_spec(agent: str, simulations: int = 0) -> str:
    """The spec of ``agent`` playing with ``simulations`` of search: a trained agent inside
    ``mcts:N:``, ``uct:N``; 0 leaves the spec as given. ``ValueError`` for other players."""
    agent = agent.strip()
    if not isinstance(simulations, int) or isinstance(simulations, bool) or simulations < 0:
        raise ValueError(f"simulations must be an integer >= 0, got {simulations!r}")
    if simulations == 0 or agent == "human":
        return agent
    spec = parse_spec(agent)
    if spec.kind in ("run", "pretrained", "sym"):
        return f"mcts:{simulations}:{spec}"
    if spec.kind == "mcts":  # the other search settings stay
        n, k, c, w = spec.args
        return str(dataclasses.replace(spec, args=(simulations, k, c, w)))
    if spec.kind == "uct":
        return f"uct:{simulations}"
    raise ValueError(
        f"simulations apply to a trained agent (mcts:N:<agent>) or uct:N, not to {agent!r}; use 0"
    )


def color_id(color: str) -> int:
    """Player id of a colour word (``first``, ``black``, ``o``, ...); ``ValueError`` naming them."""
    word = str(color).strip().lower()
    if word not in COLORS:
        raise ValueError(f"unknown colour {color!r}; use one of {', '.join(COLORS)}")
    return COLORS[word]


@dataclasses.dataclass(frozen=True)
class _Player:
    """An agent's jitted calls: ``act(seed, counter, state)``, ``probs(state)``,
    ``value(state)`` (``None`` where the policy has none)."""

    act: Callable[..., Any]
    probs: Callable[..., Any] | None
    value: Callable[..., Any] | None


@functools.lru_cache(maxsize=16)
def _player(spec: str, env: Env) -> _Player:
    """The jitted calls of ``spec`` on ``env`` (``shared_env``), compiled once per session."""
    policy = make_opponent(spec, env)
    probs, value = getattr(policy, "probs", None), getattr(policy, "value", None)
    return _Player(
        keyed(policy),
        jax.jit(probs) if callable(probs) else None,
        jax.jit(value) if callable(value) else None,
    )


def game_env(game: str, options: dict[str, Any] | None = None) -> Env:
    """The shared env of ``game`` with ``options``; ``ValueError`` naming a bad one."""
    if not isinstance(options, dict):
        raise ValueError(f"options must be a JSON object like {{'size': 8}}, got {options!r}")
    check_game(game, options)  # a one-line ValueError before the cache hashes the options
    return shared_env(game, **options)


def suggestions() -> dict[str, Any]:
    """What the page offers: every game with its default options and side names, and per
    game the players to suggest, each with the options it suits (``{}``: any): a person, the
    rungs of each variant's rating ladder (weakest first) and the shipped agents."""
    games: dict[str, Any] = {}
    players: dict[str, list[dict[str, Any]]] = {}
    for name in registered_games():
        env = shared_env(name)
        games[name] = {"options": dict(env.config), "names": list(render.side_names(env))}
        players[name] = [{"spec": "human", "options": {}}]
    for name, options in game_variants():
        env = shared_env(name, **options)
        try:
            rungs = load_ladder(game_key(env)).specs
        except FileNotFoundError:
            rungs = ["random", "greedy"]
        players[name] += [{"spec": spec, "options": dict(options)} for spec in rungs]
    for agent in pretrained_names():
        env = run_env(pretrained_dir(agent))
        players[env.name].append({"spec": f"pretrained:{agent}", "options": dict(env.config)})
    return {"games": games, "players": players}


class WebGame:
    """One game between a human (player id ``human``) and ``agent`` (an opponent spec, or
    ``"human"`` for two humans), started from ``start`` (default ``env.init``) after ``moves``
    (notation). ``hint``: the spec asked for hints (default: the agent)."""

    def __init__(
        self,
        env: Env,
        agent: str = "random",
        human: int = 0,
        *,
        hint: str | None = None,
        seed: int = 0,
        start: Any = None,
        moves: Sequence[str] = (),
    ) -> None:
        self.env = env
        self.names = render.side_names(env)
        self.two_humans = agent == "human"
        self.agent = agent
        self.human = human
        self.hint_spec = hint or (None if self.two_humans else agent)
        self._agent = None if self.two_humans else _player(agent, env)
        self._hint = None if self.hint_spec is None else _player(self.hint_spec, env)
        init, self._step = records.jitted(env)
        self.seed, self.calls = seed, 0
        self.states = [jax.device_get(init(seed) if start is None else start)]
        self.moves: list[str] = []
        self.by_human: list[bool] = []
        self.start_text = None if start is None else env.to_text(start)
        self.thought: float | None = None  # seconds of the agent's last move
        for mv in moves:
            self._push(self._action(mv), self.is_human(self.to_move))

    # ------------------------------------------------------------ position
    @property
    def state(self) -> Any:
        return self.states[-1]

    @property
    def to_move(self) -> int:
        return int(self.state.current_player)

    @property
    def over(self) -> bool:
        return is_over(self.state)

    def is_human(self, player: int) -> bool:
        return self.two_humans or player == self.human

    def players(self) -> tuple[str, str]:
        """Who plays player 0 and player 1: ``"human"`` or the agent spec."""
        first, second = ("human" if self.is_human(p) else self.agent for p in (0, 1))
        return first, second

    def _action(self, text: str) -> int:
        """The legal action of the move ``text``; ``ValueError`` naming the legal moves."""
        if self.over:
            raise ValueError(f"the game is over ({records.result_of(self.state)})")
        action = int(self.env.text_to_action(self.state, str(text)))
        if not bool(self.state.legal_action_mask[action]):
            legal = " ".join(render.legal_moves(self.state, self.env))
            raise ValueError(f"illegal move {text!r}; legal: {legal}")
        return action

    def _push(self, action: int, human: bool) -> None:
        self.moves.append(self.env.action_to_text(self.state, action))
        self.by_human.append(human)
        self.states.append(jax.device_get(self._step(self.state, action)))

    # ------------------------------------------------------------ actions
    def move(self, text: str) -> None:
        """Play the human's move ``text``; ``ValueError`` when it is the agent's turn or the
        move is malformed or illegal."""
        if not self.over and not self.is_human(self.to_move):
            raise ValueError("it is the agent's turn")
        self._push(self._action(text), True)

    def agent_move(self) -> str:
        """The agent plays one move (its notation); ``ValueError`` when it is not its turn. An
        illegal choice is played as such: the game ends with the agent's loss."""
        if self.over or self.is_human(self.to_move):
            raise ValueError("it is not the agent's turn")
        self.calls += 1
        t0 = time.perf_counter()
        action = int(self._agent.act(self.seed, self.calls, self.state))
        self.thought = time.perf_counter() - t0
        if 0 <= action < self.env.num_actions and bool(self.state.legal_action_mask[action]):
            self._push(action, False)
        else:
            self.states.append(jax.device_get(self._step(self.state, action)))
            self.moves.append(f"illegal:{action}")
            self.by_human.append(False)
        return self.moves[-1]

    def undo(self) -> list[str]:
        """Take back the human's last move and the agent's replies after it (two humans: one
        move); the moves taken back, in play order. ``ValueError`` when there is none."""
        if not any(self.by_human):
            raise ValueError("nothing to undo")
        taken = []
        while self.moves:
            self.states.pop()
            taken.append(self.moves.pop())
            if self.by_human.pop():
                break
        return taken[::-1]

    def hint(self) -> dict[str, Any]:
        """The hint policy's move here, its move probabilities (the most probable
        :data:`HINT_MOVES`, where the policy has them) and its value for the side to move."""
        if self._hint is None:
            raise ValueError("no agent to ask for a hint (choose an agent, or start with --hint)")
        if self.over:
            raise ValueError("the game is over")
        self.calls += 1
        action = int(self._hint.act(self.seed, self.calls, self.state))
        out: dict[str, Any] = {
            "spec": self.hint_spec,
            "move": self.env.action_to_text(self.state, action),
            "side": self.names[self.to_move],
            "probs": None,
            "value": None,
        }
        if self._hint.probs is not None:
            p = np.asarray(self._hint.probs(self.state), np.float64)
            best = [int(a) for a in np.argsort(-p, kind="stable")[:HINT_MOVES] if p[a] > 0]
            out["probs"] = [
                {"move": self.env.action_to_text(self.state, a), "p": float(p[a])} for a in best
            ]
        if self._hint.value is not None:
            out["value"] = float(self._hint.value(self.state))
        return out

    # ------------------------------------------------------------ records
    def record(self) -> records.GameRecord:
        """The game so far as a record (``jaxgames replay`` reads it)."""
        return records.new_record(
            self.env,
            self.moves,
            self.players(),
            final_state=self.state,
            start=self.start_text,
            seed=str(self.seed),
        )

    # ------------------------------------------------------------ the page's view
    def view(self, display: Display = Display()) -> dict[str, Any]:
        """The position as the page draws it (plain JSON): the SVG with click targets, the
        human's legal moves by squares, the move list, whose turn, the result."""
        turn = "over" if self.over else "human" if self.is_human(self.to_move) else "agent"
        flip = display.flip
        if flip is None:
            flip = False if self.two_humans else render.default_flip(self.env, self.human)
        svg = render.svg(
            self.state,
            self.env,
            history=self.moves,
            legal=display.legal and turn == "human",
            numbers=display.numbers,
            flip=flip,
            targets=True,
        )
        board = render.board_view(self.state, self.env)
        out: dict[str, Any] = {
            "game": self.env.name,
            "options": dict(self.env.config),
            "title": repr(self.env),
            "names": list(self.names),
            "players": list(self.players()),
            "human": None if self.two_humans else self.human,
            "agent": None if self.two_humans else self.agent,
            "hint": self.hint_spec,
            "to_move": self.to_move,
            "turn": turn,
            "flip": flip,
            "svg": svg,
            "moves": list(self.moves),
            "legal": _legal(self.state, self.env) if turn == "human" else [],
            "can_undo": any(self.by_human),
            "thought": self.thought,
            "score": board.score,
            "result": records.result_of(self.state),
            "winner": None,
            "status": "",
        }
        if turn == "over":
            winner = records.winner_of(out["result"])
            out["winner"] = winner
            who = ""
            if not self.two_humans and winner != -1:
                who = " (you)" if winner == self.human else f" (agent {self.agent})"
            what = "a draw" if winner == -1 else f"{self.names[winner]} wins{who}"
            score = f", {board.score}" if board.score else ""
            out["status"] = f"game over: {what}, {out['result']}{score}"
        else:
            side = self.names[self.to_move]
            who = "your move" if turn == "human" else f"agent {self.agent} to move"
            out["status"] = f"{len(self.moves) + 1}. {side} to move ({who})"
        return out


def _legal(state: Any, env: Env) -> list[dict[str, Any]]:
    """Each legal move: its notation, the squares it names (destination last) and the hand
    letter of a drop (``"C*b2"`` -> ``"C"``), for the page to map clicks to moves."""
    out = []
    for text in render.legal_moves(state, env):
        squares = [f"{render.FILES[c]}{r + 1}" for r, c in render.move_squares(text)]
        drop = text.split("*")[0].upper() if "*" in text else None
        out.append({"move": text, "squares": squares, "drop": drop})
    return out
