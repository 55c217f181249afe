"""Game records: a game as plain text, saved, loaded and replayed move by move.

A record is a header of ``key: value`` lines, a blank line, then one move per line in the
game's own move notation (``env.action_to_text``), or ``illegal:N`` for an agent's illegal
action N, which ends the game against it. Lines starting with ``#`` are comments::

    # jaxgames game record
    game: reversi
    options: {"size": 8}
    player0: human
    player1: alphabeta:3
    date: 2026-11-21T10:40:00Z
    result: 0-1

    d3
    c5
    ...

Header keys: ``game`` (required), ``options`` (JSON ``jaxgames.make`` keywords, default
``{}``), ``player0``/``player1`` (``human`` or an agent spec), ``date`` (ISO 8601, UTC),
``result`` (``1-0``, ``0-1``, ``1/2-1/2`` or ``*`` unfinished), optional ``start`` (position
notation, when not ``env.init``), ``rules`` (the game's rules version, absent: 1; reading a
record made under another version warns); other keys are kept in ``extra``. :func:`load`
replays every move and reports the first bad line as ``FILE:LINE: ...`` (a
:class:`RecordError`).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import re
import unicodedata
from typing import Any, Sequence

import jax

from jaxgames import render
from jaxgames.core import DEFAULT_RULES_VERSION, check_rules_version, is_over
from jaxgames.games import env_class, make, registered_games
from jaxgames.validation import quote

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
#: an agent's illegal action in a move list (the terminal and the web board write it)
_ILLEGAL_MOVE = re.compile(r"illegal:([0-9]{1,12})")
_HEADER = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(.*)")
_KNOWN = ("game", "options", "player0", "player1", "date", "result", "start", "rules")


def illegal_action(move: str, num_actions: int) -> int | None:
    """The action of an ``illegal:N`` move (one past the range stands for any beyond it), or
    ``None`` for any other move."""
    m = _ILLEGAL_MOVE.fullmatch(str(move))
    return None if m is None else min(int(m[1]), num_actions)


class RecordError(ValueError):
    """A malformed or illegal game record; the message starts with ``SOURCE:LINE:``."""


@dataclasses.dataclass
class GameRecord:
    """One game. ``lines``: the 1-based line of each header key and move in the parsed text."""

    game: str
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    players: tuple[str, str] = ("?", "?")
    moves: list[str] = dataclasses.field(default_factory=list)
    date: str = ""
    result: str = "*"
    start: str | None = None
    rules_version: int = DEFAULT_RULES_VERSION
    extra: dict[str, str] = dataclasses.field(default_factory=dict)
    lines: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def make_env(self) -> Any:
        """``jaxgames.make(game, **options)``; :class:`RecordError` naming the line."""
        try:
            return make(self.game, **self.options)
        except ValueError as e:
            key = "options" if self.options and self.game in registered_games() else "game"
            raise RecordError(f"{self._where(key)}{e}") from None

    def _repr_svg_(self) -> str | None:
        """Jupyter: the whole game as an animated SVG (None if the moves do not replay)."""
        try:
            env, states = replay(self)
        except RecordError:
            return None
        return render.svg_animation(states, env, self.moves)

    def _where(self, key: str, index: int | None = None) -> str:
        src = self.lines.get("source", "<record>")
        line = (
            self.lines["moves"][index]
            if index is not None and "moves" in self.lines
            else self.lines.get(key)
        )
        return f"{src}:{line}: " if line else f"{src}: "


def result_of(state: Any) -> str:
    """``*`` while the game is on, else ``1-0``/``0-1``/``1/2-1/2`` from the final rewards."""
    if not is_over(state):
        return "*"
    r0, r1 = float(state.rewards[0]), float(state.rewards[1])
    return "1-0" if r0 > r1 else "0-1" if r1 > r0 else "1/2-1/2"


def winner_of(result: str) -> int | None:
    """``"1-0"`` -> 0, ``"0-1"`` -> 1, ``"1/2-1/2"`` -> -1 (draw), ``"*"`` -> None."""
    return {"1-0": 0, "0-1": 1, "1/2-1/2": -1}.get(result)


def new_record(
    env: Any,
    moves: Sequence[str],
    players: Sequence[str],
    *,
    final_state: Any = None,
    start: str | None = None,
    date: str | None = None,
    **extra: str,
) -> GameRecord:
    """A record of a game played in ``env`` (result from ``final_state``, else ``*``)."""
    if date is None:
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return GameRecord(
        game=env.name,
        options=dict(env.config),
        players=(str(players[0]), str(players[1])),
        moves=list(moves),
        date=date,
        result="*" if final_state is None else result_of(final_state),
        start=start,
        rules_version=env.rules_version,
        extra={k: str(v) for k, v in extra.items()},
    )


def to_text(record: GameRecord) -> str:
    """The record as text (see the module docstring)."""
    head = [
        "# jaxgames game record",
        f"game: {record.game}",
        f"options: {json.dumps(record.options, sort_keys=True)}",
        f"player0: {record.players[0]}",
        f"player1: {record.players[1]}",
        f"date: {record.date}",
        f"result: {record.result}",
    ]
    if record.start is not None:
        head.append(f"start: {record.start}")
    head.append(f"rules: {record.rules_version}")
    head += [f"{k}: {v}" for k, v in record.extra.items()]
    return "\n".join(head) + "\n\n" + "".join(f"{m}\n" for m in record.moves)


def parse(text: str, source: str = "<record>") -> GameRecord:
    """Parse a record's text (syntax only; :func:`replay` checks the moves);
    :class:`RecordError` ``"SOURCE:LINE: problem"``."""
    fields: dict[str, str] = {}
    lines: dict[str, Any] = {"source": source, "moves": []}
    moves: list[str] = []
    in_header = True
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#"):
            continue
        if in_header:
            if not line:
                if fields:
                    in_header = False
                continue
            m = _HEADER.fullmatch(line)
            if not m:
                raise RecordError(
                    f"{source}:{no}: expected a header line 'key: value' (then a blank line and "
                    f"the moves), got {quote(line)}"
                )
            key = m.group(1).lower()
            if key in fields:
                raise RecordError(f"{source}:{no}: header {quote(key)} given twice")
            control = [c for c in m.group(2) if c != "\t" and unicodedata.category(c) == "Cc"]
            if control:  # printed as they are, they would drive the terminal that shows them
                raise RecordError(
                    f"{source}:{no}: header {quote(key)} holds a control character "
                    f"({control[0]!r}); a header value is plain text"
                )
            fields[key], lines[key] = m.group(2).strip(), no
            continue
        if not line:
            continue
        if len(line.split()) != 1:
            raise RecordError(f"{source}:{no}: expected one move per line, got {quote(line)}")
        moves.append(line)
        lines["moves"].append(no)
    if "game" not in fields:
        raise RecordError(f"{source}:1: the header has no 'game: NAME' line")
    try:
        options = json.loads(fields.get("options", "{}") or "{}")
    except json.JSONDecodeError as e:
        raise RecordError(
            f"{source}:{lines['options']}: options must be a JSON object: {e}"
        ) from None
    if not isinstance(options, dict):
        raise RecordError(
            f'{source}:{lines["options"]}: options must be a JSON object like {{"size": 8}}'
        )
    result = fields.get("result", "*") or "*"
    if result not in RESULTS:
        raise RecordError(
            f"{source}:{lines['result']}: unknown result {quote(result)}; "
            f"use one of {', '.join(RESULTS)}"
        )
    rules = fields.get("rules", str(DEFAULT_RULES_VERSION))
    if not (rules.isascii() and rules.isdigit() and int(rules) >= 1):
        raise RecordError(
            f"{source}:{lines['rules']}: rules must be the game's rules version, an integer "
            f">= 1, got {quote(rules)}"
        )
    if fields["game"] in registered_games():
        current = env_class(fields["game"]).rules_version
        check_rules_version(source, fields["game"], int(rules), current)
    return GameRecord(
        game=fields["game"],
        options=options,
        players=(fields.get("player0", "?"), fields.get("player1", "?")),
        moves=moves,
        date=fields.get("date", ""),
        result=result,
        start=fields.get("start"),
        rules_version=int(rules),
        extra={k: v for k, v in fields.items() if k not in _KNOWN},
        lines=lines,
    )


@functools.lru_cache(maxsize=16)
def jitted(env: Any) -> tuple[Any, Any]:
    """``(init(seed) -> state, step(state, action) -> state)`` of ``env``, jitted once per env
    (replaying and playing share the compilation)."""
    return jax.jit(lambda seed: env.init(jax.random.PRNGKey(seed))), jax.jit(env.step)


def replay(record: GameRecord, env: Any = None) -> tuple[Any, list[Any]]:
    """Play every move: ``(env, states)``, ``states[i]`` the position after ``i`` moves.
    :class:`RecordError` ``"SOURCE:LINE: move N 'x': why"`` at the first bad move, or for a
    ``result`` that disagrees with the final position."""
    env = record.make_env() if env is None else env
    init, step = jitted(env)
    if record.start is not None:
        try:
            state = env.from_text(record.start)
        except ValueError as e:
            raise RecordError(f"{record._where('start')}bad start position: {e}") from None
    else:
        state = init(0)
    state = jax.device_get(state)  # host copies: checking moves runs no eager device ops
    states = [state]
    for i, mv in enumerate(record.moves):
        where = record._where("moves", i)
        if is_over(state):
            raise RecordError(
                f"{where}move {i + 1} {quote(mv)}: the game is already over ({result_of(state)})"
            )
        action = illegal_action(mv, env.num_actions)
        if action is not None:  # the mover loses: the action must not be a legal move
            if action < env.num_actions and bool(state.legal_action_mask[action]):
                raise RecordError(f"{where}move {i + 1} {quote(mv)}: action {action} is legal")
            state = jax.device_get(step(state, action))
            states.append(state)
            continue
        try:
            action = int(env.text_to_action(state, mv))
        except ValueError as e:
            raise RecordError(f"{where}move {i + 1} {quote(mv)}: {e}") from None
        if not 0 <= action < env.num_actions or not bool(state.legal_action_mask[action]):
            raise RecordError(
                f"{where}move {i + 1} {quote(mv)}: illegal here; legal: {env.describe_legal(state)}"
            )
        state = jax.device_get(step(state, action))
        states.append(state)
    final = result_of(state)
    # a record of no moves from a decided start may say 1/2-1/2, as records written by
    # versions that read positions without their result do; the replayed state has the result
    stale = not record.moves and record.start is not None and record.result == "1/2-1/2"
    if record.result != "*" and record.result != final and not stale:
        raise RecordError(
            f"{record._where('result')}result {quote(record.result)} does not match the moves, "
            f"which end in {final!r}"
        )
    return env, states


def save(path: str, record: GameRecord) -> None:
    """Write ``record`` to ``path`` as text (UTF-8)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(to_text(record))


def read_text(path: str) -> str:
    """The UTF-8 text of the record file ``path`` (a GGF file may be Latin-1);
    :class:`RecordError` naming the file and the byte offset if it is not text (an image, a
    binary saved by mistake)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")  # a byte-order mark is no text
    except UnicodeDecodeError as e:
        if raw.lstrip().startswith(b"(;") and b"\0" not in raw:
            return raw.decode("latin-1")  # a GGF file of the othello servers' era
        byte = raw[e.start : e.start + 1]
        raise RecordError(
            f"{path}: not a text game record (byte {e.start}, {byte!r}, is not UTF-8)"
        ) from None


def load(path: str, validate: bool = True) -> GameRecord:
    """Read a record from ``path`` (with ``validate``, replay it): :class:`RecordError` naming
    the file and line of the first problem."""
    record = parse(read_text(path), source=str(path))
    if validate:
        replay(record)
    return record
