"""What grid games share: square names and position text, the strictness rules of every game's
notation, board symmetry tables, and the plane shift that input features are built from.

Squares are named like chess squares counted from the *top*: file ``a..`` is the column, rank
``1..`` the row::

        a  b  c
    1   0  1  2        square index = row * width + col
    2   3  4  5
    3   6  7  8

Notation is strict ASCII (no leading zeros), so an accepted text is the one ``to_text`` writes
up to letter case and spacing. A finished game whose board does not show the end (two passes,
a repetition, an illegal move) ends its position text with :data:`GAME_OVER`.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Symmetries
from jaxgames.validation import quote

_FILES = "abcdefghijklmnopqrstuvwxyz"
#: the last field of a finished game's position text when the board does not show the end
GAME_OVER = "end"
#: quoted positions are cut to this many characters (16x16 reversi fits)
POSITION_QUOTE = 300
_SQUARE = re.compile(r"([a-zA-Z])([1-9][0-9]?)")


def check_text(text: object, what: str, example: str) -> str:
    """``text`` if it is a ``str``, else ``ValueError`` naming ``what`` it should be."""
    if not isinstance(text, str):
        raise ValueError(f"{what} must be a string such as {example!r}, got {type(text).__name__}")
    return text


def fields(text: str) -> list[str]:
    """``text`` split at runs of ASCII spaces, tabs and line breaks."""
    return [f for f in re.split(r"[ \t\r\n]+", text) if f]


def square_name(index: int, width: int) -> str:
    """``index`` (row*width+col) -> name such as ``"d3"``."""
    row, col = divmod(int(index), width)
    return f"{_FILES[col]}{row + 1}"


def parse_square(text: str, height: int, width: int) -> int:
    """``"d3"`` (case and surrounding spaces ignored) -> index; ``ValueError`` if malformed or
    off the board."""
    check_text(text, "a square", "b2")
    m = _SQUARE.fullmatch(text.strip(" \t\r\n"))
    if not m:
        raise ValueError(
            f"malformed square {quote(text)}: expected a file letter and a rank number, e.g. 'b2'"
        )
    col = _FILES.index(m.group(1).lower())
    row = int(m.group(2)) - 1
    if not (0 <= col < width and 0 <= row < height):
        last = f"{_FILES[width - 1]}{height}"
        raise ValueError(
            f"square {quote(text.strip())} is off the {height}x{width} board (a1..{last})"
        )
    return row * width + col


def parse_grid_position(
    text: str, cells: int, symbols: str, sides: str
) -> tuple[list[int], int, bool]:
    """``"<cells chars> <side>[ end]"`` -> (cell values: indices into ``symbols``, player to
    move: index into ``sides``, ``end`` given); ``ValueError`` names what is wrong."""
    check_text(text, "a position", f"{symbols[0] * cells} {sides[0]}")
    q = quote(text, POSITION_QUOTE)
    parts = fields(text)
    over = len(parts) == 3 and parts[2] == GAME_OVER
    if over:
        parts = parts[:2]
    if len(parts) != 2:
        raise ValueError(
            f"malformed position {q}: expected {cells} board characters, a space, and the side "
            f"to move (then {GAME_OVER!r} for a finished game)"
        )
    board, side = parts
    if len(board) != cells:
        raise ValueError(
            f"malformed position {q}: board has {len(board)} characters, expected {cells}"
        )
    bad = sorted(set(board) - set(symbols))
    if bad:
        raise ValueError(
            f"malformed position {q}: unknown board character(s) {bad[:10]}"
            f"{'...' if len(bad) > 10 else ''}; use {list(symbols)}"
        )
    if len(side) != 1 or side not in sides:
        raise ValueError(
            f"malformed position {q}: side to move {quote(side)} must be one of {list(sides)}"
        )
    return [symbols.index(c) for c in board], sides.index(side), over


# ----------------------------------------------------------------------- symmetries
def dihedral_squares(n: int) -> np.ndarray:
    """int32[8, n*n]: the 8 symmetries of an n x n board (identity first); symmetry k moves a
    flat board ``b`` to ``b[table[k]]``."""
    idx = np.arange(n * n, dtype=np.int32).reshape(n, n)
    boards = [
        idx,
        np.rot90(idx, 1),
        np.rot90(idx, 2),
        np.rot90(idx, 3),
        idx[:, ::-1],
        idx[::-1, :],
        idx.T,
        np.rot90(idx, 2).T,
    ]
    return np.stack([b.reshape(-1) for b in boards]).astype(np.int32)


def board_symmetries(squares: np.ndarray, planes: int, extra_actions: int = 0) -> Symmetries:
    """:class:`~jaxgames.core.Symmetries` of observations [rows, cols, planes] and one action
    per square (then ``extra_actions`` that stay, a pass) from the tables int32[K, rows*cols]."""
    squares = np.asarray(squares, np.int32)
    k, cells = squares.shape
    obs = (squares[:, :, None] * planes + np.arange(planes, dtype=np.int32)).reshape(k, -1)
    fixed = np.broadcast_to(
        np.arange(cells, cells + extra_actions, dtype=np.int32), (k, extra_actions)
    )
    return Symmetries(obs.astype(np.int32), np.concatenate([squares, fixed], axis=1))


def shift_planes(x: jax.Array, dr: int, dc: int) -> jax.Array:
    """``x[..., H, W]`` moved by static (dr, dc): ``out[r, c] = x[r - dr, c - dc]``, zero off
    the board."""
    h, w = x.shape[-2:]
    pad = [(0, 0)] * (x.ndim - 2) + [(max(dr, 0), max(-dr, 0)), (max(dc, 0), max(-dc, 0))]
    r0, c0 = max(-dr, 0), max(-dc, 0)
    return jnp.pad(x, pad)[..., r0 : r0 + h, c0 : c0 + w]
