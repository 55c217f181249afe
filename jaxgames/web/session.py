"""The browser board's game (:mod:`jaxgames.web.server` serves it): a human against an agent
spec (or another human), move by move, with undo, hints and game records. Every JAX call
happens here; :meth:`WebGame.view` turns a position into the plain JSON the page draws."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from jaxgames import records, render
from jaxgames.core import Env
from jaxgames.evaluation.ladder import game_key, load_ladder
from jaxgames.games import check_game, game_variants, registered_games, shared_env
from jaxgames.pretrained import pretrained_dir, pretrained_names
from jaxgames.runs import run_env
from jaxgames.specs import parse_spec, playable_rungs
from jaxgames.terminal import COLORS, GameLine


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
            rungs = playable_rungs(load_ladder(game_key(env)).specs, env)[0]
        except FileNotFoundError:
            rungs = ["random", "greedy"]
        players[name] += [{"spec": spec, "options": dict(options)} for spec in rungs]
    for agent in pretrained_names():
        env = run_env(pretrained_dir(agent))
        players[env.name].append({"spec": f"pretrained:{agent}", "options": dict(env.config)})
    return {"games": games, "players": players}


class WebGame(GameLine):
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
        super().__init__(env, agent, human, hint=hint, seed=seed)
        self.reset(start, moves)

    def move(self, text: str) -> None:
        """Play the human's move ``text``; ``ValueError`` when it is the agent's turn or the
        move is malformed or illegal."""
        if not self.over and not self.is_human(self.to_move):
            raise ValueError("it is the agent's turn")
        self.push(self.action(text), True)

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
