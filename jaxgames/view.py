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
    """How a board looks: fill and grid colours, ``pieces`` ``"disc"``, ``"mark"`` (cross,
    ring) or ``"tile"`` (the ``label``, facing its owner), and dotted ``star_points``."""

    board: str = "#eeeeee"
    grid: str = "#333333"
    pieces: str = "tile"
    star_points: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.pieces not in PIECE_STYLES:
            raise ValueError(f"unknown piece style {self.pieces!r}; use one of {PIECE_STYLES}")


@dataclasses.dataclass(frozen=True)
class BoardView:
    """One position as a renderer needs it: ``cells`` a rectangle of pieces (None: empty),
    ``hands`` per player (None without), and optional ``summary`` (a line under a text board)
    and ``score`` (before the status line of a drawn board)."""

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
