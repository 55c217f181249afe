"""Animal shogi alpha-beta engine: a batched, jitted opponent with a real evaluation.

    policy = animal_shogi_engine_policy(env, depth=3)     # policy(key, state) -> int32[]

Fail-soft negamax to ``depth`` plies, then up to ``quiescence`` plies of captures and
promotions (the side to move may stand pat; in check it searches all its evasions), in an
explicit stack inside one ``lax.while_loop`` like
:func:`~jaxgames.evaluation.opponents.alphabeta_policy`, but on the raw position (board in the
mover's frame, both hands) with the rules' results detected exactly: a lion *try*, a side with
no legal move, the third occurrence of a position (counted over the game's history and the
search path) and the ``max_steps`` cap. The next move of a node is its untried move with the
best cheap score (:func:`order_scores`). Root values are exact for every move that could be
best (the root window stays one unit below the best), and the move is drawn uniformly among
the equal-best ones with the key.

Scores, integers for the player to move: a win at ply k is ``WIN - k``, a draw 0, a static
node :func:`evaluate` (or ``WIN - k - 1`` with a legal try, which always wins at once).

Evaluation (mover's view, ``own - opponent`` unless stated), hand-set: piece values are the
ratios of ``animal_shogi.heuristic`` (chick 1, elephant 3, giraffe 4, hen 5), pieces in hand
worth more than on the board (a chick most, relative to its value: it is dropped to block or
attack next to a lion); positional terms stay below a chick so material dominates, and
advancement keeps shallow engines from drifting into repetition draws (docs/engines.md)::

    material      board: giraffe 400, elephant 300, chick 100, hen 500; hand: 440, 330, 120
    capture       + 3/4 of the mover's best capture gain now: the victim's board value plus its
                  hand value for the captor, minus the same for the cheapest capturer if the
                  victim is defended; a lion takes only undefended pieces; in check only the
                  checker counts
    hanging       - the opponent's threats alike: 1/4 of the largest + 3/4 of the rest
    lion safety   -30 per square next to the mover's lion the opponent attacks, +30 the other
                  way round; -60 in check
    try threats   -250 per square the opponent's lion could try on next move; +40 if the
                  mover's lion is one step from its far rank
    control       +10 per square the mover attacks, -10 per square the opponent attacks
    advancement   +20 per rank the lion stands forward of home, +10 per rank for each chick
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxgames.core import Env, GameState, Policy, random_action
from jaxgames.games.animal_shogi import (
    CHICK,
    DIRECTIONS,
    HEN,
    LION,
    MOVE_TO,
    MOVES,
    NUM_ACTIONS,
    NUM_MOVE_ACTIONS,
    OPP_MOVES,
    apply_action,
    legal_action_mask,
    mover_view,
    position_key,
    rotate,
)

#: score of a win at ply 0; a win at ply k scores WIN - k (evaluations stay below ~1e4)
WIN = 1_000_000
#: "no value yet" / illegal move (below any reachable score)
NEG = -(2**30)

# --------------------------------------------------------------------- evaluation weights
#: by board code in the mover's frame: 0 empty, 1..5 the mover's L G E C H, 6..10 the opponent's
BOARD_VALUE = np.array([0] + [0, 400, 300, 100, 500] * 2, np.int32)
#: by hand kind (0 giraffe, 1 elephant, 2 chick)
HAND_VALUE = np.array([440, 330, 120], np.int32)
#: what capturing the piece with this code is worth to the captor: the opponent loses its board
#: value, the captor gains the hand value of the (demoted) piece; the lion is never capturable
GAIN = np.array([0] + [0, 840, 630, 220, 620] * 2, np.int32)
CAPTURE_NUM, CAPTURE_DEN = 3, 4  # share of the mover's best capture counted
HANG_MAX_NUM, HANG_REST_NUM, HANG_DEN = 1, 3, 4  # share of the largest / other threats counted
LION_ZONE = 30  # per attacked square next to a lion
IN_CHECK = 60
OPP_TRY_SQUARE = 250  # per square the opponent's lion could try on next move
LION_NEAR_TRY = 40
CONTROL = 10  # per attacked square
LION_ADVANCE = 20  # per row a lion has advanced from its home rank
CHICK_ADVANCE = 10  # per row a chick has advanced

#: extra plies of captures and promotions searched beyond the full-width depth
QUIESCENCE = 4

# move-ordering bonuses (same units)
ORDER_TRY = 100_000
ORDER_PROMOTION = 400
ORDER_CHECK = 150


# --------------------------------------------------------------------- geometry tables
def _tables():
    """ATTACKS int32[11, 12]: bitboard of squares attacked by the piece with board code c on
    square s (mover's frame); plus per-action from/to squares and the placed piece code."""
    attacks = np.zeros((11, 12), np.int32)
    for code in range(1, 11):
        dirs = MOVES[code] if code <= 5 else OPP_MOVES[code - 5]
        for s in range(12):
            r, c = divmod(s, 3)
            for d in dirs:
                dr, dc = DIRECTIONS[d]
                if 0 <= r + dr < 4 and 0 <= c + dc < 3:
                    attacks[code, s] |= 1 << ((r + dr) * 3 + c + dc)
    a = np.arange(NUM_ACTIONS)
    is_drop = a >= NUM_MOVE_ACTIONS
    to_sq = np.where(is_drop, a % 12, np.asarray(MOVE_TO)[a % NUM_MOVE_ACTIONS])
    from_sq = np.where(is_drop, -1, a % 12)
    drop_code = np.where(is_drop, (a - NUM_MOVE_ACTIONS) // 12 + 2, 0)
    return attacks, to_sq.astype(np.int32), from_sq.astype(np.int32), drop_code.astype(np.int32)


ATTACKS, ACTION_TO, ACTION_FROM, ACTION_DROP_CODE = _tables()
SQUARES = np.arange(12, dtype=np.int32)
ROW1 = 0b000000111000  # one step from the mover's far rank (row 0)
ROW3 = 0b111000000000  # the opponent's far rank (the mover's home rank)


def _popcount(x: jax.Array) -> jax.Array:
    """int32 bitboard(s) -> number of set bits among the 12 squares."""
    return jnp.sum((x[..., None] >> SQUARES) & 1, axis=-1)


class _Attacks(NamedTuple):
    """Attack information of a position (mover's frame), shared by evaluation and ordering."""

    hit: jax.Array  # bool[12, 12]: the piece on square s attacks square t
    own: jax.Array  # bool[12] squares holding the mover's pieces
    opp: jax.Array  # bool[12] squares holding the opponent's pieces
    own_count: jax.Array  # int32[12] number of the mover's pieces attacking each square
    opp_count: jax.Array  # int32[12] same for the opponent
    own_bits: jax.Array  # int32[] bitboard of squares the mover attacks
    opp_bits: jax.Array  # int32[] bitboard of squares the opponent attacks
    own_lion: jax.Array  # int32[] square of the mover's lion
    opp_lion: jax.Array  # int32[] square of the opponent's lion


def _attacks(view: jax.Array) -> _Attacks:
    masks = jnp.asarray(ATTACKS)[view, SQUARES]  # int32[12]
    hit = ((masks[:, None] >> SQUARES[None, :]) & 1) == 1
    own = (view >= 1) & (view <= 5)
    opp = view >= 6
    own_count = jnp.sum(hit & own[:, None], axis=0, dtype=jnp.int32)
    opp_count = jnp.sum(hit & opp[:, None], axis=0, dtype=jnp.int32)
    bits = lambda c: jnp.sum(jnp.where(c > 0, 1 << SQUARES, 0))  # noqa: E731
    return _Attacks(
        hit=hit,
        own=own,
        opp=opp,
        own_count=own_count,
        opp_count=opp_count,
        own_bits=bits(own_count),
        opp_bits=bits(opp_count),
        own_lion=jnp.argmax(view == LION).astype(jnp.int32),
        opp_lion=jnp.argmax(view == LION + 5).astype(jnp.int32),
    )


def _capture_gains(view, hit, side, other_count, lion_code):
    """int32[12]: what ``side`` (bool[12] its squares) wins by capturing on each square now.

    Undefended victim: its GAIN. Defended victim: GAIN of the victim minus GAIN of the cheapest
    non-lion capturer (it is recaptured), at least 0; a lion may not take a defended piece."""
    gain = jnp.asarray(GAIN)[view]  # int32[12] by victim square
    attackers = hit & side[:, None]  # [s, t]
    by_lion = jnp.any(attackers & (view == lion_code)[:, None], axis=0)
    non_lion = attackers & (view != lion_code)[:, None]
    cheapest = jnp.min(jnp.where(non_lion, gain[:, None], 10**6), axis=0)
    defended = other_count > 0
    undefended_gain = jnp.where(by_lion | jnp.any(non_lion, axis=0), gain, 0)
    exchange = jnp.maximum(gain - cheapest, 0)  # 0 where there is no non-lion capturer
    victim = (view != 0) & ~side  # GAIN of a lion is 0: it is never capturable
    return jnp.where(victim, jnp.where(defended, exchange, undefended_gain), 0)


def evaluate(view: jax.Array, own_hand: jax.Array, opp_hand: jax.Array) -> jax.Array:
    """int32[] static evaluation for the mover (module docstring; no terminal detection) of
    view int32[12] (mover's frame: 1..5 the mover's pieces, 6..10 the opponent's) and hands
    int32[3] (giraffe, elephant, chick)."""
    at = _attacks(view)
    board_value = jnp.asarray(BOARD_VALUE)[view]
    hand_value = jnp.asarray(HAND_VALUE)
    material = (
        jnp.sum(jnp.where(at.own, board_value, 0))
        - jnp.sum(jnp.where(at.opp, board_value, 0))
        + jnp.sum(own_hand * hand_value)
        - jnp.sum(opp_hand * hand_value)
    )
    # captures available to the mover now, and the opponent's threats against the mover's pieces
    # (roles swapped: the opponent's lion has code 6 and the mover's pieces are its victims)
    mine = _capture_gains(view, at.hit, at.own, at.opp_count, LION)
    theirs = _capture_gains(view, at.hit, at.opp, at.own_count, LION + 5)
    in_check = at.opp_count[at.own_lion] > 0
    # in check, the only capture that may be legal is of the (single) checker
    mine = jnp.where(in_check, jnp.where(at.hit[:, at.own_lion] & at.opp, mine, 0), mine)
    capture = CAPTURE_NUM * jnp.max(mine) // CAPTURE_DEN
    worst = jnp.max(theirs)
    hanging = (HANG_MAX_NUM * worst + HANG_REST_NUM * (jnp.sum(theirs) - worst)) // HANG_DEN

    own_zone = jnp.asarray(ATTACKS)[LION, at.own_lion]
    opp_zone = jnp.asarray(ATTACKS)[LION, at.opp_lion]
    lion_safety = LION_ZONE * (
        _popcount(opp_zone & at.own_bits) - _popcount(own_zone & at.opp_bits)
    ) - IN_CHECK * in_check.astype(jnp.int32)

    opp_occupied = jnp.sum(jnp.where(at.opp, 1 << SQUARES, 0))
    opp_tries = opp_zone & ROW3 & ~opp_occupied & ~at.own_bits
    near_try = ((1 << at.own_lion) & ROW1) != 0
    tries = LION_NEAR_TRY * near_try.astype(jnp.int32) - OPP_TRY_SQUARE * _popcount(opp_tries)

    control = CONTROL * (_popcount(at.own_bits) - _popcount(at.opp_bits))
    # progress: rows the lions and chicks have advanced (mover's rows count down to 0)
    row = SQUARES // 3
    advance = LION_ADVANCE * ((3 - at.own_lion // 3) - at.opp_lion // 3) + CHICK_ADVANCE * (
        jnp.sum(jnp.where(view == CHICK, 3 - row, 0))
        - jnp.sum(jnp.where(view == CHICK + 5, row, 0))
    )
    total = material + capture - hanging + lion_safety + tries + control + advance
    return total.astype(jnp.int32)


def _has_try(view: jax.Array, legal: jax.Array) -> jax.Array:
    """bool[]: the mover has a legal lion move onto its far rank (a try: wins at once)."""
    lion_move = jnp.asarray(view)[jnp.maximum(jnp.asarray(ACTION_FROM), 0)] == LION
    onto_far = (jnp.asarray(ACTION_TO) >= 0) & (jnp.asarray(ACTION_TO) < 3)
    return jnp.any(legal & lion_move & onto_far & (jnp.arange(NUM_ACTIONS) < NUM_MOVE_ACTIONS))


def order_scores(view: jax.Array, legal: jax.Array) -> jax.Array:
    """int32[132] move-ordering scores (``NEG`` illegal): try +100000, capture + GAIN of the
    victim, promotion +400, check +150, minus the GAIN of a piece put en prise."""
    at = _attacks(view)
    to = jnp.maximum(jnp.asarray(ACTION_TO), 0)
    frm = jnp.maximum(jnp.asarray(ACTION_FROM), 0)
    is_drop = jnp.arange(NUM_ACTIONS) >= NUM_MOVE_ACTIONS
    piece = jnp.where(is_drop, jnp.asarray(ACTION_DROP_CODE), view[frm])
    victim = jnp.where(is_drop, 0, view[to])
    promote = (piece == CHICK) & (to < 3) & ~is_drop
    placed = jnp.where(promote, HEN, piece)
    gives_check = ((jnp.asarray(ATTACKS)[placed, to] >> at.opp_lion) & 1) == 1
    defenders = at.own_count[to] - (~is_drop).astype(jnp.int32)  # the mover itself attacked `to`
    en_prise = (at.opp_count[to] > 0) & (defenders <= 0) & (piece != LION)
    gain = jnp.asarray(GAIN)
    score = (
        ORDER_TRY * ((piece == LION) & (to < 3) & ~is_drop)
        + gain[victim]
        + ORDER_PROMOTION * promote
        + ORDER_CHECK * gives_check
        - jnp.where(en_prise, gain[placed], 0)
    )
    return jnp.where(legal, score, NEG).astype(jnp.int32)


# --------------------------------------------------------------------- search
class Child(NamedTuple):
    """A position after one ply in the new mover's frame: view int32[12], hands int32[3] (new
    mover's, then the player who moved), legal bool[132], won bool[] (the mover won: a try,
    or no reply), key uint32[2] (the env's position key)."""

    view: jax.Array
    own_hand: jax.Array
    opp_hand: jax.Array
    legal: jax.Array
    won: jax.Array
    key: jax.Array


def play(view, own_hand, opp_hand, action, mover) -> Child:
    """Play legal ``action`` (int32[]) by player ``mover`` (int32[], needed only for the
    position key) from a mover-frame position; returns the :class:`Child`."""
    moved, own_after = apply_action(view, own_hand, action)
    tried = jnp.any(moved[:3] == LION)
    child_view = rotate(moved)
    legal = legal_action_mask(child_view, opp_hand)
    nxt = 1 - mover
    board = mover_view(child_view, nxt)  # the absolute board (rotate is its own inverse)
    hand = jnp.where(nxt == 0, jnp.stack([opp_hand, own_after]), jnp.stack([own_after, opp_hand]))
    return Child(
        view=child_view,
        own_hand=opp_hand,
        opp_hand=own_after,
        legal=legal,
        won=tried | ~jnp.any(legal),
        key=position_key(board, hand, nxt),
    )


def _root(state) -> tuple[jax.Array, jax.Array, jax.Array]:
    p = state.current_player
    view = mover_view(state.board, p)
    return view, state.hand[p], state.hand[1 - p]


def _quiet_moves(view: jax.Array, legal: jax.Array) -> jax.Array:
    """bool[132]: the legal moves searched in quiescence - captures and chick promotions."""
    to = jnp.maximum(jnp.asarray(ACTION_TO), 0)
    frm = jnp.maximum(jnp.asarray(ACTION_FROM), 0)
    is_move = jnp.arange(NUM_ACTIONS) < NUM_MOVE_ACTIONS
    capture = view[to] >= 6
    promote = (view[frm] == CHICK) & (to < 3)
    return legal & is_move & (capture | promote)


def _in_check(view: jax.Array) -> jax.Array:
    """bool[]: the mover's lion is attacked."""
    at = _attacks(view)
    return at.opp_count[at.own_lion] > 0


def search(env: Env, depth: int, quiescence: int = QUIESCENCE, exact_root: bool = False):
    """``search_fn(state) -> int32[132]``: the root moves' values (``NEG`` illegal), exact for
    the best ones and upper bounds for the rest, or all exact with ``exact_root`` (slower)."""
    for name, x, low in (("depth", depth, 1), ("quiescence", quiescence, 0)):
        if isinstance(x, bool) or not isinstance(x, int) or x < low:
            raise ValueError(f"search {name} must be an integer >= {low}, got {x!r}")
    if getattr(env, "name", None) != "animal_shogi":
        raise ValueError(f"the animal shogi engine plays only animal_shogi, not {env!r}")
    max_steps = env.max_steps
    size = depth + quiescence  # stack of nodes at plies 0 .. size - 1
    no_key = jnp.full((2,), 0xFFFFFFFF, jnp.uint32)

    def search_fn(state) -> jax.Array:
        view, oh, ph = _root(state)
        root_player = state.current_player
        stack = dict(
            view=jnp.zeros((size, 12), jnp.int32).at[0].set(view),
            oh=jnp.zeros((size, 3), jnp.int32).at[0].set(oh),
            ph=jnp.zeros((size, 3), jnp.int32).at[0].set(ph),
            # path keys of plies >= 1 (the root is in the game history already)
            key=jnp.broadcast_to(no_key, (size, 2)),
            order=jnp.full((size, NUM_ACTIONS), NEG, jnp.int32)
            .at[0]
            .set(order_scores(view, state.legal_action_mask)),
        )
        carry = dict(
            stack=stack,
            p=jnp.int32(0),
            act=jnp.zeros(size, jnp.int32),
            best=jnp.full(size, NEG, jnp.int32),
            alpha=jnp.full(size, NEG, jnp.int32),
            beta=jnp.full(size, -NEG, jnp.int32),
            root=jnp.full(NUM_ACTIONS, NEG, jnp.int32),
            done=jnp.bool_(False),
        )

        def body(c):
            p, best, alpha, beta, act = c["p"], c["best"], c["alpha"], c["beta"], c["act"]
            node = {k: x[p] for k, x in c["stack"].items()}
            a = jnp.argmax(node["order"]).astype(jnp.int32)
            has_move = (node["order"][a] > NEG) & (best[p] < beta[p])
            mover = jnp.where(p % 2 == 0, root_player, 1 - root_player)
            ch = play(node["view"], node["oh"], node["ph"], a, mover)
            ply = p + 1
            # the third occurrence of a position draws: count it in the game and on the path
            path = (jnp.arange(size) >= 1) & (jnp.arange(size) <= p)
            seen = jnp.sum(jnp.all(state.history == ch.key, axis=1)) + jnp.sum(
                path & jnp.all(c["stack"]["key"] == ch.key, axis=1)
            )
            draw = (seen >= 2) | (state.step_count + ply >= max_steps)
            # the child's static value for its mover; a legal try there is a win, exactly
            has_try = _has_try(ch.view, ch.legal)
            stand = jnp.where(has_try, WIN - ply - 1, evaluate(ch.view, ch.own_hand, ch.opp_hand))
            # beyond the full-width depth the child is a quiescence node: it stands pat on
            # `stand` unless in check, and searches only captures and promotions
            quiet = ply >= depth
            in_check = _in_check(ch.view)
            q_moves = jnp.where(in_check, ch.legal, _quiet_moves(ch.view, ch.legal))
            child_beta = -alpha[p]
            stands = ~in_check & (~jnp.any(q_moves) | (stand >= child_beta))
            is_leaf = ch.won | draw | (quiet & (has_try | (ply >= size) | stands))
            leaf = jnp.where(ch.won, WIN - ply, jnp.where(draw, 0, -stand))
            # three exclusive cases, applied as guarded single-row updates:
            # (1) score a leaf move into node p, (2) push the child to ply p + 1, (3) node p is
            # exhausted or cut off: pop it and fold its negated value into its parent
            push = has_move & ~is_leaf
            pop = ~has_move
            t = jnp.where(pop, jnp.maximum(p - 1, 0), p)  # node receiving a value
            v = jnp.where(pop, -best[p], leaf)
            fa = jnp.where(pop, act[t], a)
            fold = (has_move & is_leaf) | (pop & (p > 0))
            # at the root alpha stays one unit below the best, so that ties are searched exactly
            raised = jnp.where(t == 0, NEG if exact_root else v - 1, v)
            best = best.at[t].set(jnp.where(fold, jnp.maximum(best[t], v), best[t]))
            alpha = alpha.at[t].set(jnp.where(fold, jnp.maximum(alpha[t], raised), alpha[t]))
            root = c["root"].at[fa].set(jnp.where(fold & (t == 0), v, c["root"][fa]))

            q = jnp.minimum(ply, size - 1)
            child = dict(
                view=ch.view,
                oh=ch.own_hand,
                ph=ch.opp_hand,
                key=ch.key,
                order=order_scores(ch.view, jnp.where(quiet, q_moves, ch.legal)),
            )
            stack = dict(c["stack"], order=c["stack"]["order"].at[p, a].set(NEG))
            stack = {k: x.at[q].set(jnp.where(push, child[k], x[q])) for k, x in stack.items()}
            start = jnp.where(quiet & ~in_check, stand, NEG)  # stand pat
            return dict(
                stack=stack,
                p=jnp.where(push, q, jnp.where(pop, jnp.maximum(p - 1, 0), p)),
                act=act.at[p].set(jnp.where(push, a, act[p])),
                best=best.at[q].set(jnp.where(push, start, best[q])),
                alpha=alpha.at[q].set(jnp.where(push, jnp.maximum(-c["beta"][p], start), alpha[q])),
                beta=beta.at[q].set(jnp.where(push, child_beta, beta[q])),
                root=root,
                done=pop & (p == 0),
            )

        out = jax.lax.while_loop(lambda c: ~c["done"], body, carry)
        return jnp.where(state.legal_action_mask, out["root"], NEG)

    return search_fn


def animal_shogi_engine_policy(env: Env, depth: int, quiescence: int = QUIESCENCE) -> Policy:
    """The engine as a policy ``policy(key, state) -> int32[]`` (a finished game: 0)."""
    search_fn = search(env, depth, quiescence)

    def policy(key: jax.Array, state: GameState) -> jax.Array:
        values = search_fn(state)
        best = jnp.max(values)
        return random_action(key, state.legal_action_mask & (values == best))

    return policy
