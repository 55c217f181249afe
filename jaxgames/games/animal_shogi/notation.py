"""Animal shogi text and board view, in plain Python / numpy.

Positions are SFEN-like, ``"gle/1c1/1C1/ELG b - 1"``: ranks 1..4 separated by ``/`` (digits =
runs of empty squares), side to move ``b`` (sente) or ``w`` (gote), hands (``-`` or e.g.
``"2Ce"``, sente's uppercase), move number (plies + 1), then ``end`` for a finished game the
position does not show. A position read back restarts the repetition count. Moves ``"b3b2"``
(a ``+`` suffix optional), drops ``"C*b2"``.
"""

from __future__ import annotations

import re

import numpy as np

from jaxgames.core import action_index
from jaxgames.games import grid
from jaxgames.games.animal_shogi.rules import (
    CHICK,
    ELEPHANT,
    EMPTY,
    GIRAFFE,
    HAND_CHARS,
    HEN,
    LION,
    MOVE_TO,
    MOVES,
    NUM_ACTIONS,
    NUM_MOVE_ACTIONS,
    OPP_MOVES,
    PIECE_CHARS,
    TO_SQ,
    AnimalShogiSpec,
    AnimalShogiState,
)
from jaxgames.validation import quote
from jaxgames.view import BoardStyle, BoardView, Piece


# ----------------------------------------------------------------------------- actions
def action_parts(action: int, player: int) -> tuple[int, int, int]:
    """Pure-Python :func:`~.rules.decode_action`: absolute (from_sq, to_sq, drop_kind)."""
    action, player = action_index(action), int(player)
    if not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action {action} is out of range 0..{NUM_ACTIONS - 1}")
    absolute = lambda x: 11 - x if (player == 1 and x >= 0) else x  # noqa: E731
    if action >= NUM_MOVE_ACTIONS:
        kind, t = divmod(action - NUM_MOVE_ACTIONS, 12)
        return -1, absolute(t), kind
    return absolute(action % 12), absolute(int(MOVE_TO[action])), -1


def encode_move(from_sq: int, to_sq: int, player: int) -> int:
    """Absolute squares of a one-step move by ``player`` -> action id; ValueError if not a step."""
    rel = lambda x: 11 - x if player == 1 else x  # noqa: E731
    s, t = rel(from_sq), rel(to_sq)
    for d in range(8):
        if TO_SQ[d, s] == t:
            return d * 12 + s
    raise ValueError(
        f"{grid.square_name(from_sq, 3)} to {grid.square_name(to_sq, 3)} is not a one-step move"
    )


def encode_drop(kind: int, to_sq: int, player: int) -> int:
    """Drop of hand kind (0 giraffe, 1 elephant, 2 chick) on absolute ``to_sq`` -> action id."""
    return NUM_MOVE_ACTIONS + 12 * kind + (11 - to_sq if player == 1 else to_sq)


def action_text(action: int, player: int) -> str:
    """Move text of ``action`` for ``player`` (pure Python): ``"b3b2"`` or ``"C*b2"``."""
    f, t, kind = action_parts(action, player)
    if kind >= 0:
        return f"{HAND_CHARS[kind]}*{grid.square_name(t, 3)}"
    if t < 0:
        raise ValueError(f"action {action} moves off the board from {grid.square_name(f, 3)}")
    return grid.square_name(f, 3) + grid.square_name(t, 3)


# ----------------------------------------------------------------------------- text
def position_text(board, hand, player: int, step_count: int, game_over: bool = False) -> str:
    """SFEN-like text of an absolute position; ``game_over`` appends the ``end`` field."""
    board = [int(x) for x in np.asarray(board).reshape(-1)]
    hand = np.asarray(hand).reshape(2, 3)
    ranks = []
    for r in range(4):
        out, run = "", 0
        for c in range(3):
            code = board[r * 3 + c]
            if code == EMPTY:
                run += 1
                continue
            if run:
                out, run = out + str(run), 0
            out += PIECE_CHARS[code]
        ranks.append(out + (str(run) if run else ""))
    hands = ""
    for pl in range(2):
        for k in range(3):
            n = int(hand[pl, k])
            if n:
                letter = HAND_CHARS[k] if pl == 0 else HAND_CHARS[k].lower()
                hands += (str(n) if n > 1 else "") + letter
    text = f"{'/'.join(ranks)} {'bw'[int(player)]} {hands or '-'} {int(step_count) + 1}"
    return f"{text} {grid.GAME_OVER}" if game_over else text


def _reject(text: str, why: str):
    raise ValueError(f"malformed animal shogi position {quote(text, 120)}: {why}")


def parse_position(spec: AnimalShogiSpec, text: str, with_game_over: bool = False):
    """SFEN-like text -> (board int32[12], hand int32[2, 3], player, step_count[, ``end``
    given]); ``ValueError`` naming what is wrong."""
    grid.check_text(text, "a position", "gle/1c1/1C1/ELG b - 1")
    parts = grid.fields(text)
    game_over = len(parts) == 5 and parts[4] == grid.GAME_OVER
    if game_over:
        parts = parts[:4]
    if len(parts) != 4:
        _reject(
            text,
            "expected 4 space-separated fields: board side hands move-number, "
            "e.g. 'gle/1c1/1C1/ELG b - 1' (and 'end' for a finished game)",
        )
    rows, side, hands, number = parts
    ranks = rows.split("/")
    if len(ranks) != 4:
        _reject(text, f"the board needs 4 ranks separated by '/', got {len(ranks)}")
    board = []
    for r, rank in enumerate(ranks):
        cells = []
        for ch in rank:
            if ch in "123":
                cells += [EMPTY] * int(ch)
            elif ch in PIECE_CHARS[1:]:
                cells.append(PIECE_CHARS.index(ch))
            else:
                _reject(
                    text,
                    f"unknown character {ch!r} in rank {r + 1}; use L G E C H (sente), "
                    "l g e c h (gote) and digits 1-3 for empty squares",
                )
        if len(cells) != 3:
            _reject(text, f"rank {r + 1} ({quote(rank)}) covers {len(cells)} squares, expected 3")
        board += cells
    if side not in ("b", "w"):
        _reject(
            text,
            f"side to move {quote(side)} must be 'b' (sente, player 0) or 'w' (gote, player 1)",
        )
    player = "bw".index(side)
    hand = np.zeros((2, 3), np.int32)
    if hands != "-":
        tokens = re.findall(r"(2?)([A-Za-z])", hands)
        if "".join(n + c for n, c in tokens) != hands:
            _reject(
                text,
                f"hands {quote(hands)} must be '-' or letters, each after a count of 2 when "
                "there are two, such as '2Ce'",
            )
        for count, letter in tokens:
            if letter.upper() == "H":
                _reject(text, "a hen cannot be in hand (a captured hen returns as a chick 'C')")
            if letter.upper() == "L":
                _reject(text, "a lion cannot be in hand")
            if letter.upper() not in HAND_CHARS:
                _reject(text, f"unknown hand piece {letter!r}; use G E C (sente) or g e c (gote)")
            n = int(count) if count else 1
            pl, k = (0 if letter.isupper() else 1), HAND_CHARS.index(letter.upper())
            if n < 1 or hand[pl, k]:
                _reject(text, f"hand piece {letter!r} given twice or with count {n}")
            hand[pl, k] = n
    if re.fullmatch(r"[1-9][0-9]{0,8}", number) is None:
        _reject(text, f"move number {quote(number)} must be a positive integer such as 1")
    move = int(number)
    # a game ended by an illegal move counts the attempt as a ply without passing the turn
    if (move - 1) % 2 != player and not game_over:
        _reject(
            text,
            f"move number {move} is {'sente' if move % 2 else 'gote'}'s ply "
            f"(sente moves on odd numbers) but the side to move is {side!r}",
        )
    max_steps = spec.max_steps
    if move > max_steps + 1:  # move max_steps + 1 is a game cut off by the cap (truncated)
        _reject(
            text,
            f"move number {move} is past the game-length cap: with max_steps={max_steps} "
            f"the last move number is {max_steps + 1} (a truncated game)",
        )
    for pl, name in ((0, "sente"), (1, "gote")):
        lions = board.count(LION + 5 * pl)
        if lions != 1:
            _reject(text, f"{name} must have exactly one lion, found {lions}")
    for kinds, k, name in (
        ((GIRAFFE,), 0, "giraffes"),
        ((ELEPHANT,), 1, "elephants"),
        ((CHICK, HEN), 2, "chicks and hens"),
    ):
        total = sum(board.count(c) + board.count(c + 5) for c in kinds) + int(hand[:, k].sum())
        if total > 2:
            _reject(text, f"{total} {name} on board and in hand; the game has only 2")
    b = np.array(board, np.int32)
    view = b if player == 0 else _np_rotate(b)
    if np.any(view[:3] == LION):
        _reject(text, "impossible position: the side to move already has its lion on the far rank")
    opp_view = _np_rotate(view)  # the opponent's frame: its lion is code 1
    if int(np.flatnonzero(opp_view == LION)[0]) in _np_attacked(opp_view):
        _reject(text, "impossible position: the side to move could capture the opponent's lion")
    return (b, hand, player, move - 1) + ((game_over,) if with_game_over else ())


def _np_rotate(view: np.ndarray) -> np.ndarray:
    """numpy :func:`rotate`."""
    v = np.asarray(view)
    return np.where(v == EMPTY, EMPTY, np.where(v <= 5, v + 5, v - 5))[::-1].astype(np.int32)


def _np_attacked(view: np.ndarray) -> set[int]:
    """Squares the opponent attacks in a mover-frame ``view``."""
    return {
        int(TO_SQ[d, s])
        for s, code in enumerate(np.asarray(view))
        if code > 5
        for d in OPP_MOVES[int(code) - 5]
        if TO_SQ[d, s] >= 0
    }


def parse_move(state: AnimalShogiState, text: str) -> tuple[int, str]:
    """Move text in one state -> ``(action, why it would be illegal here)``; ``ValueError`` for
    malformed text, an off-board square, a step of more than one square or a misplaced ``+``."""
    grid.check_text(text, "a move", "b3b2")
    player = int(state.current_player)
    board = np.asarray(state.board)
    rel = lambda x: 11 - x if player == 1 else x  # noqa: E731  absolute -> mover square
    s = text.strip(" \t\r\n")
    drop = re.fullmatch(r"([A-Za-z])\*([A-Za-z0-9]+)", s)
    move = re.fullmatch(r"([a-zA-Z][0-9])([a-zA-Z][0-9])(\+?)", s)
    if drop:
        letter = drop.group(1).upper()
        if letter not in HAND_CHARS:
            raise ValueError(f"illegal drop {quote(s)}: only G, E or C can be dropped")
        kind = HAND_CHARS.index(letter)
        to_sq = grid.parse_square(drop.group(2), 4, 3)
        action = encode_drop(kind, to_sq, player)
        if int(state.hand[player, kind]) == 0:
            why = f"you have no {letter} in hand"
        elif board[to_sq] != EMPTY:
            why = f"{grid.square_name(to_sq, 3)} is occupied"
        else:
            why = "your lion would stay attacked"
    elif move:
        from_sq = grid.parse_square(move.group(1), 4, 3)
        to_sq = grid.parse_square(move.group(2), 4, 3)
        action = encode_move(from_sq, to_sq, player)
        view = board if player == 0 else _np_rotate(board)
        piece = int(view[rel(from_sq)])
        if not 1 <= piece <= 5:
            why = f"you have no piece on {grid.square_name(from_sq, 3)}"
        elif action // 12 not in MOVES[piece]:
            animal = ("lion", "giraffe", "elephant", "chick", "hen")[piece - 1]
            why = f"a {animal} cannot move that way"
        elif 1 <= int(view[rel(to_sq)]) <= 5:
            why = f"your own piece is on {grid.square_name(to_sq, 3)}"
        else:
            why = "it would leave your lion attacked"
        if move.group(3) and not (piece == CHICK and rel(to_sq) < 3):
            raise ValueError(f"bad move {quote(s)}: '+' only marks a chick reaching the far rank")
    else:
        raise ValueError(
            f"malformed move {quote(text)}: expected a move such as 'b3b2' or a drop such as 'C*b2'"
        )
    return action, why


# ----------------------------------------------------------------------------- board view
SIDE_NAMES = ("sente", "gote")
#: what each piece letter is (SVG ``data-piece``)
ANIMALS = {"l": "lion", "g": "giraffe", "e": "elephant", "c": "chick", "h": "hen"}
STYLE = BoardStyle(board="#f3deb0", grid="#8b6b3e", pieces="tile")


def _piece(symbol: str) -> Piece:
    """A tile with the capital letter: uppercase symbols are sente's, lowercase gote's."""
    return Piece(symbol, 0 if symbol.isupper() else 1, ANIMALS[symbol.lower()], symbol.upper())


def board_view(spec: AnimalShogiSpec, state: AnimalShogiState) -> BoardView:
    """Lettered tiles, both hands and the move number."""
    codes = [int(x) for x in np.asarray(state.board).reshape(-1)]
    hand = np.asarray(state.hand).reshape(2, 3)
    cells = [None if c == EMPTY else _piece(PIECE_CHARS[c]) for c in codes]
    hands = tuple(
        tuple(
            _piece(HAND_CHARS[k] if pl == 0 else HAND_CHARS[k].lower())
            for k in range(3)
            for _ in range(int(hand[pl, k]))
        )
        for pl in range(2)
    )
    return BoardView(
        "animal_shogi",
        tuple(tuple(cells[r * 3 : r * 3 + 3]) for r in range(4)),
        int(state.current_player),
        STYLE,
        hands=hands,
        move_number=int(state.step_count) + 1,
    )
