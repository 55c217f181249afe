"""Board rendering for every game: text for terminals, SVG for documents, PNG via matplotlib.

Renderers draw the :class:`~jaxgames.view.BoardView` of ``env.board_view(state)`` the same
way for every game. A move's squares are the ``[a-z][0-9]+`` tokens of its notation (``d3``,
``b3b2``, ``C*b2``; the last is where the piece lands), file = column, rank = row from the top.
"""

from __future__ import annotations

import hashlib
import io
import re
from typing import Any, NamedTuple, Sequence
from xml.sax.saxutils import escape, quoteattr

import jax
import numpy as np

from jaxgames.validation import check_one_game
from jaxgames.view import BoardStyle, BoardView, Piece

FILES = "abcdefghijklmnopqrstuvwxyz"
_SQUARE = re.compile(r"([a-z])(\d{1,2})")


# ---------------------------------------------------------------------------- board views
def side_names(env: Any) -> tuple[str, str]:
    """How the two players are called in ``env``'s game, e.g. ``("black", "white")``."""
    return tuple(getattr(env, "side_names", ("player 0", "player 1")))  # type: ignore[return-value]


def default_flip(env: Any, player: int) -> bool:
    """Whether to turn the board round for a human playing ``player`` (``flip_for_second``)."""
    return player == 1 and bool(getattr(env, "flip_for_second", False))


def _view_or_none(state: Any, env: Any) -> BoardView | None:
    make = getattr(env, "board_view", None)
    if make is None:
        return None
    try:
        return make(state)
    except NotImplementedError:
        return None


def board_view(state: Any, env: Any) -> BoardView:
    """``env.board_view(state)``; ``ValueError`` if the game has none."""
    view = _view_or_none(state, env)
    if view is None:
        raise ValueError(
            f"no board renderer for game {env.name!r}: its Env has no board_view(state)"
        )
    return view


def move_squares(move: str | None) -> list[tuple[int, int]]:
    """(row, col) of the squares a move names, destination last: ``"b3b2"`` -> [(2, 1), (1, 1)],
    ``"C*b2"`` -> [(1, 1)], ``"pass"`` -> []."""
    if not move:
        return []
    return [(int(r) - 1, FILES.index(f)) for f, r in _SQUARE.findall(move)]


def move_numbers(history: Sequence[str]) -> dict[tuple[int, int], int]:
    """For each square, the 1-based number of the last move that put a piece there."""
    numbers: dict[tuple[int, int], int] = {}
    for i, mv in enumerate(history, 1):
        squares = move_squares(mv)
        if squares:
            numbers[squares[-1]] = i
    return numbers


def legal_moves(state: Any, env: Any) -> list[str]:
    """Notation of every legal move in ``state`` (in action order)."""
    return [
        env.action_to_text(state, int(a))
        for a in np.flatnonzero(np.asarray(state.legal_action_mask))
    ]


def _is_over(state: Any) -> bool:
    return bool(state.terminated) or bool(state.truncated)


# ---------------------------------------------------------------------------- text
def text(
    state: Any,
    env: Any,
    *,
    history: Sequence[str] = (),
    last_move: str | None = None,
    legal: bool = False,
    numbers: bool = False,
    flip: bool = False,
) -> str:
    """A text diagram of one state, then its summary, hands, last move and who moves.

    history: the moves so far; last_move: highlighted with ``[ ]`` (default ``history[-1]``);
    legal: mark legal landing squares ``*`` and list them; numbers: each piece's move number
    (``X12``); flip: turn the board 180 degrees. Without a board view: the notation.
    """
    check_one_game(state, "render.text")
    if last_move is None and history:
        last_move = history[-1]
    names = side_names(env)
    lines: list[str] = []
    moves = legal_moves(state, env) if legal and not _is_over(state) else []
    view = _view_or_none(state, env)
    if view is None:
        lines.append(env.to_text(state))
    else:
        nums = move_numbers(history) if numbers else {}
        last = move_squares(last_move)
        last_sq = last[-1] if last else None
        marks = {sq[-1] for sq in map(move_squares, moves) if sq}
        contents = {}
        for r in range(view.rows):
            for c in range(view.cols):
                piece = view.cells[r][c]
                if piece is None:
                    contents[r, c] = "*" if (r, c) in marks else "."
                else:
                    contents[r, c] = piece.symbol + (str(nums[r, c]) if (r, c) in nums else "")
        w = max(len(s) for s in contents.values())
        lw = len(str(view.rows))
        # every cell is "<l><content centred in w><r>", with [] around the last move
        rows, cols = (range(n - 1, -1, -1) if flip else range(n) for n in (view.rows, view.cols))
        top = 0 if flip else 1  # the player whose side is at the top
        header = " " * (lw + 2) + "".join(f" {FILES[c]:^{w}} " for c in cols)
        if view.hands is not None:
            lines.append(f"{names[top]} in hand: {_hand(view.hands[top])}")
        lines.append(header.rstrip())
        for r in rows:
            row = "".join(
                ("[" if (r, c) == last_sq else " ")
                + f"{contents[r, c]:^{w}}"
                + ("]" if (r, c) == last_sq else " ")
                for c in cols
            )
            lines.append(f"{r + 1:>{lw}}  {row}".rstrip())
        if view.hands is not None:
            lines.append(f"{names[1 - top]} in hand: {_hand(view.hands[1 - top])}")
        if view.summary:
            lines.append(view.summary)
    if last_move:  # players alternate (a pass is a move); an illegal one keeps the turn
        ply = f"{len(history)}. " if history else ""
        mover = int(state.current_player)
        mover = mover if last_move.startswith("illegal:") else 1 - mover
        lines.append(f"last move: {ply}{last_move} ({names[mover]})")
    if legal and moves:
        lines.append("legal: " + " ".join(moves))
    if _is_over(state):
        lines.append("game over")
    else:
        lines.append(f"{names[int(state.current_player)]} to move")
    return "\n".join(lines)


def _hand(pieces: Sequence[Piece]) -> str:
    if not pieces:
        return "-"
    counts: dict[str, int] = {}
    for p in pieces:
        counts[p.symbol] = counts.get(p.symbol, 0) + 1
    return " ".join(p if n == 1 else f"{n}{p}" for p, n in counts.items())


# ---------------------------------------------------------------------------- scene
# A display list shared by the SVG and matplotlib back ends, in pixels (y down).
class _Rect(NamedTuple):
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str = "none"
    width: float = 1.0
    cls: str = ""


class _Circle(NamedTuple):
    cx: float
    cy: float
    r: float
    fill: str
    stroke: str = "none"
    width: float = 1.0
    cls: str = ""


class _Line(NamedTuple):
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float = 1.0
    cls: str = ""


class _Text(NamedTuple):
    x: float
    y: float
    s: str
    size: float
    fill: str = "#000"
    rotate: float = 0.0
    bold: bool = False
    cls: str = ""


class _Group(NamedTuple):
    cls: str
    items: tuple
    attrs: tuple = ()  # (name, value) pairs written on the SVG <g>


def _piece(
    style: BoardStyle,
    piece: Piece,
    cx: float,
    cy: float,
    s: float,
    number: int | None,
    cls: str = "piece",
    flip: bool = False,
) -> _Group:
    """One piece centred on (cx, cy) in a cell of side ``s`` (tiles face their owner)."""
    items: list = []
    ink = "#000"
    owner = piece.owner
    if style.pieces == "disc":
        fill = "#111" if owner == 0 else "#f8f8f8"
        items.append(_Circle(cx, cy, 0.42 * s, fill, "#000", 1.0))
        ink = "#fff" if owner == 0 else "#000"
    elif style.pieces == "mark":
        d = 0.3 * s
        if owner == 0:
            items += [
                _Line(cx - d, cy - d, cx + d, cy + d, "#c0392b", 0.1 * s),
                _Line(cx - d, cy + d, cx + d, cy - d, "#c0392b", 0.1 * s),
            ]
        else:
            items.append(_Circle(cx, cy, 0.32 * s, "none", "#2c3e8f", 0.1 * s))
    else:  # "tile": a lettered piece
        a, paper = 0.4 * s, "#fff8e6" if owner == 0 else "#e8e0d0"
        turn = 180.0 if owner != int(flip) else 0.0
        items.append(_Rect(cx - a, cy - a, 2 * a, 2 * a, paper, "#5a4020", 1.5))
        items.append(_Text(cx, cy, piece.label, 0.45 * s, "#000", turn, True))
    if number is not None:  # on a disc: centred; on marks and tiles: in the cell's corner
        n = str(number)
        if style.pieces == "disc":
            items.append(_Text(cx, cy, n, 0.34 * s, ink, 0.0, True, "number"))
        else:
            items.append(
                _Text(cx + 0.3 * s, cy - 0.33 * s, n, 0.22 * s, "#000", 0.0, True, "number")
            )
    return _Group(cls, tuple(items), (("data-owner", str(owner)), ("data-piece", piece.name)))


def _scene(
    state: Any,
    env: Any,
    history: Sequence[str],
    last_move: str | None,
    legal: bool,
    numbers: bool,
    cell: float,
    flip: bool = False,
    targets: bool = False,
) -> tuple[float, float, list]:
    """Display list of one position: (width, height, items); ``targets``: click targets on top
    (see :func:`svg`)."""
    view = board_view(state, env)

    def x(c: float) -> float:  # centre of column c
        return ox + ((view.cols - 1 - c) if flip else c) * cell + 0.5 * cell

    def y(r: float) -> float:  # centre of row r
        return oy + ((view.rows - 1 - r) if flip else r) * cell + 0.5 * cell

    if last_move is None and history:
        last_move = history[-1]
    nums = move_numbers(history) if numbers else {}
    style = view.style
    fill, grid_ink = style.board, style.grid
    m = 0.5 * cell  # margin for coordinates
    hand_h = 0.8 * cell if view.hands is not None else 0.0
    ox, oy = m, m + hand_h
    width = ox + view.cols * cell + m
    height = oy + view.rows * cell + m + hand_h + 0.45 * cell
    items: list = [
        _Rect(0, 0, width, height, "#ffffff", cls="background"),
        _Rect(ox, oy, view.cols * cell, view.rows * cell, fill, grid_ink, 2.0, "board"),
    ]
    for c in range(view.cols):
        items.append(_Text(x(c), oy - 0.25 * cell, FILES[c], 0.3 * cell, "#333", cls="coord"))
    for r in range(view.rows):
        items.append(_Text(0.5 * m, y(r), str(r + 1), 0.3 * cell, "#333", cls="coord"))
    for k in range(1, view.cols):
        items.append(
            _Line(ox + k * cell, oy, ox + k * cell, oy + view.rows * cell, grid_ink, 1.5, "grid")
        )
    for k in range(1, view.rows):
        items.append(
            _Line(ox, oy + k * cell, ox + view.cols * cell, oy + k * cell, grid_ink, 1.5, "grid")
        )
    for r, c in style.star_points:
        items.append(_Circle(ox + c * cell, oy + r * cell, 0.06 * cell, grid_ink, cls="star"))
    last = move_squares(last_move)
    for k, (r, c) in enumerate(last):  # origin square faint, destination strong
        strong = k == len(last) - 1
        fill_ = "#ffd54f" if strong else "#fff3c4"
        cls = "last-move" if strong else "last-move-from"
        items.append(
            _Rect(x(c) - 0.5 * cell + 2, y(r) - 0.5 * cell + 2, cell - 4, cell - 4, fill_, cls=cls)
        )
    for r in range(view.rows):
        for c in range(view.cols):
            if view.cells[r][c] is not None:
                items.append(
                    _piece(style, view.cells[r][c], x(c), y(r), cell, nums.get((r, c)), flip=flip)
                )
    if legal and not _is_over(state):
        for mv in legal_moves(state, env):
            sq = move_squares(mv)
            if sq and view.cells[sq[-1][0]][sq[-1][1]] is None:
                r, c = sq[-1]
                items.append(_Circle(x(c), y(r), 0.1 * cell, "#e67e22", cls="legal"))
    hits = [
        _target(x(c), y(r), cell, (("data-square", f"{FILES[c]}{r + 1}"),))
        for r in range(view.rows)
        for c in range(view.cols)
    ]
    if view.hands is not None:  # the top player's hand above the board, the other's below
        top = 0 if flip else 1
        for player, y0 in ((top, 0.0), (1 - top, oy + view.rows * cell + 0.3 * m)):
            for i, p in enumerate(view.hands[player]):
                cx, cy = ox + (i + 0.35) * 0.7 * cell, y0 + 0.35 * cell
                items.append(_piece(style, p, cx, cy, 0.7 * cell, None, "hand-piece", flip))
                drop = (("data-drop", p.label), ("data-owner", str(p.owner)))
                hits.append(_target(cx, cy, 0.7 * cell, drop))
    names = side_names(env)
    status = "game over" if _is_over(state) else f"{names[int(state.current_player)]} to move"
    if view.score:
        status = f"{view.score}   " + status
    if last_move:
        status += f"   last: {last_move}"
    items.append(_Text(width / 2, height - 0.3 * cell, status, 0.26 * cell, "#333", cls="status"))
    if targets:
        items.append(_Group("targets", tuple(hits)))
    return width, height, items


def _target(cx: float, cy: float, side: float, attrs: tuple) -> _Group:
    """An unpainted square of side ``side`` centred on (cx, cy), named by ``attrs``."""
    rect = _Rect(cx - 0.5 * side, cy - 0.5 * side, side, side, "none")
    return _Group("target", (rect,), attrs)


# ---------------------------------------------------------------------------- SVG
def _svg_item(it: Any) -> str:
    cls = f' class="{it.cls}"' if getattr(it, "cls", "") else ""
    if isinstance(it, _Rect):
        return (
            f'<rect{cls} x="{it.x:.1f}" y="{it.y:.1f}" width="{it.w:.1f}" height="{it.h:.1f}" '
            f'fill="{it.fill}" stroke="{it.stroke}" stroke-width="{it.width}"/>'
        )
    if isinstance(it, _Circle):
        return (
            f'<circle{cls} cx="{it.cx:.1f}" cy="{it.cy:.1f}" r="{it.r:.1f}" fill="{it.fill}" '
            f'stroke="{it.stroke}" stroke-width="{it.width:.1f}"/>'
        )
    if isinstance(it, _Line):
        return (
            f'<line{cls} x1="{it.x1:.1f}" y1="{it.y1:.1f}" x2="{it.x2:.1f}" y2="{it.y2:.1f}" '
            f'stroke="{it.stroke}" stroke-width="{it.width:.1f}" stroke-linecap="round"/>'
        )
    if isinstance(it, _Text):
        rot = f' transform="rotate({it.rotate:g} {it.x:.1f} {it.y:.1f})"' if it.rotate else ""
        bold = ' font-weight="bold"' if it.bold else ""
        return (
            f'<text{cls} x="{it.x:.1f}" y="{it.y:.1f}" font-size="{it.size:.1f}" '
            f'fill="{it.fill}"{bold}'
            f' text-anchor="middle" dominant-baseline="central" font-family="sans-serif"{rot}>'
            f"{escape(it.s)}</text>"
        )
    if isinstance(it, _Group):
        attrs = "".join(f" {k}={quoteattr(v)}" for k, v in it.attrs)
        return f'<g class="{it.cls}"{attrs}>' + "".join(_svg_item(x) for x in it.items) + "</g>"
    raise TypeError(f"unknown scene item {it!r}")


def svg(
    state: Any,
    env: Any,
    *,
    history: Sequence[str] = (),
    last_move: str | None = None,
    legal: bool = False,
    numbers: bool = False,
    flip: bool = False,
    cell: float = 48.0,
    targets: bool = False,
) -> str:
    """An SVG document of one state; options as in :func:`text`, ``cell``: a square's side in
    pixels. Pieces are ``<g class="piece" data-owner="0|1" data-piece="...">``. ``targets``:
    a last group ``<g class="targets">`` of unpainted squares to click (give them
    ``pointer-events: all``), ``<g class="target" data-square="b3">`` per square and
    ``<g class="target" data-drop="C" data-owner="0|1">`` per piece in hand (the letter of a
    drop's notation)."""
    check_one_game(state, "render.svg")
    width, height, items = _scene(
        state, env, history, last_move, legal, numbers, cell, flip, targets
    )
    body = "\n".join(_svg_item(it) for it in items)
    return f"{_svg_head(width, height, env, env.to_text(state))}\n{body}\n</svg>\n"


def _svg_head(width: float, height: float, env: Any, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}">\n'
        f"<title>{escape(env.name)}: {escape(title)}</title>"
    )


def _check_game(states: Sequence[Any], moves: Sequence[str]) -> None:
    if len(states) != len(moves) + 1:
        raise ValueError(
            f"need one state per move plus the start: got {len(states)} states, {len(moves)} moves"
        )


def svg_game(
    states: Sequence[Any],
    env: Any,
    moves: Sequence[str],
    *,
    every: int = 1,
    columns: int = 6,
    numbers: bool = False,
    cell: float = 24.0,
) -> str:
    """One SVG of a game as a grid of panels, ``columns`` per row: every ``every``-th position
    and the last, each titled with its move (``states[i]``: after ``moves[:i]``)."""
    _check_game(states, moves)
    if every < 1 or columns < 1:
        raise ValueError(f"every and columns must be >= 1, got every={every}, columns={columns}")
    picks = sorted(set(range(0, len(states), every)) | {len(states) - 1})
    panels, width, height = [], 0.0, 0.0
    for i in picks:
        w, h, items = _scene(states[i], env, moves[:i], None, False, numbers, cell)
        title = "start" if i == 0 else f"{i}. {moves[i - 1]}"
        panels.append((w, h, title, items))
        width, height = max(width, w), max(height, h)
    head = 0.7 * cell
    rows = -(-len(panels) // columns)
    out = [_svg_head(columns * width, rows * (height + head), env, " ".join(moves))]
    for k, (w, h, title, items) in enumerate(panels):
        x, y = (k % columns) * width, (k // columns) * (height + head)
        caption = _Text(
            x + width / 2, y + head / 2, title, 0.45 * cell, "#000", 0.0, True, "caption"
        )
        out.append(_svg_item(caption))
        out.append(
            f'<svg class="panel" x="{x:.1f}" y="{y + head:.1f}" width="{w:.1f}" height="{h:.1f}">'
        )
        out.extend(_svg_item(it) for it in items)
        out.append("</svg>")
    return "\n".join(out) + "\n</svg>\n"


def svg_animation(
    states: Sequence[Any],
    env: Any,
    moves: Sequence[str],
    *,
    seconds: float = 0.8,
    hold: float = 3.0,
    numbers: bool = False,
    flip: bool = False,
    cell: float = 48.0,
) -> str:
    """One SVG playing a game in a loop, each position for ``seconds``, the last ``hold`` times
    as long: CSS keyframes, no script (without animation the final position shows); class
    names carry a hash of the drawing, so animations in one page do not share styles."""
    _check_game(states, moves)
    if not seconds > 0 or not hold >= 1:
        raise ValueError(f"need seconds > 0 and hold >= 1, got seconds={seconds}, hold={hold}")
    scenes = [
        _scene(st, env, moves[:i], None, False, numbers, cell, flip) for i, st in enumerate(states)
    ]
    width = max(w for w, _, _ in scenes)
    height = max(h for _, h, _ in scenes)
    bodies = ["\n".join(_svg_item(it) for it in items) for _, _, items in scenes]
    uid = "jg" + hashlib.sha1("".join(bodies).encode()).hexdigest()[:10]
    n = len(scenes)
    total = (n - 1 + hold) * seconds
    show, last = 100 * seconds / total, 100 * hold * seconds / total
    # every frame runs the same cycle of `total` seconds, shifted by a negative delay so that
    # all cycles are under way from the start (before a delay ends the base style would show)
    style = (
        f".{uid} {{ visibility: hidden; animation: {uid}-show {total:.3f}s step-end infinite; }}\n"
        f".{uid}.last {{ visibility: visible; animation-name: {uid}-last; }}\n"
        f"@keyframes {uid}-show {{ 0% {{ visibility: visible; }} {show:.4f}% "
        f"{{ visibility: hidden; }} 100% {{ visibility: hidden; }} }}\n"
        f"@keyframes {uid}-last {{ 0% {{ visibility: visible; }} {last:.4f}% "
        f"{{ visibility: hidden; }} 100% {{ visibility: hidden; }} }}\n"
        f"@media (prefers-reduced-motion: reduce) {{ .{uid} {{ animation: none; }} }}"
    )
    if n == 1:  # nothing to animate
        style = f".{uid} {{ visibility: visible; }}"
    out = [_svg_head(width, height, env, " ".join(moves)), f"<style>\n{style}\n</style>"]
    for i, body in enumerate(bodies):
        cls = f"{uid} frame" + (" last" if i == n - 1 else "")
        delay = i * seconds - total
        move = "" if i == 0 else moves[i - 1]
        out.append(
            f'<g class="{cls}" data-ply="{i}" data-move={quoteattr(move)} '
            f'style="animation-delay: {delay:.3f}s">\n{body}\n</g>'
        )
    return "\n".join(out) + "\n</svg>\n"


# ---------------------------------------------------------------------------- notebooks
# What Jupyter shows for a game state; None: IPython falls back to the next format.
def _displayable(state: Any) -> tuple[Any, tuple[int, ...]] | None:
    """(env to draw with, batch shape) of a state; None for tracers or an unknown env."""
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(state)):
        return None
    try:
        env = state.display_env()
    except (AttributeError, NotImplementedError):
        return None
    return env, tuple(np.shape(state.current_player))


def repr_svg(state: Any) -> str | None:
    """The SVG of one game state (legal moves marked); None for a batch."""
    shown = _displayable(state)
    if shown is None or shown[1] != ():
        return None
    return svg(state, shown[0], legal=True)


def repr_html(state: Any, limit: int = 8) -> str | None:
    """HTML for a batch of states: its shape and the first ``limit`` boards; None for one game."""
    shown = _displayable(state)
    if shown is None or shown[1] == ():
        return None
    env, batch = shown
    total = int(np.prod(batch))
    k = min(total, limit)
    nb = len(batch)
    first = jax.tree_util.tree_map(lambda x: np.asarray(x.reshape((-1,) + x.shape[nb:])[:k]), state)
    boards = []
    for i in range(k):
        one = jax.tree_util.tree_map(lambda x: x[i], first)
        boards.append(
            f'<figure style="margin:0">{svg(one, env, cell=24.0)}'
            f'<figcaption style="text-align:center">game {i}</figcaption></figure>'
        )
    more = f", the first {k}" if k < total else ""
    return (
        f"<div><div>{escape(type(state).__name__)}: a batch of shape {batch} "
        f"({total} games of {escape(env.name)}{more})</div>"
        f'<div style="display:flex;flex-wrap:wrap;gap:8px">{"".join(boards)}</div></div>'
    )


# ---------------------------------------------------------------------------- PNG
def _draw_matplotlib(ax: Any, items: Sequence[Any], px: float) -> None:
    """Draw the display list on matplotlib axes; ``px``: points per pixel."""
    from matplotlib import patches  # optional dependency (the 'plots' extra)
    from matplotlib.lines import Line2D

    for it in items:
        if isinstance(it, (_Rect, _Circle)):
            none = it.stroke == "none"
            edge = dict(
                edgecolor=None if none else it.stroke, linewidth=0 if none else it.width * px
            )
            if isinstance(it, _Rect):
                ax.add_patch(patches.Rectangle((it.x, it.y), it.w, it.h, facecolor=it.fill, **edge))
            else:
                ax.add_patch(patches.Circle((it.cx, it.cy), it.r, facecolor=it.fill, **edge))
        elif isinstance(it, _Group):
            _draw_matplotlib(ax, it.items, px)
        elif isinstance(it, _Line):
            line = dict(color=it.stroke, linewidth=it.width * px, solid_capstyle="round")
            ax.add_line(Line2D([it.x1, it.x2], [it.y1, it.y2], **line))
        elif isinstance(it, _Text):
            font = dict(ha="center", va="center", family="sans-serif")
            font["fontweight"] = "bold" if it.bold else "normal"
            ax.text(
                it.x, it.y, it.s, fontsize=it.size * px, color=it.fill, rotation=it.rotate, **font
            )


def png(
    state: Any,
    env: Any,
    path: str | None = None,
    *,
    history: Sequence[str] = (),
    last_move: str | None = None,
    legal: bool = False,
    numbers: bool = False,
    flip: bool = False,
    cell: float = 48.0,
    dpi: int = 100,
) -> bytes:
    """PNG bytes of one state (written to ``path`` if given), options as in :func:`svg`: with
    matplotlib, else cairosvg, else ``RuntimeError``."""
    width, height, items = _scene(state, env, history, last_move, legal, numbers, cell, flip)
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        try:
            import cairosvg  # type: ignore[import-not-found]
        except ImportError:
            raise RuntimeError(
                "render.png needs matplotlib (pip install matplotlib) or cairosvg"
            ) from None
        opts = dict(history=history, last_move=last_move, legal=legal, numbers=numbers)
        data = cairosvg.svg2png(bytestring=svg(state, env, **opts, flip=flip, cell=cell).encode())
    else:
        fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
        FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, width)
        ax.set_ylim(height, 0)
        ax.set_axis_off()
        _draw_matplotlib(ax, items, 72.0 / dpi)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        data = buf.getvalue()
    if path is not None:
        with open(path, "wb") as f:
            f.write(data)
    return data
