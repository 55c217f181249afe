"""What a game shows: one position as plain data (``env.board_view(state)``), which
:mod:`jaxgames.render` draws the same way for every game. No JAX, no drawing. Row 0 is rank 1
at the top, column 0 file ``a`` at the left (:mod:`jaxgames.games.grid`)."""

from __future__ import annotations

import dataclasses

#: how pieces are drawn (see :class:`BoardStyle`)
PIECE_STYLES = ("disc", "mark", "tile")


@dataclasses.dataclass(frozen=True)
class Piece:
    """One piece on the board or in hand.

    symbol: its letter in text diagrams (``"X"``, ``"L"``, ``"c"``); owner: player id
    name:   e.g. ``"lion"`` (SVG ``data-piece``; default ``symbol``)
    label:  the letter on a ``"tile"`` piece (default ``symbol``)
    """

    symbol: str
    owner: int
    name: str = ""
    label: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.symbol)
        if not self.label:
            object.__setattr__(self, "label", self.symbol)


@dataclasses.dataclass(frozen=True)
class BoardStyle:
    """How a game's board looks.

    board, grid: fill colour; colour of the grid lines and border
    pieces:      ``"disc"`` (black for player 0, white for 1), ``"mark"`` (cross, ring) or
                 ``"tile"`` (a square with the piece's ``label``, facing its owner)
    star_points: grid intersections ``(row, col)`` marked with a dot (top-left corner of the
                 square)
    """

    board: str = "#eeeeee"
    grid: str = "#333333"
    pieces: str = "tile"
    star_points: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.pieces not in PIECE_STYLES:
            raise ValueError(f"unknown piece style {self.pieces!r}; use one of {PIECE_STYLES}")


@dataclasses.dataclass(frozen=True)
class BoardView:
    """One position as a renderer needs it (``ValueError`` unless the cells are a rectangle).

    game:        ``env.name`` (for messages)
    cells:       ``rows`` tuples of ``cols`` pieces (row 0 at the top), None for empty
    to_move:     player id to move; style: the game's :class:`BoardStyle`
    hands:       per player id, the pieces in hand (one entry each), None without hands
    move_number: the move number, if the notation has one
    summary:     a line under a text board (``"discs: black (X) 4, white (O) 1"``)
    score:       a short score before a drawn board's status line (``"black 4 - white 1"``)
    """

    game: str
    cells: tuple[tuple[Piece | None, ...], ...]
    to_move: int
    style: BoardStyle = BoardStyle()
    hands: tuple[tuple[Piece, ...], tuple[Piece, ...]] | None = None
    move_number: int | None = None
    summary: str | None = None
    score: str | None = None

    def __post_init__(self) -> None:
        widths = {len(row) for row in self.cells}
        if not self.cells or len(widths) != 1 or 0 in widths:
            raise ValueError(
                f"cannot render {self.game}: the cells must be a non-empty rectangle, "
                f"got rows of lengths {[len(row) for row in self.cells]}"
            )
        if self.hands is not None and len(self.hands) != 2:
            raise ValueError(f"cannot render {self.game}: hands must hold one tuple per player")

    @property
    def rows(self) -> int:
        return len(self.cells)

    @property
    def cols(self) -> int:
        return len(self.cells[0])

    def pieces(self, player: int | None = None) -> int:
        """Number of pieces on the board (of ``player`` if given)."""
        return sum(
            p is not None and (player is None or p.owner == player)
            for row in self.cells
            for p in row
        )
