"""Text helpers shared by games on a rectangular grid (tic-tac-toe, reversi).

Squares are named like chess squares but counted from the *top*: file letter ``a..`` is the
column (col 0 = ``a``), rank number ``1..`` is the row (row 0 = rank 1)::

        a  b  c
    1   0  1  2        action/square index = row * width + col
    2   3  4  5
    3   6  7  8
"""

from __future__ import annotations

import re

_FILES = "abcdefghijklmnopqrstuvwxyz"


def square_name(index: int, width: int) -> str:
    """``index`` (row*width+col) -> name such as ``"d3"``."""
    row, col = divmod(int(index), width)
    return f"{_FILES[col]}{row + 1}"


def parse_square(text: str, height: int, width: int) -> int:
    """Name such as ``"d3"`` (case-insensitive) -> index; ``ValueError`` if malformed or off
    board."""
    m = re.fullmatch(r"\s*([a-zA-Z])(\d{1,2})\s*", text)
    if not m:
        raise ValueError(
            f"malformed square {text!r}: expected a file letter and a rank number, e.g. 'b2'"
        )
    col = _FILES.index(m.group(1).lower())
    row = int(m.group(2)) - 1
    if not (0 <= col < width and 0 <= row < height):
        last = f"{_FILES[width - 1]}{height}"
        raise ValueError(f"square {text.strip()!r} is off the {height}x{width} board (a1..{last})")
    return row * width + col


def parse_grid_position(text: str, cells: int, symbols: str, sides: str) -> tuple[list[int], int]:
    """Parse ``"<cells chars> <side>"``.

    ``symbols``: one char per cell value, e.g. ``".XO"`` maps ``.``->0, ``X``->1, ``O``->2.
    ``sides``: the side-to-move chars for player 0 and player 1, e.g. ``"XO"``.
    Returns (cell values, player to move). ``ValueError`` names what is wrong.
    """
    parts = text.strip().split()
    if len(parts) != 2:
        raise ValueError(
            f"malformed position {text!r}: expected {cells} board characters, a space, "
            "and the side to move"
        )
    board, side = parts
    if len(board) != cells:
        raise ValueError(
            f"malformed position {text!r}: board has {len(board)} characters, expected {cells}"
        )
    bad = sorted(set(board) - set(symbols))
    if bad:
        raise ValueError(
            f"malformed position {text!r}: unknown board character(s) {bad}; use {list(symbols)}"
        )
    if side not in sides:
        raise ValueError(
            f"malformed position {text!r}: side to move {side!r} must be one of {list(sides)}"
        )
    return [symbols.index(c) for c in board], sides.index(side)
