"""What a game shows: the board of one position as plain data, drawn by :mod:`jaxgames.render`.

Each game builds a :class:`BoardView` from one (unbatched) state with its own
``board_view(spec, state)`` (exposed as ``env.board_view(state)``); the renderers draw any
``BoardView`` the same way and know nothing about the games. Data only: no JAX, no drawing.

Coordinates are those of every jaxgames game (see :mod:`jaxgames.games.grid`): row 0 is rank 1
at the top, column 0 is file ``a`` at the left.
"""

from __future__ import annotations

import dataclasses

#: how pieces are drawn (see :class:`BoardStyle`)
PIECE_STYLES = ("disc", "mark", "tile")


@dataclasses.dataclass(frozen=True)
class Piece:
    """One piece on the board or in hand.

    symbol: its letter in text diagrams, as in the game's notation (``"X"``, ``"L"``, ``"c"``)
    owner:  player id (0 or 1)
    name:   what it is, e.g. ``"lion"`` (SVG ``data-piece``; default: ``symbol``)
    label:  the letter written on a ``"tile"`` piece (default: ``symbol``)
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
    """How a game's board looks (the same for every position of the game).

    board:       board fill colour
    grid:        colour of the grid lines and the border
    pieces:      ``"disc"`` (a round disc, black for player 0 and white for player 1),
                 ``"mark"`` (a cross for player 0, a ring for player 1) or ``"tile"`` (a square
                 tile with the piece's ``label``, facing its owner: upside down for the player
                 whose side is at the top)
    star_points: grid intersections ``(row, col)`` marked with a dot (the corner above and to
                 the left of square ``(row, col)``)
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
    """One position as a renderer needs it.

    game:        ``env.name`` (for messages)
    cells:       ``rows`` tuples of ``cols`` pieces (row 0 = rank 1 = top), None for empty
    to_move:     player id to move
    style:       the game's :class:`BoardStyle`
    hands:       per player id, the pieces in hand (one entry per piece), or None if the game
                 has no hands
    move_number: the move number, if the game's notation has one
    summary:     a line written under a text board, e.g. ``"discs: black (X) 4, white (O) 1"``
    score:       a short score written before the status line of a drawn board,
                 e.g. ``"black 4 - white 1"``

    Raises ``ValueError`` ("cannot render GAME: ...") when the cells are not a rectangle.
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

    @property
    def owners(self) -> tuple[tuple[int | None, ...], ...]:
        """The same layout as ``cells``: the player id owning each piece, or None."""
        return tuple(tuple(None if p is None else p.owner for p in row) for row in self.cells)

    def pieces(self, player: int | None = None) -> int:
        """Number of pieces on the board (of ``player`` if given)."""
        return sum(
            p is not None and (player is None or p.owner == player)
            for row in self.cells
            for p in row
        )
