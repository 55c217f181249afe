"""A reversi engine: alpha-beta on bitboards with a classical evaluation and an exact endgame.

    policy = reversi_engine_policy(env, depth=4, endgame_empties=10)   # policy(key, state)

Negamax, values for the player to move: alpha-beta to ``depth`` placements with the heuristic
at the horizon; with at most ``endgame_empties`` empties, exact to the end of the game
(maximal final disc margin). Passes are forced plies that use no depth.

* Below the root it works on bare bitboards (:mod:`jaxgames.games.bitboard`), in one explicit
  stack and one ``lax.while_loop``; an iteration expands the next move of the top node or
  pops it (under ``vmap``: until the slowest game is done).
* The last ply is vectorised: expanding a move scores *all* replies of the child at once (one
  lane per square), which orders the child's moves, or settles it in one iteration one ply
  above the horizon (midgame) or at <= 2 empties (endgame).
* Move ordering: midgame by the 1-ply score; endgame fastest-first (fewest replies), then
  corners, then quadrants with an odd number of empties (parity).
* A finished game scores ``WIN_BONUS * sign(margin) + margin``, above any (clipped) heuristic.
* Root moves are searched with ``alpha - ROOT_TIE_EPS``, so every equal-best move is exact and
  the move is drawn uniformly among them with ``key``.

Evaluation (:func:`evaluate`, mover's view), the terms classical othello programs use
(Rosenbloom 1982, IAGO; Buro 2003, "The evolution of strong othello programs"), weighted by
``w`` (:data:`WEIGHT_NAMES` order) and divided by 100::

    discs        w0 * 100 (d_p - d_o) / (d_p + d_o)
    corners      w1 * 25 (corners_p - corners_o)
    closeness    w2 * -12.5 (near_p - near_o)           discs on the X and C squares of an
                                                        empty corner
    mobility     w3 * 100 (m_p - m_o) / (m_p + m_o)     legal placements
    potential    w4 * 100 (pm_p - pm_o) / (pm_p + pm_o)  empty squares next to the other side
    stability    w5 * 6 / (N - 2) * (s_p - s_o)         edge discs joined to an own corner
                                                        along the edge, or on a full edge

:data:`LITERATURE_WEIGHTS` are the hand-set ones of open-source othello heuristics (Kartik
Kukreja 2013, "Heuristic function for Reversi (Othello)", made smooth as ``(a - b) / (a + b)``);
stability is set by hand; from 8x8 up closeness is lowered (:data:`WEIGHTS`, docs/engines.md).
The ratios are size-free and the stability weight scales so a whole edge is worth the same on
every board. There is no parity term: every horizon leaf has the same number of empties.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, Policy
from jaxgames.games.bitboard import (
    Words,
    and_,
    andnot,
    any_,
    const,
    fill,
    materialize,
    or_,
    pack_mask,
    popcount,
    runtime_one,
    shift,
    unpack,
    where,
)
from jaxgames.games.reversi import DIRECTIONS, Geometry, flips, legal_moves, square_bit

#: a finished game scores WIN_BONUS * sign(margin) + margin (exact in float32)
WIN_BONUS = 100_000.0
#: heuristic values are clipped to this (below any finished game)
HEURISTIC_CAP = WIN_BONUS / 2
#: root moves within this of the best so far are still searched exactly (random tie-breaking)
ROOT_TIE_EPS = 1e-2
WEIGHT_NAMES = ("discs", "corners", "closeness", "mobility", "potential", "stability")
#: the literature weights (Kukreja's; stability hand-set), in the order of WEIGHT_NAMES
LITERATURE_WEIGHTS = (10.0, 801.724, 382.026, 78.922, 74.396, 2000.0)
#: boards of 8x8 and larger: a lower closeness weight (docs/engines.md)
WEIGHTS = (10.0, 801.724, 150.0, 78.922, 74.396, 2000.0)


def default_weights(size: int) -> tuple[float, ...]:
    """:data:`WEIGHTS` from 8x8 up, :data:`LITERATURE_WEIGHTS` below (docs/engines.md)."""
    return WEIGHTS if size >= 8 else LITERATURE_WEIGHTS


# ----------------------------------------------------------------------- bitboard helpers
def _mask(mask: np.ndarray) -> Words:
    """bool[N*N] (numpy) -> constant bitboard words."""
    return const(pack_mask(mask))


def _neighbours(geo: Geometry, a: Words) -> Words:
    """Squares adjacent (8 directions) to a square of ``a``."""
    out = None
    for s, dest in geo.dirs:
        step = and_(shift(a, s), dest)
        out = step if out is None else or_(out, step)
    return out


# ----------------------------------------------------------------------- static tables
class _Tables:
    """Static masks (numpy uint32 words) of one board size for the evaluation and search."""

    def __init__(self, geo: Geometry):
        n = self.n = geo.size
        self.cells = n * n
        rows, cols = np.divmod(np.arange(n * n), n)

        def mask(sel):
            return _mask(np.asarray(sel, bool))

        self.corner, self.near = [], []
        for r0, c0 in ((0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1)):
            dr, dc = (1 if r0 == 0 else -1), (1 if c0 == 0 else -1)
            self.corner.append(mask((rows == r0) & (cols == c0)))
            near = ((rows == r0 + dr) | (rows == r0)) & ((cols == c0 + dc) | (cols == c0))
            self.near.append(mask(near & ~((rows == r0) & (cols == c0))))  # X + 2 C squares
        corners = ((rows == 0) | (rows == n - 1)) & ((cols == 0) | (cols == n - 1))
        self.corners = mask(corners)
        self.lines = [mask(rows == 0), mask(rows == n - 1), mask(cols == 0), mask(cols == n - 1)]
        self.edges = mask((rows == 0) | (rows == n - 1) | (cols == 0) | (cols == n - 1))
        self.non_corner_edges = mask(
            ((rows == 0) | (rows == n - 1) | (cols == 0) | (cols == n - 1)) & ~corners
        )
        #: the 4 orthogonal (shift, destination mask) pairs: edge runs follow these only
        self.orth = [d for (dr, dc), d in zip(DIRECTIONS, geo.dirs) if dr == 0 or dc == 0]
        self.stages = max(1, math.ceil(math.log2(n)))  # runs of up to N - 1 squares
        #: lane m of word w holds bit m if square m lives in word w (one lane per square)
        sq = np.arange(n * n)
        self.lanes = tuple(
            np.where(sq // 32 == w, np.uint32(1) << (sq % 32).astype(np.uint32), 0).astype(
                np.uint32
            )
            for w in range(geo.words)
        )
        self.stable_scale = 6.0 / (n - 2)
        h = n // 2
        self.quadrants = [
            mask(((rows < h) == top) & ((cols < h) == left))
            for top in (True, False)
            for left in (True, False)
        ]


@functools.lru_cache(maxsize=None)
def _tables(size: int) -> tuple[Geometry, _Tables]:
    geo = Geometry(size)
    return geo, _Tables(geo)


def _ratio(a: jax.Array, b: jax.Array) -> jax.Array:
    """100 (a - b) / (a + b), 0 when both are 0."""
    a, b = a.astype(jnp.float32), b.astype(jnp.float32)
    return 100.0 * (a - b) / jnp.maximum(a + b, 1.0)


def _stable_edges(geo: Geometry, tb: _Tables, p: Words, empty: Words) -> Words:
    """Edge discs of ``p`` that can never flip: joined to an own corner along the edge, or on
    a full edge line (an edge disc flips only along its edge)."""
    pe = and_(p, tb.edges)
    stable = and_(p, tb.corners)
    anchored = stable
    for s, dest in tb.orth:
        anchored = or_(anchored, fill(stable, and_(pe, dest), s, tb.stages))
    for line in tb.lines:
        full = ~any_(and_(empty, line))
        anchored = tuple(a | jnp.where(full, x, 0) for a, x in zip(anchored, and_(p, line)))
    return anchored


def _heuristic(geo, tb: _Tables, w, p: Words, o: Words, mob_p, mob_o, empty: Words):
    """float32[...] evaluation for p, given both mobilities int32[...], the empties and the 6
    weights ``w`` (floats or float32[6])."""
    d_p, d_o = popcount(p), popcount(o)
    c_p, c_o = popcount(and_(p, tb.corners)), popcount(and_(o, tb.corners))
    near_p = near_o = 0
    for corner, near in zip(tb.corner, tb.near):
        open_corner = any_(and_(empty, corner))
        near_p = near_p + jnp.where(open_corner, popcount(and_(p, near)), 0)
        near_o = near_o + jnp.where(open_corner, popcount(and_(o, near)), 0)
    pot_p = popcount(and_(empty, _neighbours(geo, o)))  # where p may get moves later
    pot_o = popcount(and_(empty, _neighbours(geo, p)))
    s_p = popcount(and_(_stable_edges(geo, tb, p, empty), tb.non_corner_edges))
    s_o = popcount(and_(_stable_edges(geo, tb, o, empty), tb.non_corner_edges))
    score = (
        w[0] * _ratio(d_p, d_o)
        + w[1] * 25.0 * (c_p - c_o).astype(jnp.float32)
        - w[2] * 12.5 * (near_p - near_o).astype(jnp.float32)
        + w[3] * _ratio(mob_p, mob_o)
        + w[4] * _ratio(pot_p, pot_o)
        + w[5] * tb.stable_scale * (s_p - s_o).astype(jnp.float32)
    )
    return jnp.clip(score / 100.0, -HEURISTIC_CAP, HEURISTIC_CAP)


def _final_score(margin: jax.Array) -> jax.Array:
    """float32: the score of a finished game with disc margin ``margin`` (int32)."""
    m = margin.astype(jnp.float32)
    return WIN_BONUS * jnp.sign(m) + m


def _leaf(geo: Geometry, tb: _Tables, w, p: Words, o: Words):
    """Midgame leaf, p to move -> (float32[...] score for p: exact when neither side can
    place, else the heuristic; int32[...] p's mobility, not materialised: fused is faster)."""
    mob_p = popcount(legal_moves(geo, p, o))
    mob_o = popcount(legal_moves(geo, o, p))
    empty = andnot(geo.full, or_(p, o))
    heur = _heuristic(geo, tb, w, p, o, mob_p, mob_o, empty)
    final = _final_score(popcount(p) - popcount(o))
    return jnp.where((mob_p == 0) & (mob_o == 0), final, heur), mob_p


def _leaf_exact(geo: Geometry, p: Words, o: Words, one: jax.Array):
    """Endgame leaf, p to move, at most one empty -> (float32[...] exact final score for p,
    int32[...] p's mobility for move ordering)."""
    empty = andnot(geo.full, or_(p, o))
    fp = popcount(flips(geo, p, o, empty))  # with one empty: > 0 iff p can play it
    fo = popcount(flips(geo, o, p, empty))
    margin = popcount(p) - popcount(o)
    last = jnp.where(fp > 0, margin + 1 + 2 * fp, jnp.where(fo > 0, margin - 1 - 2 * fo, margin))
    mob_p = popcount(materialize(legal_moves(geo, p, o), one))
    return _final_score(last), mob_p


def evaluate(env: Env, state, weights=None) -> jax.Array:
    """float32[]: the horizon score of one state for the mover (exact when neither side can
    place, else the module docstring's heuristic); weights as for :func:`search`."""
    geo, tb = _tables(env.size)
    p = tuple(state.mover[i] for i in range(geo.words))
    o = tuple(state.opponent[i] for i in range(geo.words))
    w = default_weights(env.size) if weights is None else weights
    return _leaf(geo, tb, w, p, o)[0]


# ----------------------------------------------------------------------- search
class _Expansion(NamedTuple):
    """A position after normalising passes, with every reply scored (one lane per square)."""

    p: Words  # mover after normalisation (the side that can place, if any)
    o: Words
    swapped: jax.Array  # bool[]: the side to move had to pass
    terminal: jax.Array  # bool[]: neither side can place
    n_empty: jax.Array  # int32[]
    count: jax.Array  # int32[]: legal placements of p
    order: jax.Array  # int32[K]: squares, legal placements first, best-ordered
    best_reply: jax.Array  # float32[]: max over p's placements of -score(grandchild)
    static: jax.Array  # float32[]: score of the position as given (before any pass)


def _expand(geo, tb, w, p: Words, o, lanes, exact: bool, static: bool, one) -> _Expansion:
    """Normalise (a side that cannot place passes), then play every legal placement at once
    and score each grandchild.

    lanes: (W uint32[K] one-bit boards, int32[K] their squares), every square that may be
    empty. exact: grandchildren by :func:`_leaf_exact` (<= 1 empty), else :func:`_leaf`.
    static: score (p, o) itself with :func:`_leaf` (else only exactly, right at the end).
    """
    bits, squares = lanes
    mp = materialize(legal_moves(geo, p, o), one)
    mo = materialize(legal_moves(geo, o, p), one)
    has_p, has_o = any_(mp), any_(mo)
    margin = popcount(p) - popcount(o)
    score = _leaf(geo, tb, w, p, o)[0] if static else _final_score(margin)
    swapped = ~has_p & has_o
    p, o = where(swapped, o, p), where(swapped, p, o)
    moves = materialize(where(swapped, mo, mp), one)
    legal = any_(and_(moves, bits))  # bool[K]
    flipped = flips(geo, p, o, bits)
    gp, go = andnot(o, flipped), or_(or_(p, bits), flipped)  # the other side to move
    if exact:  # stored once: faster in the endgame loop, slower in the midgame one
        gp, go = materialize(gp, one), materialize(go, one)
        score_g, mob_g = _leaf_exact(geo, gp, go, one)
        # fastest first: fewest replies; among equals corners, then moves into a quadrant
        # with an odd number of empties (parity: who gets the region's last move)
        empty = andnot(geo.full, or_(p, o))
        odd = sum(
            jnp.where(popcount(and_(empty, q)) % 2 == 1, any_(and_(bits, q)), False)
            for q in tb.quadrants
        )
        corner = any_(and_(bits, tb.corners)).astype(jnp.float32)
        key = -mob_g.astype(jnp.float32) + 0.5 * corner + 0.25 * odd.astype(jnp.float32)
    else:
        score_g, _ = _leaf(geo, tb, w, gp, go)
        key = -score_g  # the 1-ply score
    order = squares[jnp.argsort(-jnp.where(legal, key, -jnp.inf))].astype(jnp.int32)
    return _Expansion(
        p=p,
        o=o,
        swapped=swapped,
        terminal=~has_p & ~has_o,
        n_empty=popcount(andnot(geo.full, or_(p, o))),
        count=popcount(moves),
        order=order,
        best_reply=jnp.max(jnp.where(legal, -score_g, -jnp.inf)),
        static=score,
    )


class _Loop(NamedTuple):
    value: jax.Array  # float32[]: value of the root for its mover
    root_values: jax.Array  # float32[N*N]: exact for every move as good as the best
    nodes: jax.Array  # int32[]


def _search_loop(geo, tb, w, p0, o0, lanes, exact: bool, depth: int, levels: int, active):
    """Alpha-beta from (p0, o0) in one ``lax.while_loop`` over a stack of ``levels`` nodes, to
    the end of the game (``exact``: at most ``levels + 1`` empties) or ``depth`` placements;
    ``active`` False returns at once. Level 0 is a pre-root (o0, p0) with one null move, so
    the root is expanded by the loop body like any other node.
    """
    cells, n_words = geo.cells, geo.words
    neg_inf = jnp.float32(-jnp.inf)
    k = lanes[1].shape[0]

    def stack(x, fill=0):
        x = jnp.asarray(x)
        return jnp.full((levels,) + x.shape, fill, x.dtype).at[0].set(x)

    carry = dict(
        P=stack(jnp.stack(o0)),  # uint32[L, W] per level: the mover's discs
        O=stack(jnp.stack(p0)),
        order=stack(jnp.full(k, cells, jnp.int32)),  # int32[L, K]: moves, best first
        count=stack(jnp.int32(1)),
        idx=jnp.zeros(levels, jnp.int32),  # next position in order[l]
        move=jnp.zeros(levels, jnp.int32),  # move being searched below level l
        best=jnp.full(levels, neg_inf),
        alpha=jnp.full(levels, neg_inf),
        beta=jnp.full(levels, jnp.inf, jnp.float32),
        sign=jnp.ones(levels, jnp.float32),  # a node adds sign * value to its parent
        root_values=jnp.full(cells, neg_inf),
        top=jnp.int32(0),
        done=~active,
        nodes=jnp.int32(0),
    )

    def body(c):
        t = c["top"]
        one = runtime_one(t)
        p = tuple(c["P"][t, i] for i in range(n_words))
        o = tuple(c["O"][t, i] for i in range(n_words))
        i = c["idx"][t]
        expand = (i < c["count"][t]) & (c["best"][t] < c["beta"][t])
        m = c["order"][t, jnp.minimum(i, k - 1)]
        mv = square_bit(geo, m)
        f = flips(geo, p, o, mv)
        static = not exact and depth == 1  # depth 1: the root's children are leaves
        cp, co = andnot(o, f), or_(or_(p, mv), f)
        child = _expand(geo, tb, w, cp, co, lanes, exact, static, one)
        sgn = jnp.where(child.swapped, 1.0, -1.0)  # the same side moves again after a pass
        if exact:  # a child with <= 2 empties: its replies' grandchildren are scored exactly
            direct, leaf = child.terminal | (child.n_empty <= 2), child.terminal
        else:  # the child is t placements below the root: depth - t placements are left
            direct = child.terminal | (depth - t <= 1)
            leaf = child.terminal | (depth - t <= 0)
        direct = child.terminal | ((t > 0) & direct)  # the root itself is always pushed
        # a leaf child is scored as it stands (its mover may have to pass)
        v_direct = jnp.where(leaf, -child.static, sgn * child.best_reply)
        push = expand & ~direct
        pop = ~expand

        # fold a value into a node: a direct child's into t, or the popped t's into t - 1
        ft = jnp.where(pop, t - 1, t)
        fv = jnp.where(pop, c["sign"][t] * c["best"][t], v_direct)
        fm = jnp.where(pop, c["move"][jnp.maximum(t - 1, 0)], m)
        fold = (expand & direct) | (pop & (t > 0))
        ftd = jnp.where(fold, ft, levels)  # an out-of-range index is dropped
        out = dict(c)
        out["best"] = c["best"].at[ftd].max(fv, mode="drop")
        out["alpha"] = c["alpha"].at[ftd].max(fv, mode="drop")
        root_sq = jnp.where(fold & (ft == 1), fm, cells)
        out["root_values"] = c["root_values"].at[root_sq].set(fv, mode="drop")
        out["idx"] = c["idx"].at[jnp.where(expand, t, levels)].add(1, mode="drop")
        # push the child with the parent's window (at the root widened so ties stay exact)
        q = jnp.where(push, t + 1, levels)
        lo = c["alpha"][t] - jnp.where(t == 1, ROOT_TIE_EPS, 0.0)
        hi = c["beta"][t]
        out["P"] = c["P"].at[q].set(jnp.stack(child.p), mode="drop")
        out["O"] = c["O"].at[q].set(jnp.stack(child.o), mode="drop")
        out["order"] = c["order"].at[q].set(child.order, mode="drop")
        out["count"] = c["count"].at[q].set(child.count, mode="drop")
        out["idx"] = out["idx"].at[q].set(0, mode="drop")
        out["best"] = out["best"].at[q].set(neg_inf, mode="drop")
        out["alpha"] = out["alpha"].at[q].set(jnp.where(sgn > 0, lo, -hi), mode="drop")
        out["beta"] = c["beta"].at[q].set(jnp.where(sgn > 0, hi, -lo), mode="drop")
        out["sign"] = c["sign"].at[q].set(sgn, mode="drop")
        out["move"] = c["move"].at[jnp.where(push, t, levels)].set(m, mode="drop")
        out["top"] = jnp.where(push, t + 1, jnp.where(pop, t - 1, t))
        out["done"] = pop & (t == 0)
        out["nodes"] = c["nodes"] + 1
        return out

    c = jax.lax.while_loop(lambda c: ~c["done"], body, carry)
    # the pre-root's best is the negated value of the root (for the root's mover)
    return _Loop(value=-c["best"][0], root_values=c["root_values"], nodes=c["nodes"])


class SearchResult(NamedTuple):
    """:func:`search` of one position: value float32[] for the mover (exact when ``exact``),
    action int32[] (N*N: pass), exact bool[], nodes int32[] (loop iterations)."""

    value: jax.Array
    action: jax.Array
    exact: jax.Array
    nodes: jax.Array


def _check(depth: int, endgame_empties: int) -> None:
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    if isinstance(endgame_empties, bool) or not isinstance(endgame_empties, int):
        raise ValueError(f"endgame_empties must be an integer >= 0, got {endgame_empties!r}")
    if endgame_empties < 0:
        raise ValueError(f"endgame_empties must be an integer >= 0, got {endgame_empties!r}")


def search(
    env: Env,
    state,
    key: jax.Array,
    depth: int,
    endgame_empties: int = 10,
    full_root: bool = True,
    midgame: bool = True,
    weights=None,
) -> SearchResult:
    """Search one reversi state (jittable, vmappable): ``depth`` placements in the midgame,
    exact with at most ``endgame_empties`` empties.

    full_root: False skips a forced root (single move or pass; value 0). midgame: False leaves
    the midgame loop out (for known endgames: one loop fewer to compile). weights: the 6 weights
    (floats or a traced float32[6]), default :func:`default_weights`. The two loops (every
    square a lane / the root's empties) each idle for a root of the other mode.
    """
    _check(depth, endgame_empties)
    geo, tb = _tables(env.size)
    w = default_weights(env.size) if weights is None else weights
    cells, n_words = geo.cells, geo.words
    p0 = tuple(state.mover[i] for i in range(n_words))
    o0 = tuple(state.opponent[i] for i in range(n_words))
    empty0 = andnot(geo.full, or_(p0, o0))
    exact = popcount(empty0) <= endgame_empties
    moves0 = legal_moves(geo, p0, o0)
    n_moves = popcount(moves0)
    # a policy needs no search for a forced pass or a single legal move
    go = jnp.bool_(True) if full_root else n_moves >= 2
    loops = []
    if midgame:
        lanes = (tuple(jnp.asarray(b) for b in tb.lanes), jnp.arange(cells, dtype=jnp.int32))
        levels = max(depth, 2)  # pushed: pre-root, root, nodes with >= 2 placements left
        loops.append(_search_loop(geo, tb, w, p0, o0, lanes, False, depth, levels, go & ~exact))
    if endgame_empties > 0:
        # lanes: the root's empty squares (padded with the off-board square N*N: no bits)
        empty_sq = unpack(jnp.stack(empty0), cells)
        squares = jnp.nonzero(empty_sq, size=endgame_empties, fill_value=cells)[0]
        squares = squares.astype(jnp.int32)
        lanes = (square_bit(geo, squares), squares)
        levels = max(endgame_empties - 1, 2)  # pushed: pre-root, root, nodes with >= 3 empties
        loops.append(_search_loop(geo, tb, w, p0, o0, lanes, True, 1, levels, go & exact))
    if len(loops) == 2:
        res = jax.tree_util.tree_map(lambda a, b: jnp.where(exact, b, a), *loops)
    else:
        (res,) = loops
    top = jnp.max(res.root_values)
    noise = jax.random.uniform(key, (cells,))
    action = jnp.argmax(jnp.where(res.root_values >= top, noise, -1.0)).astype(jnp.int32)
    if not full_root:  # the single legal move (lowest set bit)
        single = jnp.argmax(unpack(jnp.stack(moves0), cells)).astype(jnp.int32)
        action = jnp.where(n_moves == 1, single, action)
    action = jnp.where(n_moves == 0, cells, action)  # pass (or the game is over)
    return SearchResult(
        value=jnp.where(go, res.value, 0.0), action=action, exact=exact, nodes=res.nodes
    )


def margin_of(value: jax.Array) -> jax.Array:
    """int32[...]: the final disc margin in an exact score ``WIN_BONUS * sign(m) + m``."""
    return (value - WIN_BONUS * jnp.sign(value)).astype(jnp.int32)


def solve_endgame(env: Env, state, max_empties: int) -> tuple[jax.Array, jax.Array]:
    """(int32[] final disc margin for the mover with perfect play, int32[] a best action) of
    a state with at most ``max_empties`` (static >= 1) empties: a concrete state with more is
    a ValueError; under ``jit`` / ``vmap`` the answer for such a state is meaningless."""
    if isinstance(max_empties, bool) or not isinstance(max_empties, int) or max_empties < 1:
        raise ValueError(f"max_empties must be an integer >= 1, got {max_empties!r}")
    res = search(env, state, jax.random.PRNGKey(0), 1, max_empties, midgame=False)
    if not isinstance(res.exact, jax.core.Tracer) and not bool(np.all(res.exact)):
        raise ValueError(
            f"solve_endgame: the position has more than max_empties={max_empties} empty "
            "squares: give a larger max_empties"
        )
    return margin_of(res.value), res.action


def reversi_engine_policy(env: Env, depth: int, endgame_empties: int = 10, weights=None) -> Policy:
    """The engine as a policy ``policy(key, state) -> int32[]`` (module docstring)."""
    if getattr(env, "name", None) != "reversi":
        raise ValueError(f"the reversi engine needs a reversi env, not {env!r}")
    _check(depth, endgame_empties)

    def policy(key: jax.Array, state) -> jax.Array:
        return search(env, state, key, depth, endgame_empties, False, weights=weights).action

    return policy


def with_exact_endgame(env: Env, policy: Policy, endgame_empties: int = 10) -> Policy:
    """``policy`` (same key, same moves) until at most ``endgame_empties`` squares are empty,
    then the exact solve, as strong othello programs play their last moves (spec
    ``solve:E:<player>``)."""
    if getattr(env, "name", None) != "reversi":
        raise ValueError(f"an exact reversi endgame needs a reversi env, not {env!r}")
    _check(1, endgame_empties)
    if endgame_empties < 1:
        raise ValueError(f"endgame_empties must be an integer >= 1, got {endgame_empties!r}")

    def hybrid(key: jax.Array, state) -> jax.Array:
        solved = search(
            env, state, jax.random.fold_in(key, 1), 1, endgame_empties, False, midgame=False
        )
        # solved.exact: at most endgame_empties empty squares (else the solve stayed idle)
        return jnp.where(solved.exact, solved.action, policy(key, state)).astype(jnp.int32)

    return hybrid
