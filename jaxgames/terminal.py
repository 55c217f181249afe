"""Play any game in a terminal against an agent (an opponent spec) or another human, and step
through game records (the command line: :mod:`jaxgames.cli.play`). Bad input gets one line,
never a traceback; end of input or Ctrl-C ends the session cleanly.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from typing import Any, Callable, Sequence, TextIO

import jax
import numpy as np

from jaxgames import records, render
from jaxgames.core import external_error, is_over
from jaxgames.runs.outputs import check_output_path
from jaxgames.specs import make_opponent

HELP = """\
commands:
  <move>       play a move in the game's notation (e.g. {example}); 'pass' when it is the only move
  undo         take back your last move (and the agent's reply)
  hint         the agent's preferred move here (and its value estimate, if it has one)
  legal        toggle legal-move marks (*) and the list of legal moves
  numbers      toggle move numbers on the pieces
  flip         turn the board round
  board        show the board again
  save FILE    save the game so far as a text record (replay it with: replay FILE); a new
               file, or one saved earlier in this session
  help         this text
  quit         leave (also Ctrl-D)"""

#: the most moves a hint lists (the most probable first)
HINT_MOVES = 8

COLORS = {"first": 0, "black": 0, "x": 0, "sente": 0, "second": 1, "white": 1, "o": 1, "gote": 1}


# ---------------------------------------------------------------------------- policies
def keyed(policy: Callable[[jax.Array, Any], Any]) -> Callable[[int, int, Any], Any]:
    """``jit`` of ``(seed, counter, x) -> policy(fold_in(PRNGKey(seed), counter), x)``."""

    @jax.jit
    def call(seed: jax.Array, counter: jax.Array, x: Any) -> Any:
        return policy(jax.random.fold_in(jax.random.PRNGKey(seed), counter), x)

    return call


def one_line(err: BaseException, limit: int = 2000) -> str:
    """``err``'s message on one line, at most ``limit`` characters (an external player's
    failure inside a JAX callback: its own line, not the callback's traceback)."""
    text = external_error(err) or " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _read_line(stdin: TextIO | None, out: TextIO, prompt: str) -> str:
    """One line of input after ``prompt`` (``input()`` without ``stdin``); ``EOFError`` at the
    end of input."""
    out.flush()
    if stdin is None:
        return input(prompt)
    out.write(prompt)
    out.flush()
    line = stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


# ---------------------------------------------------------------------------- the game line
class IllegalMove(ValueError):
    """A move in the game's notation that is not legal here (its message names the legal
    moves)."""


@dataclasses.dataclass(frozen=True)
class Player:
    """An opponent spec's jitted calls: ``act(seed, counter, state)``, ``probs(state)`` and
    ``value(state)`` (``None`` where the policy has none)."""

    act: Callable[..., Any]
    probs: Callable[..., Any] | None
    value: Callable[..., Any] | None


@functools.lru_cache(maxsize=16)
def player(spec: str, env: Any) -> Player:
    """The jitted calls of ``spec`` on ``env``, compiled once per process (a new game against
    the same agent reuses them)."""
    policy = make_opponent(spec, env)
    probs, value = getattr(policy, "probs", None), getattr(policy, "value", None)
    return Player(
        keyed(policy),
        jax.jit(probs) if callable(probs) else None,
        jax.jit(value) if callable(value) else None,
    )


class GameLine:
    """The moves of one game between a human (player id ``human``) and ``agent`` (an opponent
    spec; ``"human"``: two humans), with the agent's moves, hints and undo: what the terminal
    and the browser board share. ``hint``: the spec asked for hints (default: the agent).
    Every agent call draws its key from ``(seed, counter)``, so a session replays exactly."""

    def __init__(
        self,
        env: Any,
        agent: str = "random",
        human: int = 0,
        *,
        hint: str | None = None,
        seed: int = 0,
    ) -> None:
        self.env = env
        self.names = render.side_names(env)
        self.two_humans = agent == "human"
        self.agent = None if self.two_humans else agent
        self.human = human
        self.hint_spec = hint or self.agent
        self._agent = None if self.agent is None else player(self.agent, env)
        self._hint = None if self.hint_spec is None else player(self.hint_spec, env)
        self._init, self._step = records.jitted(env)
        self.seed, self.calls = seed, 0
        self.thought: float | None = None  # seconds of the agent's last move
        self.start_text: str | None = None
        self.states: list[Any] = []
        self.moves: list[str] = []
        self.by_human: list[bool] = []

    def reset(self, start: Any = None, moves: Sequence[str] = ()) -> None:
        """A new game from ``start`` (default ``env.init``) after ``moves`` (notation)."""
        self.start_text = None if start is None else self.env.to_text(start)
        self.states = [jax.device_get(self._init(self.seed) if start is None else start)]
        self.moves, self.by_human = [], []
        for mv in moves:
            illegal = records.illegal_action(mv, self.env.num_actions)
            if illegal is not None and not self.over:  # an agent's, as agent_move records it
                self._illegal(illegal, self.is_human(self.to_move))
            else:
                self.push(self.action(mv), self.is_human(self.to_move))

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
        first, second = ("human" if self.is_human(p) else str(self.agent) for p in (0, 1))
        return first, second

    def action(self, text: str) -> int:
        """The legal action of the move ``text``; ``ValueError`` for text that is no move,
        :class:`IllegalMove` naming the legal moves for an illegal one."""
        if self.over:
            raise ValueError(f"the game is over ({records.result_of(self.state)})")
        action = int(self.env.text_to_action(self.state, str(text)))
        if not bool(self.state.legal_action_mask[action]):
            legal = " ".join(render.legal_moves(self.state, self.env))
            raise IllegalMove(f"illegal move {text!r}; legal: {legal}")
        return action

    def push(self, action: int, human: bool) -> None:
        self.moves.append(self.env.action_to_text(self.state, action))
        self.by_human.append(human)
        self.states.append(jax.device_get(self._step(self.state, action)))

    # ------------------------------------------------------------ moves
    def agent_move(self) -> str:
        """The agent plays one move: its notation, or ``illegal:N`` for an illegal choice,
        which is played as such and ends the game with the agent's loss. ``ValueError`` when it
        is not the agent's turn."""
        if self.over or self.is_human(self.to_move):
            raise ValueError("it is not the agent's turn")
        self.calls += 1
        t0 = time.perf_counter()
        action = int(self._agent.act(self.seed, self.calls, self.state))
        self.thought = time.perf_counter() - t0
        if 0 <= action < self.env.num_actions and bool(self.state.legal_action_mask[action]):
            self.push(action, False)
        else:
            self._illegal(action, False)
        return self.moves[-1]

    def _illegal(self, action: int, human: bool) -> None:
        """Play the illegal ``action``: the game ends against its mover."""
        self.states.append(jax.device_get(self._step(self.state, action)))
        self.moves.append(f"illegal:{action}")
        self.by_human.append(human)

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

    def hint(self, top: int = HINT_MOVES) -> dict[str, Any]:
        """The hint spec's move here, its ``top`` most probable moves (where the policy has
        move probabilities; ``top=0``: not asked for) and its value for the side to move (where
        it has one)."""
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
        if top and self._hint.probs is not None:
            p = np.asarray(self._hint.probs(self.state), np.float64)
            best = [int(a) for a in np.argsort(-p, kind="stable")[:top] if p[a] > 0]
            out["probs"] = [
                {"move": self.env.action_to_text(self.state, a), "p": float(p[a])} for a in best
            ]
        if self._hint.value is not None:
            out["value"] = float(self._hint.value(self.state))
        return out

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


# ---------------------------------------------------------------------------- tally
class Tally:
    """Results of the finished games of a session, by colour and by human/agent."""

    def __init__(self) -> None:
        self.games: list[tuple[int, int | None]] = []  # (winner id or -1, human's id or None)

    def add(self, winner: int, human: int | None) -> None:
        self.games.append((winner, human))

    def pop(self) -> None:
        self.games.pop()

    def summary(self, names: tuple[str, str], agent: str | None) -> str:
        """``session (3 games): X won 2, O won 1, drawn 0 | you won 2, agent random won 1, ...``"""
        w = [sum(g[0] == p for g in self.games) for p in (0, 1)]
        d = sum(g[0] == -1 for g in self.games)
        line = (
            f"session ({len(self.games)} game{'s' * (len(self.games) != 1)}): "
            f"{names[0]} won {w[0]}, {names[1]} won {w[1]}, drawn {d}"
        )
        vs = [g for g in self.games if g[1] is not None]
        if agent is not None and vs:
            you = sum(g[0] == g[1] for g in vs)
            them = sum(g[0] not in (-1, g[1]) for g in vs)
            line += (
                f" | you won {you}, agent {agent} won {them}, drawn {sum(g[0] == -1 for g in vs)}"
            )
        return line


# ---------------------------------------------------------------------------- the game
class TerminalGame(GameLine):
    """A session of games between a human (player id ``human``) and an agent (an opponent
    spec, or ``"human"`` for two humans) at a terminal; ``hint``: the spec asked for hints
    (default: the agent); stdin ``None``: ``input()``; ``legal`` / ``numbers``: the toggles'
    start."""

    def __init__(
        self,
        env: Any,
        agent: str = "random",
        human: int = 0,
        *,
        hint: str | None = None,
        seed: int = 0,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        legal: bool = False,
        numbers: bool = False,
    ) -> None:
        super().__init__(env, agent, human, hint=hint, seed=seed)
        self.saved: set[str] = set()  # files this session saved (saved again without asking)
        self.stdin, self.out = stdin, stdout or sys.stdout
        self.legal, self.numbers = legal, numbers
        self.flip = False if self.two_humans else render.default_flip(env, human)
        self.tally = Tally()
        self.counted = False

    # ------------------------------------------------------------ i/o
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str) -> str:
        return _read_line(self.stdin, self.out, prompt)

    def new_game(self, start: Any = None, moves: Sequence[str] = ()) -> None:
        self.reset(start, moves)
        self.counted = False

    def show(self) -> None:
        human = self.is_human(self.to_move)  # legal marks only for a human's turn
        shown = dict(legal=self.legal and human, numbers=self.numbers, flip=self.flip)
        self.say(render.text(self.state, self.env, history=self.moves, **shown))
        if not self.over and human:
            only = render.legal_moves(self.state, self.env)
            if len(only) == 1:  # e.g. a forced pass in reversi
                self.say(f"only legal move: {only[0]}")

    def prompt(self) -> str:
        return f"{len(self.moves) + 1}. {self.names[self.to_move]}> "

    # ------------------------------------------------------------ session
    def run(self, start: Any = None, moves: list[str] | None = None) -> int:
        """Play games until the user quits: exit code 0, or 130 after Ctrl-C. ``start`` and
        ``moves`` continue the first game from a loaded record."""
        try:
            self.say(self.banner())
            first = True
            while True:
                self.new_game(*((start, moves or ()) if first else ()))
                first = False
                answer = self.play_one()
                if answer == "quit":
                    break
                if answer == "swap":
                    self.human = 1 - self.human
                    self.flip = render.default_flip(self.env, self.human)
            self.say("bye")
            return 0
        except EOFError:
            self.say("\nbye")
            return 0
        except KeyboardInterrupt:
            self.say("\ninterrupted, bye")
            return 130

    def banner(self) -> str:
        if self.two_humans:
            who = "two humans"
        else:
            who = (
                f"you play {self.names[self.human]}, agent {self.agent} plays "
                f"{self.names[1 - self.human]}"
            )
        return f"{self.env!r}: {who}. Type 'help' for commands."

    def play_one(self) -> str:
        """One game; returns ``"new"``, ``"swap"`` or ``"quit"``."""
        self.show()
        while True:
            if self.over:
                answer = self.game_over()
                if answer:
                    return answer
                continue
            if not self.is_human(self.to_move):
                self.agent_plays()
                self.show()
                continue
            line = self.ask(self.prompt()).strip()
            if self.command(line) == "quit":
                return "quit"

    def game_over(self) -> str | None:
        """Report the result once, then ask what next; None means the game goes on (undo)."""
        result = records.result_of(self.state)
        if not self.counted:
            winner = records.winner_of(result)
            self.tally.add(winner, None if self.two_humans else self.human)
            self.counted = True
            who = " (you)" if winner == self.human else f" (agent {self.agent})"
            who = "" if self.two_humans else who
            what = "a draw" if winner == -1 else f"{self.names[winner]} wins{who}"
            self.say(f"game over: {what}, {result}")
            self.say(self.tally.summary(self.names, self.agent))
        line = self.ask(
            "new game? y = yes, s = swap colours, n = quit (or undo, save FILE)> "
        ).strip()
        word = line.split()[0].lower() if line else ""
        if word in ("y", "yes", "new"):
            return "new"
        if word in ("s", "swap"):
            return "new" if self.two_humans else "swap"
        if word in ("n", "no", "q", "quit", "exit"):
            return "quit"
        if word in ("undo", "u", "save", "help", "board", "legal", "numbers", "flip", "hint", "?"):
            self.command(line)
            return None
        self.say(f"please answer y, s or n (got {line!r})")
        return None

    # ------------------------------------------------------------ commands
    def command(self, line: str) -> str | None:
        """Handle one input line (a move or a command); returns ``"quit"`` to leave."""
        if not line:
            return None
        word, _, rest = line.partition(" ")
        word, rest = word.lower(), rest.strip()
        try:
            if word in ("quit", "exit", "q"):
                return "quit"
            if word in ("help", "?", "h"):
                self.say(HELP.format(example=self.example_move()))
            elif word in ("undo", "u"):
                self.take_back()
            elif word == "hint":
                self.show_hint()
            elif word == "legal":
                self.legal = not self.legal
                self.say(f"legal-move marks {'on' if self.legal else 'off'}")
                self.show()
            elif word == "numbers":
                self.numbers = not self.numbers
                self.say(f"move numbers {'on' if self.numbers else 'off'}")
                self.show()
            elif word == "flip":
                self.flip = not self.flip
                self.show()
            elif word in ("board", "show"):
                self.show()
            elif word == "save":
                self.save(rest)
            else:
                self.human_move(line)
        except (EOFError, KeyboardInterrupt):
            raise
        except Exception as e:  # one line, never a traceback
            self.say(f"error: {one_line(e)}")
        return None

    def example_move(self) -> str:
        if self.over:
            return "a1"
        legal = self.env.legal_actions(self.state)
        return self.env.action_to_text(self.state, legal[0]) if legal else "a1"

    def human_move(self, text: str) -> None:
        if self.over:
            self.say("the game is over")
            return
        try:
            action = self.action(text)
        except IllegalMove as e:
            self.say(one_line(e))
            return
        except ValueError as e:
            msg = one_line(e)
            if text.isalpha() and len(text) >= 3 and text.lower() != "pass":
                msg = f"unknown command {text!r} (and not a move: {msg}); type 'help'"
            self.say(msg)
            return
        self.push(action, True)
        self.show()

    def agent_plays(self) -> None:
        side = self.names[self.to_move]
        move = self.agent_move()
        if move.startswith("illegal:"):
            action = move.partition(":")[2]
            self.say(f"agent {self.agent} chose an illegal action {action}; it loses the game")
        else:
            self.say(f"agent {self.agent} ({side}) plays {move}  ({self.thought:.2f}s)")

    def take_back(self) -> None:
        try:
            taken = self.undo()
        except ValueError as e:  # nothing to undo
            self.say(str(e))
            return
        if self.counted:
            self.tally.pop()
            self.counted = False
        self.say(f"took back: {' '.join(taken)}")
        self.show()

    def show_hint(self) -> None:
        if self._hint is None:
            self.say("no agent to ask for a hint (start with --agent SPEC or --hint SPEC)")
            return
        if self.over:
            self.say("the game is over")
            return
        hint = self.hint(top=0)  # the move and the value: no move probabilities
        msg = f"hint ({self.hint_spec}): {hint['move']}"
        if hint["value"] is not None:
            msg += f", value {hint['value']:+.2f} for {hint['side']}"
        self.say(msg)

    def save(self, path: str) -> None:
        if not path:
            self.say("usage: save FILE")
            return
        path = os.path.expanduser(path)  # ~/games/x.txt, as a shell would have it
        real = os.path.realpath(path)
        hint = "choose another name (a file saved in this session may be saved again)"
        check_output_path(path, "save", force=real in self.saved, overwrite_hint=hint)
        records.save(path, self.record())
        self.saved.add(real)
        self.say(f"saved {len(self.moves)} moves to {path}")


# ---------------------------------------------------------------------------- replay
REPLAY_HELP = "Enter or n = next move, b = back, 0..N = go to move N, e = end, s = start, q = quit"


def replay_session(
    record: records.GameRecord,
    env: Any,
    states: list[Any],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    auto: bool = False,
    legal: bool = False,
    numbers: bool = False,
    flip: bool = False,
) -> int:
    """Step through a record (``states`` from :func:`jaxgames.records.replay`); ``auto``
    prints every position without asking. Returns an exit code."""
    out = stdout or sys.stdout
    say = lambda s="": (out.write(s + "\n"), out.flush())  # noqa: E731
    names = render.side_names(env)
    say(
        f"{env!r}: {names[0]} = {record.players[0]}, {names[1]} = {record.players[1]}, "
        f"{record.date or 'no date'}, result {record.result}, {len(record.moves)} moves"
    )

    def show(i: int) -> None:
        shown = dict(legal=legal, numbers=numbers, flip=flip)
        say(render.text(states[i], env, history=record.moves[:i], **shown))

    i = 0
    show(i)
    if auto:
        for i in range(1, len(states)):
            show(i)
        say(f"result: {records.result_of(states[-1])}")
        return 0
    say(REPLAY_HELP)
    try:
        while True:
            line = _read_line(stdin, out, f"move {i}/{len(record.moves)}> ")
            cmd = line.strip().lower()
            if cmd in ("", "n", "next"):
                if i == len(record.moves):
                    say(f"end of the game: result {records.result_of(states[-1])}")
                    continue
                i += 1
            elif cmd in ("b", "back", "p"):
                if i == 0:
                    say("at the start")
                    continue
                i -= 1
            elif cmd in ("e", "end"):
                i = len(record.moves)
            elif cmd in ("s", "start"):
                i = 0
            elif cmd.isascii() and cmd.isdigit():
                if int(cmd) > len(record.moves):
                    say(f"no move {cmd}: the game has {len(record.moves)} moves")
                    continue
                i = int(cmd)
            elif cmd in ("q", "quit", "exit"):
                return 0
            elif cmd in ("h", "help", "?"):
                say(REPLAY_HELP)
                continue
            else:
                say(f"unknown command {line.strip()!r}; {REPLAY_HELP}")
                continue
            show(i)
    except EOFError:
        say()
        return 0
    except KeyboardInterrupt:
        say("\ninterrupted")
        return 130
