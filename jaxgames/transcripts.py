"""Reversi games in the othello world's transcripts: move strings and GGF.

**Move strings** (``f5d6c3d3c4f4...``): the squares played from the standard start, letter
case and spaces ignored. Passes are not written: reading inserts one wherever the mover has no
placement, and the two that end a game neither side can continue. Squares are named as in
jaxgames, which is the othello convention (``f5`` is one of black's four opening moves).

**GGF** (the GGS othello servers' Generic Game Format, one game per ``(; ... ;)``)::

    (;GM[Othello]DT[2026.11.21_10:40:00.UTC]PB[human]PW[engine:3]RE[+12.00]TY[8]
    BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]
    B[f5]W[d6]B[c3]...;)

``BO`` is the start (rows from rank 1, ``*`` black, ``O`` white, ``-`` empty, then the mover),
``TY`` the board size (any even size jaxgames plays; a random start ``TY[8r16]`` reads too),
``RE`` black's disc margin with the empty squares given to the winner (a check when read),
moves ``B[f5]``/``W[d6]`` (an evaluation or time after ``/`` is ignored), ``PA`` a pass (forced
ones may be left out). Other properties are kept in ``extra`` as ``ggf-pc`` etc.

Animal shogi has no notation in wide use (CSA, KIF and USI are for the 9x9 board): its records
stay in the jaxgames format. Errors are :class:`~jaxgames.records.RecordError`.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from typing import Any, Sequence

import jax

from jaxgames import records
from jaxgames.core import is_over
from jaxgames.games import shared_env
from jaxgames.records import GameRecord, RecordError
from jaxgames.validation import quote

_MOVE = re.compile(r"([a-zA-Z])([1-9][0-9]?)")
_GGF_GAME = re.compile(r"\(;(.*?);\)", re.DOTALL)
_GGF_PROP = re.compile(r"\s*([A-Za-z]+)\[([^\]]*)\]")
_GGF_TYPE = re.compile(r"(\d+)(r\d+)?")
_GGF_DATE = re.compile(r"(\d{4})\.(\d\d)\.(\d\d)_(\d\d):(\d\d):(\d\d)\.(UTC|GMT)")
_ISO_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z")
_GGF_DISCS = {"-": "-", "*": "X", "O": "O"}
_PASSES = ("pa", "pass")


# ---------------------------------------------------------------------------- playing moves
def _play(
    env: Any, start: Any, moves: Sequence[tuple[str, int | None]], source: str
) -> tuple[list[str], Any]:
    """Play ``(move text, colour or None)`` pairs from ``start``, inserting forced passes:
    (the moves in jaxgames notation, the final state)."""
    _, step = records.jitted(env)
    state, played = start, []

    def forced_pass() -> bool:
        mask = state.legal_action_mask
        return not is_over(state) and bool(mask[env.pass_action]) and not mask[:-1].any()

    for i, (text, colour) in enumerate(moves, 1):
        where = f"{source}: move {i} {quote(text)}: "
        if text.lower() not in _PASSES:
            while forced_pass():  # an implied pass: the side to move has no placement
                state = jax.device_get(step(state, env.pass_action))
                played.append("pass")
        if is_over(state):
            raise RecordError(f"{where}the game is already over ({records.result_of(state)})")
        if colour is not None and colour != int(state.current_player):
            side = env.side_names[int(state.current_player)]
            raise RecordError(f"{where}played by {env.side_names[colour]}, but {side} is to move")
        try:
            action = env.text_to_action(state, "pass" if text.lower() in _PASSES else text)
        except ValueError as e:
            raise RecordError(f"{where}{e}") from None
        state = jax.device_get(step(state, action))
        played.append(env.action_to_text(state, action))
    if forced_pass():  # the two passes of a game neither side can continue
        after = jax.device_get(step(state, env.pass_action))
        if not after.legal_action_mask[:-1].any():  # else the record stops before a move
            for _ in range(2):
                state = jax.device_get(step(state, env.pass_action))
                played.append("pass")
    return played, state


def _env(size: int, source: str) -> Any:
    """The shared reversi env of ``size`` (one compilation of its step per size)."""
    try:
        return shared_env("reversi", size=size)
    except ValueError as e:
        raise RecordError(f"{source}: {e}") from None


def _reversi(record: GameRecord, what: str) -> Any:
    if record.game != "reversi":
        raise ValueError(f"{what} are for reversi games, not {record.game!r}")
    record.make_env()  # RecordError naming the options line if they are bad
    return _env(**record.options, source=record.lines.get("source", "<record>"))


# ---------------------------------------------------------------------------- move strings
def to_move_string(record: GameRecord) -> str:
    """The placements of a reversi record from the standard start, e.g. ``"f5d6c3"``;
    ``ValueError`` for another game or start (:func:`to_ggf` keeps a start)."""
    env = _reversi(record, "move strings")
    if record.start is not None:
        raise ValueError("a move string starts from the standard position; this record has its own")
    records.replay(record, env)
    return "".join(m for m in record.moves if m != "pass")


def from_move_string(
    text: str,
    size: int = 8,
    *,
    players: Sequence[str] = ("?", "?"),
    source: str = "<move string>",
) -> GameRecord:
    """A reversi record of ``size`` from a move string, every move checked
    (``"SOURCE: move 5 'a1': illegal move 'a1': it flips no discs; ..."``)."""
    if not isinstance(text, str):
        raise RecordError(f"{source}: a move string must be a str, got {type(text).__name__}")
    squares, pos = [], 0
    compact = re.sub(r"\s+", "", text)
    for m in _MOVE.finditer(compact):
        if m.start() != pos:
            break
        squares.append(m.group(0).lower())
        pos = m.end()
    if pos != len(compact):
        raise RecordError(
            f"{source}: malformed move string at character {pos + 1} "
            f"({quote(compact[pos : pos + 8])}): expected squares such as 'f5d6c3'"
        )
    env = _env(size, source)
    init, _ = records.jitted(env)
    moves, final = _play(env, jax.device_get(init(0)), [(s, None) for s in squares], source)
    return records.new_record(env, moves, players, final_state=final, date="")


# ---------------------------------------------------------------------------- GGF
def _ggf_value(key: str, value: str) -> str:
    if "]" in value:
        raise ValueError(f"cannot write {key}[{value}] in GGF: a value cannot contain ']'")
    return f"{key}[{value}]"


def _ggf_date(iso: str) -> str:
    m = _ISO_DATE.fullmatch(iso)
    return f"{m[1]}.{m[2]}.{m[3]}_{m[4]}:{m[5]}:{m[6]}.UTC" if m else iso


def _iso_date(ggf: str) -> str:
    m = _GGF_DATE.fullmatch(ggf)
    if m:
        return f"{m[1]}-{m[2]}-{m[3]}T{m[4]}:{m[5]}:{m[6]}Z"
    if ggf.isascii() and ggf.isdigit():  # seconds since 1970, as some GGS files have it
        try:
            t = datetime.datetime.fromtimestamp(int(ggf), datetime.timezone.utc)
        except (OverflowError, OSError, ValueError):  # past what a date holds: kept as text
            return ggf
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    return ggf


def _margin(env: Any, state: Any) -> int:
    """Black's disc margin at the end, the empty squares counted for the winner (GGS)."""
    view = env.board_view(state)
    black, white = view.pieces(0), view.pieces(1)
    empty = view.rows * view.cols - black - white
    diff = black - white
    return diff + empty if diff > 0 else diff - empty if diff < 0 else 0


def ggf_board(env: Any, state: Any) -> str:
    """The ``BO`` value of a reversi position: ``"N rows... side"`` (``*`` black, ``O``
    white, ``-`` empty, rows from rank 1, then the mover)."""
    board, side = env.to_text(state).split()[:2]
    n = env.size
    rows = " ".join(board[r * n : (r + 1) * n] for r in range(n)).replace("X", "*")
    return f"{n} {rows} {'*' if side == 'X' else 'O'}"


def position_ggf(env: Any, state: Any, **props: str) -> str:
    """One GGF game with no moves whose start is the reversi position ``state`` (what an
    NBoard ``set game`` carries for a position alone); ``props``: more properties."""
    items = [("GM", "Othello"), *props.items(), ("TY", str(env.size))]
    items.append(("BO", ggf_board(env, state)))
    return "(;" + "".join(_ggf_value(k, v) for k, v in items) + ";)"


def to_ggf(record: GameRecord) -> str:
    """The reversi ``record`` as one GGF game on one line, the moves checked first."""
    env = _reversi(record, "GGF transcripts")
    _, states = records.replay(record, env)
    n = env.size
    props = [("GM", "Othello")]
    props += [(k[4:].upper(), v) for k, v in record.extra.items() if k.startswith("ggf-")]
    if record.date:
        props.append(("DT", _ggf_date(record.date)))
    props += [("PB", record.players[0]), ("PW", record.players[1])]
    if is_over(states[-1]):
        props.append(("RE", f"{_margin(env, states[-1]):+.2f}"))
    props += [("TY", str(n)), ("BO", ggf_board(env, states[0]))]
    player = [int(s.current_player) for s in states]
    moves = "".join(
        _ggf_value("BW"[player[i]], "PA" if mv == "pass" else mv)
        for i, mv in enumerate(record.moves)
    )
    return "(;" + "".join(_ggf_value(k, v) for k, v in props) + moves + ";)"


def ggf_games(text: str, source: str = "<ggf>") -> list[GameRecord]:
    """Every game ``(; ... ;)`` in ``text`` (a GGS file holds one per line), each checked."""
    games = _GGF_GAME.findall(text)
    if not games or _GGF_GAME.sub("", text).strip():
        raise RecordError(f"{source}: expected GGF games '(;GM[Othello]...;)' and nothing else")
    where = (lambda i: f"{source}: game {i}") if len(games) > 1 else (lambda i: source)
    return [_ggf_game(body, where(i)) for i, body in enumerate(games, 1)]


def from_ggf(text: str, source: str = "<ggf>") -> GameRecord:
    """The one GGF game in ``text`` as a checked record (see :func:`ggf_games` for several)."""
    games = ggf_games(text, source)
    if len(games) != 1:
        raise RecordError(
            f"{source}: holds {len(games)} games; a record is one game: split the file, one "
            "'(;...;)' per file (from Python, jaxgames.transcripts.ggf_games reads them all)"
        )
    return games[0]


def _plain(value: str) -> str:
    """A GGF property's value on one line: control characters (line breaks, escapes) are
    spaces, runs of spaces one."""
    return " ".join("".join(" " if unicodedata.category(c) == "Cc" else c for c in value).split())


def _ggf_game(body: str, source: str) -> GameRecord:
    props: dict[str, str] = {}
    moves: list[tuple[str, int | None]] = []
    pos = 0
    for m in _GGF_PROP.finditer(body):
        if m.start() != pos:
            break
        pos = m.end()
        key, value = m.group(1).upper(), _plain(m.group(2))
        if key in ("B", "W"):
            moves.append((value.split("/")[0].strip(), "BW".index(key)))
        elif key in props:
            raise RecordError(f"{source}: property {key} given twice")
        else:
            props[key] = value
    if body[pos:].strip():
        raise RecordError(
            f"{source}: malformed GGF at {quote(body[pos : pos + 20].strip())}: expected "
            "properties such as B[f5]"
        )
    if props.get("GM", "").lower() != "othello":
        raise RecordError(f"{source}: GM[{props.get('GM', '')}] is not GM[Othello]")
    size = None
    if "TY" in props:
        ty = _GGF_TYPE.fullmatch(props["TY"])
        if not ty:
            raise RecordError(
                f"{source}: unsupported game type TY[{props['TY']}]: jaxgames plays standard "
                "othello (TY[8], TY[6], ...) and random starts (TY[8r16])"
            )
        size = int(ty[1])
    start = None
    if "BO" in props:
        size, start = _ggf_board(props["BO"], size, source)
    env = _env(8 if size is None else size, source)
    init, _ = records.jitted(env)
    first = jax.device_get(init(0))
    if start == env.to_text(first):
        start = None
    try:
        state = first if start is None else jax.device_get(env.from_text(start))
    except ValueError as e:
        raise RecordError(f"{source}: BO[{props['BO']}]: {e}") from None
    played, final = _play(env, state, moves, source)
    result = records.result_of(final)
    margin = re.fullmatch(r"([+-]?\d+(?:\.\d*)?)", props.get("RE", ""))
    if margin and result != "*":
        sign = (float(margin[1]) > 0) - (float(margin[1]) < 0)
        if {1: "1-0", -1: "0-1", 0: "1/2-1/2"}[sign] != result:
            raise RecordError(
                f"{source}: RE[{props['RE']}] does not match the moves, which end in {result}"
            )
    known = ("GM", "TY", "BO", "PB", "PW", "DT", "RE")
    return GameRecord(
        game="reversi",
        options=dict(env.config),
        players=(props.get("PB", "?"), props.get("PW", "?")),
        moves=played,
        date=_iso_date(props.get("DT", "")),
        result=result,
        start=start,
        rules_version=env.rules_version,
        extra={f"ggf-{k.lower()}": v for k, v in props.items() if k not in known},
    )


def _ggf_board(value: str, size: int | None, source: str) -> tuple[int, str]:
    """``BO[8 rows... side]`` -> (size, jaxgames position text)."""
    parts = value.split()
    if len(parts) < 3 or not (parts[0].isascii() and parts[0].isdigit()):
        raise RecordError(f"{source}: malformed BO[{value}]: expected 'N rows... side'")
    n, board, side = int(parts[0]), "".join(parts[1:-1]), parts[-1]
    if size is not None and n != size:
        raise RecordError(f"{source}: BO[{value}] is {n}x{n} but TY says {size}")
    bad = sorted(set(board) - set(_GGF_DISCS))
    if len(board) != n * n or bad or side not in ("*", "O"):
        raise RecordError(
            f"{source}: malformed BO[{value}]: expected {n * n} of '-', '*', 'O', then '*' or "
            "'O' to move"
        )
    return n, "".join(_GGF_DISCS[c] for c in board) + " " + _GGF_DISCS[side]


# ---------------------------------------------------------------------------- files
def load(path: str) -> GameRecord:
    """A game record from ``path`` in GGF, a reversi 8x8 move string or the jaxgames format,
    every move checked; :class:`RecordError` naming ``path``."""
    return parse_any(records.read_text(path), source=str(path))


def parse_any(text: str, source: str = "<record>", validate: bool = True) -> GameRecord:
    """A game record from its text in any format :func:`load` reads, every move checked
    (``validate=False``: a jaxgames record's moves are left to the caller's
    :func:`~jaxgames.records.replay`); :class:`RecordError` naming ``source``."""
    text = text.removeprefix("\ufeff")  # a byte-order mark (text pasted from a file)
    body = text.strip()
    if body.startswith("(;"):
        return from_ggf(text, source=source)
    if body and re.fullmatch(r"[A-Za-z0-9\s]+", body) and _MOVE.match(body):
        return from_move_string(body, source=source)
    record = records.parse(text, source=source)
    if validate:
        records.replay(record)
    return record
