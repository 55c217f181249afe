"""The NBoard protocol both ways: any jaxgames player as an NBoard engine, and any NBoard engine
as a jaxgames player.

NBoard is Chris Welty's othello GUI; its engine protocol (version 2, spoken by NBoard, Edax,
Ntest and most strong othello engines) is plain lines on the engine's stdin and stdout. The
commands this module uses and answers (docs/nboard.md has the whole table)::

    nboard 2                 first line of a session
    set depth D              the engine's midgame search depth
    set game (;GM[Othello]...BO[8 ... *]B[f5]...;)   the position: a GGF game's end
    move f5[/eval/time]      one more move (``PA``: a pass)
    go                       -> "=== f5[/eval/time]": the engine's move (not played yet)
    hint N                   -> "search <move> <eval> 0 <depth> ..." lines, then "status"
    ping N                   -> "pong N" once every earlier command is done
    learn                    -> "learned"

**Engine side** (:func:`serve`, ``jaxgames engine --protocol nboard SPEC``): reads the
commands, keeps the position in a jaxgames env (every GGF and move checked by jaxgames' rules)
and answers ``go`` with the player's move. Boards of any even size that the player plays
(``BO[6 ...]``) are accepted; a trained agent plays its own size only.

**Player side** (:class:`NBoardPolicy`, the spec ``nboard:<command line>``): a
:data:`~jaxgames.core.Policy` that asks an engine process for each move through
:func:`jax.pure_callback`, so it plays wherever a policy does (``eval``, ``match``, ``rate``,
``play``) although the engine cannot run inside ``jit``. Each call sends the position alone
(``set game`` with a ``BO`` start and no moves) and ``go``; the answer is checked against
jaxgames' legal moves before it is played. A position whose only legal move is a pass is
answered without asking (engines differ on passes), a finished one with action 0 (never
played). Under ``vmap`` the batch's positions are asked one after the other
(``vmap_method="sequential"``); note that ``jaxgames eval`` computes both players' moves in
every game and keeps the mover's, so the engine is also asked for the positions where its
opponent moves (``match`` and ``rate`` pair the games, so it is asked for its own).

Errors (program missing, exited, silent past the timeout, an illegal move, a malformed answer)
are :class:`~jaxgames.core.ExternalPlayerError` lines naming the program; raised inside a
callback, JAX carries them out in a ``JaxRuntimeError`` that the command line reduces to the
one line (:func:`jaxgames.core.external_error`).
"""

from __future__ import annotations

import atexit
import collections
import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Iterable, TextIO

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames import records, transcripts
from jaxgames.core import Env, ExternalPlayerError, Policy, is_over, quiet_external_errors
from jaxgames.games import grid, shared_env
from jaxgames.records import RecordError

#: the protocol version this module speaks (``nboard 2``; ``nboard 1`` is accepted too)
PROTOCOL_VERSION = 2
#: how long an engine may take to answer ``go`` when no ``time`` is set
DEFAULT_REPLY_SECONDS = 600.0
#: the spec's settings: ``nboard:depth=D:time=S:<command line>``
SETTINGS = ("depth", "time")
_PASSES = ("pa", "ps", "pass")  # NBoard writes PA, Edax PS
#: the longest ``time=`` a move may take (the reply's timeout grows with it)
MAX_SECONDS = 86_400
_SETTING = re.compile(r"(depth|time)=([0-9]+(?:\.[0-9]*)?)")


# ----------------------------------------------------------------------------- spec settings
def parse_command(text: str) -> tuple[dict[str, float], list[str]]:
    """``depth=D:time=S:<command line>`` (settings optional, any order) -> (settings, argv);
    ``ValueError`` naming what is wrong."""
    settings: dict[str, float] = {}
    rest = text
    while True:
        head, colon, tail = rest.partition(":")
        m = _SETTING.fullmatch(head.strip())
        if colon and not m and re.fullmatch(r"(depth|time)=.*", head.strip()):
            raise ValueError(
                f"nboard: {head.strip()!r}: depth= takes an integer >= 1, time= seconds > 0"
            )
        if m and not colon:  # settings and nothing after them
            raise ValueError(
                f"nboard: the engine's command line is missing after {head.strip()!r}, e.g. "
                "'nboard:depth=6:time=1:edax'"
            )
        if not colon or not m:
            break
        if m[1] in settings:
            raise ValueError(f"nboard: {m[1]}= given twice")
        settings[m[1]] = float(m[2])
        rest = tail
    try:
        argv = shlex.split(rest)
    except ValueError as e:
        raise ValueError(f"nboard: cannot split the command line {rest!r} ({e})") from None
    if not argv:
        raise ValueError(
            "nboard needs the engine's command line, e.g. 'nboard:edax -q -n 1' or "
            "'nboard:depth=6:time=1:edax'"
        )
    if "depth" in settings and (settings["depth"] < 1 or settings["depth"] % 1):
        raise ValueError(f"nboard: depth must be an integer >= 1, got {settings['depth']:g}")
    if "time" in settings and not 0 < settings["time"] <= MAX_SECONDS:
        raise ValueError(
            f"nboard: time must be a number of seconds > 0 and at most {MAX_SECONDS:,} (a day), "
            f"got {settings['time']:g}"
        )
    return settings, argv


def check_program(argv: list[str]) -> None:
    """``ValueError`` (one line) when ``argv[0]`` is neither an executable on ``PATH`` nor an
    executable file."""
    program = argv[0]
    if os.sep in program:
        if not (os.path.isfile(program) and os.access(program, os.X_OK)):
            raise ValueError(f"nboard engine program {program!r} is not an executable file")
    elif shutil.which(program) is None:
        raise ValueError(f"nboard engine program {program!r} not found on PATH")


# ----------------------------------------------------------------------------- notation
def move_text(env: Env, action: int) -> str:
    """NBoard's name of ``action``: ``PA`` for a pass, else the square (``F5``)."""
    return "PA" if action == env.pass_action else grid.square_name(action, env.size).upper()


def _parse_move(text: str, size: int) -> int | None:
    """NBoard move text (``F5``, ``f5/-1.0/0.2``, ``PA``) -> action id (``None``: a pass);
    ``ValueError`` if malformed."""
    word = text.split("/")[0].strip()
    if word.lower() in _PASSES:
        return None
    return grid.parse_square(word, size, size)


def _legal_names(mask: np.ndarray, size: int) -> str:
    names = [grid.square_name(a, size) for a in np.flatnonzero(mask[:-1])]
    return ", ".join(names) or ("pass" if mask[-1] else "none")


def _board_value(observation: np.ndarray, player: int) -> str:
    """GGF ``BO`` value of a position from its observation (the mover's discs, the
    opponent's) and mover; plain numpy, so it runs inside a callback."""
    n = observation.shape[0]
    flat = np.asarray(observation).reshape(n * n, 2) > 0.5
    black, white = (flat[:, 0], flat[:, 1]) if player == 0 else (flat[:, 1], flat[:, 0])
    cells = np.where(black, "*", np.where(white, "O", "-"))
    rows = " ".join("".join(cells[r * n : (r + 1) * n]) for r in range(n))
    return f"{n} {rows} {'*' if player == 0 else 'O'}"


# ----------------------------------------------------------------------------- engine process
class NBoardProcess:
    """One engine program spoken to over NBoard: started on first use, kept for every later
    position, ended by :meth:`close` (and at exit). ``transcript``: the last lines both ways
    (``> `` sent, ``< `` received), for error messages and tests."""

    def __init__(
        self, argv: list[str], *, depth: int | None = None, seconds: float | None = None
    ) -> None:
        self.argv = list(argv)
        self.depth, self.seconds = depth, seconds
        self.reply_seconds = DEFAULT_REPLY_SECONDS if seconds is None else 10 * seconds + 30
        self.transcript: collections.deque[str] = collections.deque(maxlen=400)
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=5)
        self._ping = 0
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The command line, cut in the middle when long: its start names the interpreter,
        its end the engine and its options."""
        text = shlex.join(self.argv)
        return text if len(text) <= 80 else text[:30] + "..." + text[-47:]

    def fail(self, why: str) -> ExternalPlayerError:
        return ExternalPlayerError(f"nboard engine {self.name!r} {why}")

    def _start(self) -> None:
        check_program(self.argv)
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",  # an engine's Latin-1 name is a character, not a crash
                bufsize=1,
            )
        except OSError as e:
            raise self.fail(f"cannot be started ({e.strerror or e})") from None
        proc = self._proc

        def pump(stream: TextIO, sink: Callable[[str | None], None]) -> None:
            for line in stream:
                sink(line.rstrip("\r\n"))
            sink(None)

        threading.Thread(target=pump, args=(proc.stdout, self._lines.put), daemon=True).start()

        def keep_err(line: str | None) -> None:
            if line and line.strip():
                self._stderr.append(line.strip())

        threading.Thread(target=pump, args=(proc.stderr, keep_err), daemon=True).start()
        self.send(f"nboard {PROTOCOL_VERSION}")
        if self.depth is not None:
            self.send(f"set depth {self.depth}")

    def send(self, line: str) -> None:
        self.transcript.append(f"> {line}")
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None

    def _died(self) -> ExternalPlayerError:
        try:
            code = self._proc.wait(timeout=5) if self._proc else None
        except subprocess.TimeoutExpired:  # its output closed, the process lingers
            code = None
        err = f": {self._stderr[-1]}" if self._stderr else ""
        return self.fail(f"exited (exit code {code}){err}")

    def _read(self, deadline: float) -> str:
        try:
            line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise self.fail(
                f"did not answer within {self.reply_seconds:g} s (last sent: {self._last_sent()!r})"
            ) from None
        if line is None:
            raise self._died()
        self.transcript.append(f"< {line}")
        return line

    def _last_sent(self) -> str:
        sent = [t[2:] for t in self.transcript if t.startswith("> ")]
        return sent[-1][:60] if sent else ""

    def go(self, ggf: str) -> str:
        """The engine's move text (``=== <move>``'s first word) for the position of ``ggf``."""
        with self._lock:
            if self._proc is None:
                self._start()
            self._ping += 1
            self.send(f"set game {ggf}")
            self.send(f"ping {self._ping}")
            deadline = time.monotonic() + self.reply_seconds
            while self._read(deadline).split() != ["pong", str(self._ping)]:
                pass  # earlier output (status, nodestats, set myname) is dropped
            self.send("go")
            while True:
                line = self._read(deadline)
                if line.startswith("==="):
                    words = line[3:].split()
                    if not words:
                        raise self.fail(f"answered {line!r} without a move")
                    return words[0].split("/")[0]  # "=== f5/eval/time" or "=== f5 eval time"

    def close(self) -> None:
        """End the program (``quit``, then a kill if it lingers)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            proc.stdin.write("quit\n")
            proc.stdin.close()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()


_PROCESSES: list[NBoardProcess] = []


def close_all() -> None:
    """End every engine program this process started (registered at exit)."""
    while _PROCESSES:
        _PROCESSES.pop().close()


# ----------------------------------------------------------------------------- player side
class NBoardPolicy:
    """``policy(key, state) -> int32[]`` playing reversi through an NBoard engine program
    (module docstring). ``depth``: ``set depth`` once per session; ``seconds``: each move's
    time, sent as the mover's clock (``TI``) of every position, and the reply timeout's base.
    Hashed by identity: one compiled caller per player."""

    def __init__(
        self,
        env: Env,
        argv: list[str],
        *,
        depth: int | None = None,
        seconds: float | None = None,
    ) -> None:
        if env.name != "reversi":
            raise ValueError(f"nboard engines play reversi (othello), not {env.name!r}")
        self.env, self.size = env, env.size
        self.process = NBoardProcess(argv, depth=depth, seconds=seconds)
        self.seconds = seconds
        _PROCESSES.append(self.process)
        quiet_external_errors()

    def __call__(self, key: jax.Array, state: Any) -> jax.Array:
        del key  # the engine plays as it plays
        return jax.pure_callback(
            self._host_move,
            jax.ShapeDtypeStruct((), jnp.int32),
            state.observation,
            state.current_player,
            state.legal_action_mask,
            vmap_method="sequential",
        )

    def _host_move(self, observation: Any, player: Any, mask: Any) -> np.ndarray:
        mask = np.asarray(mask, bool)
        n2 = self.size * self.size
        if not mask.any():
            return np.int32(0)  # a finished game: never played
        if not mask[:n2].any():
            return np.int32(n2)  # the only legal move is the pass
        board = _board_value(np.asarray(observation), int(player))
        props = {"PC": "jaxgames"}
        if self.seconds is not None:  # the mover's clock, m:ss (whole seconds, at least 1)
            whole = max(1, round(self.seconds))
            props["TI"] = f"{whole // 60}:{whole % 60:02d}"
        ggf = "(;GM[Othello]" + "".join(f"{k}[{v}]" for k, v in props.items())
        ggf += f"TY[{self.size}]BO[{board}];)"
        text = self.process.go(ggf)
        try:
            action = _parse_move(text, self.size)
        except ValueError as e:
            raise self.process.fail(f"answered a malformed move {text!r} ({e})") from None
        if action is None or not mask[action]:
            raise self.process.fail(
                f"played an illegal move {text!r} in position BO[{board}]; legal: "
                f"{_legal_names(mask, self.size)}"
            )
        return np.int32(action)


def nboard_policy(text: str, env: Env) -> NBoardPolicy:
    """The player of the spec ``nboard:<text>`` on ``env`` (``text``: settings and the
    command line, :func:`parse_command`)."""
    settings, argv = parse_command(text)
    depth = int(settings["depth"]) if "depth" in settings else None
    return NBoardPolicy(env, argv, depth=depth, seconds=settings.get("time"))


# ----------------------------------------------------------------------------- engine side
class EngineSession:
    """The position and player of one NBoard session of ``jaxgames engine``; :meth:`handle`
    answers one command line (the replies as lines, problems as ``warning`` lines on
    ``err``)."""

    def __init__(
        self,
        make_policy: Callable[[Env], Policy],
        name: str,
        *,
        seed: int = 0,
        err: TextIO | None = None,
    ) -> None:
        self.make_policy, self.name = make_policy, name
        self.err = err if err is not None else sys.stderr
        self.key = jax.random.PRNGKey(seed)
        self.env = shared_env("reversi", size=8)
        self.state = jax.device_get(records.jitted(self.env)[0](0))
        #: per board size: (policy, jitted policy, jitted value or None, jitted probs or None)
        self._players: dict[int, tuple[Any, Any, Any, Any]] = {}
        self.moves = 0

    def _warn(self, text: str) -> None:
        print(f"warning: {text}", file=self.err, flush=True)

    def _player(self) -> tuple[Any, Any, Any, Any]:
        size = self.env.size
        if size not in self._players:
            policy = self.make_policy(self.env)  # ValueError: this player cannot play here
            value = jax.jit(policy.value) if hasattr(policy, "value") else None
            probs = jax.jit(policy.probs) if hasattr(policy, "probs") else None
            self._players[size] = (policy, jax.jit(policy), value, probs)
        return self._players[size]

    def _set_game(self, ggf: str) -> None:
        try:
            record = transcripts.from_ggf(ggf, source="set game")
            env = shared_env("reversi", **record.options)  # one compilation per board size
            _, states = records.replay(record, env)
        except RecordError as e:
            self._warn(f"{e}; the position is unchanged")
            return
        self.env, self.state = env, states[-1]

    def _move(self, text: str) -> None:
        try:
            action = _parse_move(text, self.env.size)
            action = self.env.pass_action if action is None else action
            mask = np.asarray(self.state.legal_action_mask)
            if is_over(self.state) or not mask[action]:
                raise ValueError(f"illegal here; legal: {_legal_names(mask, self.env.size)}")
        except ValueError as e:
            self._warn(f"move {text!r}: {e}; the position is unchanged")
            return
        step = records.jitted(self.env)[1]
        self.state = jax.device_get(step(self.state, action))

    def _choose(self) -> tuple[int, float | None, float]:
        """(action, value for the mover or None, seconds)."""
        t0 = time.perf_counter()
        _, policy, value_fn, _ = self._player()
        self.key, k = jax.random.split(self.key)
        action = int(policy(k, self.state))
        value = None if value_fn is None else float(value_fn(self.state))
        return action, value, time.perf_counter() - t0

    def _eval(self, value: float | None) -> str:
        """NBoard evaluations are disc margins: the value in [-1, 1] scaled to the board's
        squares (a network's outcome estimate, not a disc count)."""
        return "0.00" if value is None else f"{value * self.env.size**2:.2f}"

    def handle(self, line: str) -> list[str]:
        """The reply lines to one command line (``quit`` is the caller's)."""
        words = line.split()
        if not words:
            return []
        cmd, args = words[0], words[1:]
        if cmd == "nboard":
            if args and args[0] not in ("1", "2"):
                self._warn(f"NBoard protocol {args[0]} is not known; answering as version 2")
            return [f"set myname {self.name}"]
        if cmd == "set" and args:
            if args[0] == "game":
                self._set_game(line.split("game", 1)[1].strip())
            elif args[0] == "depth":
                return [f"set myname {self.name}"]  # the player decides its own search
            return []
        if cmd == "move" and args:
            self._move(args[0])
            return []
        if cmd == "ping":
            return [f"pong {' '.join(args)}".strip()]
        if cmd == "learn":
            return ["learned"]
        if cmd in ("go", "hint"):
            if is_over(self.state):
                self._warn(f"{cmd}: the game is over")
                return ["status the game is over"] if cmd == "hint" else []
            try:
                action, value, seconds = self._choose()
            except ValueError as e:
                self._warn(f"{cmd}: {e}")
                return ["status " + str(e).splitlines()[0][:100]]
            move = move_text(self.env, action)
            if cmd == "go":
                return [
                    f"status {self.name} is thinking",
                    f"=== {move}/{self._eval(value)}/{seconds:.3f}",
                    "status",
                ]
            return self._hint(
                int(args[0]) if args and args[0].isascii() and args[0].isdigit() else 1, move, value
            )
        if re.fullmatch(r"[A-Za-z][0-9]{1,2}(/.*)?|PA|pa", cmd):  # NBoard 1.1: a bare move
            self._move(cmd)
        return []  # the protocol: ignore what is not understood

    def _hint(self, n: int, move: str, value: float | None) -> list[str]:
        """``search`` lines for up to ``n`` moves: a network's most probable (each with its
        probability), else the player's move."""
        probs_fn = self._player()[3]
        lines = [f"status {self.name} is thinking"]
        if probs_fn is not None:
            probs = np.asarray(probs_fn(self.state))
            order = [a for a in np.argsort(-probs, kind="stable") if probs[a] > 0][: max(1, n)]
            for a in order:
                lines.append(
                    f"search {move_text(self.env, int(a))} {self._eval(value)} 0 1 p={probs[a]:.3f}"
                )
        else:
            lines.append(f"search {move} {self._eval(value)} 0 1")
        return lines + ["status"]


def serve(
    make_policy: Callable[[Env], Policy],
    name: str,
    lines: Iterable[str],
    out: TextIO,
    *,
    seed: int = 0,
    err: TextIO | None = None,
) -> int:
    """Answer NBoard commands from ``lines`` on ``out`` until ``quit`` or the end of input;
    ``make_policy(env)`` builds the player for a board size (``ValueError`` if it cannot play
    it). Returns 0."""
    session = EngineSession(make_policy, name, seed=seed, err=err)
    try:
        for line in lines:
            if line.strip() == "quit":
                break
            for reply in session.handle(line.strip()):
                out.write(reply + "\n")
            out.flush()
    except BrokenPipeError:  # the GUI went away: nothing is left to answer
        pass
    return 0


atexit.register(close_all)
