"""Reversi engine: exact endgame vs brute force, the solved 6x6 line, midgame alpha-beta vs a
plain negamax, legal / deterministic / vmappable moves, and a small match against greedy.

Every jitted function is built once per board size (module-level caches): compiling is most of
this file's run time.
"""

from __future__ import annotations

import functools
import random

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_reversi import BLACK, WHITE, RefReversi

import jaxgames
from jaxgames.core import random_action
from jaxgames.evaluation import reversi_engine as eng
from jaxgames.evaluation.opponents import greedy_policy
from jaxgames.games.reversi import ReversiState, pack_mask

#: solve_endgame sizes: the largest number of empties each board's tests solve
SOLVE_EMPTIES = {4: 12, 6: 12}
#: every solver call has this batch size (padded), so each board compiles once
BATCH = 32
#: the one 8x8 search (exact endgame, midgame, policy tests), always on BATCH_8 positions
DEPTH_8, ENDGAME_8, BATCH_8 = 3, 7, 48
#: random plies before the engine's match against greedy
OPENING = 4


@functools.lru_cache(maxsize=None)
def env_of(size: int):
    return jaxgames.make("reversi", size=size)


@functools.lru_cache(maxsize=None)
def _solver(size: int):
    env = env_of(size)
    return jax.jit(jax.vmap(lambda s: eng.solve_endgame(env, s, SOLVE_EMPTIES[size])))


def solve(size: int, states: list) -> tuple[np.ndarray, np.ndarray]:
    """(margins, actions) of ``solve_endgame`` for a list of states, in padded batches."""
    out = []
    for i in range(0, len(states), BATCH):
        part = states[i : i + BATCH]
        part = part + [part[0]] * (BATCH - len(part))
        margin, action = _solver(size)(stack(part))
        out.append((np.asarray(margin), np.asarray(action)))
    n = len(states)
    return np.concatenate([m for m, _ in out])[:n], np.concatenate([a for _, a in out])[:n]


@functools.lru_cache(maxsize=None)
def _search_8x8():
    env = env_of(8)
    return jax.jit(jax.vmap(lambda k, s: eng.search(env, s, k, DEPTH_8, ENDGAME_8)[:2]))


def search_8x8(states: list, key=jax.random.PRNGKey(0)) -> tuple[np.ndarray, np.ndarray]:
    """(value, action) of ``eng.search`` at DEPTH_8 / ENDGAME_8 for up to BATCH_8 states."""
    n = len(states)
    keys = jax.random.split(key, BATCH_8)
    value, action = _search_8x8()(keys, stack(states + [states[0]] * (BATCH_8 - n)))
    return np.asarray(value)[:n], np.asarray(action)[:n]


@functools.lru_cache(maxsize=None)
def _evaluator(size: int):
    env = env_of(size)
    return jax.jit(jax.vmap(lambda s: eng.evaluate(env, s)))


def evaluate(size: int, states: list, chunk: int = 512) -> np.ndarray:
    """float32[len(states)]: ``eng.evaluate`` in padded batches of ``chunk`` (one compile)."""
    out = []
    for i in range(0, len(states), chunk):
        part = states[i : i + chunk]
        out.append(np.asarray(_evaluator(size)(stack(part + [part[0]] * (chunk - len(part))))))
    return np.concatenate(out)[: len(states)]


def stack(states):
    """A batch from a list of states (numpy: stacking thousands of small jax arrays is slow)."""
    return jax.tree_util.tree_map(lambda *x: np.stack([np.asarray(v) for v in x]), *states)


def to_state(env, g: RefReversi) -> ReversiState:
    """The env state of a reference game's position (``passed`` is not carried over)."""
    text = "".join("-XO"[v] for v in g.cells()) + " " + "XO"[g.player]
    return env.from_text(text)


# ------------------------------------------------------------------ pure-Python reference
def ref_solve(g: RefReversi, memo: dict, seen: list) -> int:
    """Final disc margin (side to move minus the other) with perfect play: plain negamax over
    the reference implementation. ``seen[0]`` is set when a pass occurs in the tree."""
    key = (tuple(g.cells()), g.player, g.passed)
    if key in memo:
        return memo[key]
    if g.done:
        me, other = (BLACK, WHITE) if g.player == 0 else (WHITE, BLACK)
        value = g.count(me) - g.count(other)
    else:
        value = -(10**9)
        for a in g.legal_actions():
            seen[0] |= a == g.n * g.n
            h = g.copy()
            h.play(a)
            value = max(value, -ref_solve(h, memo, seen))
    memo[key] = value
    return value


def random_position(n: int, empties: int, rng: random.Random) -> RefReversi | None:
    """Random play until ``empties`` squares are empty; None if the game ended first or the
    last ply was a pass (the env's text format cannot say so)."""
    g = RefReversi(n)
    while not g.done and g.count(0) > empties:
        g.play(rng.choice(g.legal_actions()))
    return None if g.done or g.passed else g


# ------------------------------------------------------------------ exact endgame
@pytest.mark.parametrize("size", [6, 8])
def test_endgame_solver_matches_brute_force(size):
    """solve_endgame (6x6) and the search's exact mode (8x8, at most 7 empties)."""
    env, rng = env_of(size), random.Random(size)
    games, margins, passes = [], [], 0
    while len(games) < 32:
        g = random_position(size, rng.randint(1, 6 if size == 6 else 7), rng)
        if g is None:
            continue
        seen = [False]
        margins.append(ref_solve(g, {}, seen))
        passes += seen[0]
        games.append(g)
    assert passes >= 3  # positions whose perfect-play trees contain passes
    states = [to_state(env, g) for g in games]
    if size == 8:
        value, action = search_8x8(states)
        margin = np.asarray(eng.margin_of(value))
    else:
        margin, action = solve(size, states)
    np.testing.assert_array_equal(margin, margins)
    for g, m, a in zip(games, margins, action):  # the move reached the margin
        h = g.copy()
        h.play(int(a))
        assert -ref_solve(h, {}, [False]) == m


def test_endgame_solver_4x4_whole_games():
    env, rng = env_of(4), random.Random(4)
    memo, states, margins = {}, [], []
    for _ in range(6):
        g = RefReversi(4)
        while not g.done:
            if not g.passed:
                states.append(to_state(env, g))
                margins.append(ref_solve(g, memo, [False]))
            g.play(rng.choice(g.legal_actions()))
    margin, _ = solve(4, states)
    np.testing.assert_array_equal(margin, margins)
    assert margins[0] == ref_solve(RefReversi(4), memo, [False])  # the start is included


LINE_6X6 = (
    "c2 b4 c5 d2 e4 e3 d1 c1 b1 d5 d6 f4 b3 b2 f3 f2 "
    "e2 b6 a4 c6 a6 a2 b5 a5 e6 e5 a3 a1 f5 f6 e1 f1"
)


def test_solved_6x6_perfect_line():
    """6x6 othello is a white win by 20-16 (Feinstein 1993): every position of a perfect-play
    line is worth +4 for white once the solver sees to the end."""
    env = env_of(6)
    state, states, passes = env.init(jax.random.PRNGKey(0)), [], 0
    for move in LINE_6X6.split():
        states.append(state)
        if bool(state.legal_action_mask[env.pass_action]):  # black's forced pass
            assert int(state.current_player) == 0
            state = env.step(state, env.pass_action)
            states.append(state)
            passes += 1
        state = env.step(state, env.text_to_action(state, move))
    assert passes == 1 and bool(state.terminated)
    assert state.rewards.tolist() == [-1.0, 1.0]
    board = env.to_text(state).split()[0]
    assert board.count("O") == 20 and board.count("X") == 16
    late = [s for s in states if 36 - text_discs(env, s) <= SOLVE_EMPTIES[6]]
    assert len(late) == SOLVE_EMPTIES[6] + 1  # 12 placements and the pass
    margin, _ = solve(6, late)
    white = np.where(np.array([int(s.current_player) for s in late]) == 1, 1, -1)
    np.testing.assert_array_equal(margin * white, 4)


def text_discs(env, state) -> int:
    return sum(c in "XO" for c in env.to_text(state).split()[0])


# ------------------------------------------------------------------ midgame search
def ref_negamax(env, g: RefReversi, depth: int, leaves: list) -> object:
    """The engine's search semantics as a plain tree: a finished game is exact; at depth 0 the
    position is evaluated as it stands; a forced pass uses no depth. Returns a nested
    structure whose leaves index ``leaves`` (positions to evaluate in one batch)."""
    if g.done:
        me, other = (BLACK, WHITE) if g.player == 0 else (WHITE, BLACK)
        return (
            "exact",
            float(eng.WIN_BONUS * np.sign(g.count(me) - g.count(other)))
            + (g.count(me) - g.count(other)),
        )
    if depth == 0:
        leaves.append(g)
        return ("leaf", len(leaves) - 1)
    moves = g.legal_actions()
    if moves == [g.n * g.n]:
        h = g.copy()
        h.play(moves[0])
        return ("pass", ref_negamax(env, h, depth, leaves))
    kids = []
    for a in moves:
        h = g.copy()
        h.play(a)
        kids.append((a, ref_negamax(env, h, depth - 1, leaves)))
    return ("max", kids)


def ref_value(node, leaf_values):
    kind, x = node
    if kind == "exact":
        return x
    if kind == "leaf":
        return float(leaf_values[x])
    if kind == "pass":
        return -ref_value(x, leaf_values)
    return max(-ref_value(k, leaf_values) for _, k in x)


def board_state(env, g: RefReversi) -> ReversiState:
    """A bare ReversiState (mover/opponent only; enough for :func:`eng.evaluate`)."""
    cells = np.array(g.cells())
    me, other = (1, 2) if g.player == 0 else (2, 1)
    n2 = env.num_actions
    return ReversiState(
        mover=pack_mask(cells == me),
        opponent=pack_mask(cells == other),
        current_player=np.int32(g.player),
        legal_action_mask=np.zeros(n2, bool),
        rewards=np.zeros(2, np.float32),
        terminated=np.bool_(False),
        truncated=np.bool_(False),
        step_count=np.int32(0),
        passed=np.bool_(False),
    )


def test_midgame_search_equals_plain_negamax():
    """Depth-3 alpha-beta (move ordering, pruning, the vectorised last ply, passes) returns
    exactly the value of a full-width negamax over :func:`eng.evaluate`, and a best move."""
    env, rng = env_of(8), random.Random(7)
    games = []
    while len(games) < 8:
        g = random_position(8, rng.randint(ENDGAME_8 + 1, 50), rng)
        if g is not None:
            games.append(g)
    trees, leaves = [], []
    for g in games:
        trees.append(ref_negamax(env, g, DEPTH_8, leaves))
    leaf_values = evaluate(8, [board_state(env, h) for h in leaves])
    value, action = search_8x8([to_state(env, g) for g in games])
    for tree, v, a in zip(trees, value, action):
        expected = ref_value(tree, leaf_values)
        np.testing.assert_allclose(v, expected, rtol=1e-5, atol=1e-3)
        if tree[0] == "pass":
            assert a == env.pass_action
        else:
            best = {m: -ref_value(k, leaf_values) for m, k in tree[1]}
            assert best[int(a)] == pytest.approx(expected, rel=1e-5, abs=1e-3)


# ------------------------------------------------------------------ the policy
def test_policy_legal_deterministic_vmappable_8x8():
    """Random 8x8 positions of both colours (forced passes and endgames included): the move is
    legal, and the same for the same key."""
    env = env_of(8)
    step = jax.jit(jax.vmap(env.step))
    key = jax.random.PRNGKey(3)
    games = 16
    state = jax.vmap(env.init)(jax.random.split(key, games))
    states = []
    for t in range(130):
        states.append(state)
        key, k = jax.random.split(key)
        state = step(
            state, jax.vmap(random_action)(jax.random.split(k, games), state.legal_action_mask)
        )
        if bool(jnp.all(state.terminated)):
            break
    batch = jax.tree_util.tree_map(lambda *x: np.concatenate(x), *states)
    mask = np.asarray(batch.legal_action_mask)
    filled = np.unpackbits(np.asarray(batch.mover | batch.opponent).view(np.uint8), axis=1)
    empties = 64 - filled.sum(1)
    # a fixed-size sample: every forced pass, then endgame (exact) and midgame positions
    live = ~np.asarray(batch.terminated)
    forced = np.flatnonzero(live & mask[:, env.pass_action])
    late = np.flatnonzero(live & ~mask[:, env.pass_action] & (empties <= ENDGAME_8))
    rest = np.flatnonzero(live & ~mask[:, env.pass_action] & (empties > ENDGAME_8))
    rng = np.random.default_rng(0)
    pick = np.concatenate([forced, late[:16], rng.permutation(rest)])[:BATCH_8]
    assert len(forced) >= 3 and len(late) >= 8 and len(pick) == BATCH_8
    batch = jax.tree_util.tree_map(lambda x: x[pick], batch)
    mask = mask[pick]
    assert set(np.asarray(batch.current_player).tolist()) == {0, 1}
    states = [jax.tree_util.tree_map(lambda x: x[i], batch) for i in range(BATCH_8)]
    a1, a2 = search_8x8(states)[1], search_8x8(states)[1]
    np.testing.assert_array_equal(a1, a2)  # deterministic for a key
    assert mask[np.arange(BATCH_8), a1].all()
    assert (a1[: len(forced)] == env.pass_action).all()


@functools.lru_cache(maxsize=None)
def match_fn(size: int, games: int, depth: int, endgame: int):
    """jit(key) -> (engine's reward per game, all engine moves legal?, forced passes seen):
    the engine against greedy, half the games with each colour, OPENING random opening plies; the
    engine also moves (unplayed) in the greedy side's positions, so both colours are checked."""
    env = env_of(size)
    engine = jax.vmap(eng.reversi_engine_policy(env, depth, endgame))
    greedy = jax.vmap(greedy_policy(env))
    engine_player = jnp.arange(games) % 2

    def run(key):
        state = jax.vmap(env.init)(jax.random.split(key, games))

        def body(c):
            state, t, total, legal, passes, key = c
            key, k1, k2 = jax.random.split(key, 3)
            keys = jax.random.split(k1, games)
            a_eng, a_greedy = engine(keys, state), greedy(keys, state)
            live = ~state.terminated
            ok = jnp.take_along_axis(state.legal_action_mask, a_eng[:, None], 1)[:, 0]
            legal = legal & jnp.all(ok | ~live)
            passes = passes + jnp.sum(live & state.legal_action_mask[:, env.pass_action])
            a_rand = jax.vmap(random_action)(jax.random.split(k2, games), state.legal_action_mask)
            action = jnp.where(state.current_player == engine_player, a_eng, a_greedy)
            state = jax.vmap(env.step)(state, jnp.where(t < OPENING, a_rand, action))
            return state, t + 1, total + state.rewards, legal, passes, key

        init = (state, 0, jnp.zeros((games, 2)), jnp.bool_(True), 0, key)
        state, _, total, legal, passes, _ = jax.lax.while_loop(
            lambda c: ~jnp.all(c[0].terminated), body, init
        )
        return total[jnp.arange(games), engine_player], legal, passes

    return jax.jit(run)


def test_engine_beats_greedy_6x6_with_legal_moves():
    run = match_fn(6, 32, 2, 10)
    reward, legal, passes = run(jax.random.PRNGKey(1))
    assert bool(legal) and int(passes) > 0
    score = float(np.mean((np.asarray(reward) + 1) / 2))
    # 0.84 here; 200 games of engine:2 vs greedy: docs/engines.md
    assert score >= 0.75, score


def test_exact_endgame_wrapper_plays_perfectly_late_and_like_the_player_before():
    """``with_exact_endgame`` (spec ``solve:E:<player>``): from E empties every move reaches
    the brute-force perfect-play margin; with more empties it is the wrapped player's move for
    the same key (here greedy, whose ties are drawn with the key)."""
    env, rng, e = env_of(6), random.Random(66), 6
    late, early = [], []
    while len(late) < 24 or len(early) < 24:
        empties = rng.randint(1, e) if len(late) < 24 else rng.randint(e + 1, 28)
        g = random_position(6, empties, rng)
        if g is not None:
            (late if empties <= e else early).append(g)
    inner = greedy_policy(env)
    hybrid = jax.jit(jax.vmap(eng.with_exact_endgame(env, inner, e)))
    keys = jax.random.split(jax.random.PRNGKey(5), 48)
    states = stack([to_state(env, g) for g in late + early])
    moves = np.asarray(hybrid(keys, states))
    np.testing.assert_array_equal(moves[24:], np.asarray(jax.vmap(inner)(keys, states))[24:])
    for g, a in zip(late, moves[:24]):
        h = g.copy()
        h.play(int(a))
        assert -ref_solve(h, {}, [False]) == ref_solve(g, {}, [False])
    with pytest.raises(ValueError, match="endgame_empties"):
        eng.with_exact_endgame(env, inner, 0)
    with pytest.raises(ValueError, match="reversi"):
        eng.with_exact_endgame(jaxgames.make("tic_tac_toe"), inner, 4)


# ------------------------------------------------------------------ evaluation, arguments
def test_evaluation_is_symmetric_and_exact_at_the_end():
    """The 8 board symmetries leave the evaluation unchanged; finished games score exactly."""
    env, rng = env_of(8), random.Random(8)
    games = [g for g in (random_position(8, rng.randint(1, 50), rng) for _ in range(24)) if g]
    states = []
    for g in games:
        board = np.array(g.cells()).reshape(8, 8)
        for k in range(4):
            for b in (np.rot90(board, k), np.rot90(board, k).T):
                h = g.copy()
                h.board = [list(map(int, row)) for row in b]
                states.append(board_state(env, h))
    finished = []
    for _ in range(8):
        g = RefReversi(8)
        while not g.done:
            g.play(rng.choice(g.legal_actions()))
        finished.append(g)
    states += [board_state(env, g) for g in finished]
    values = evaluate(8, states)
    sym = values[: 8 * len(games)].reshape(len(games), 8)
    np.testing.assert_allclose(sym, sym[:, :1].repeat(8, 1), rtol=1e-5, atol=1e-3)
    assert np.all(np.abs(sym) <= eng.HEURISTIC_CAP)
    for g, v in zip(finished, values[8 * len(games) :]):
        me, other = (BLACK, WHITE) if g.player == 0 else (WHITE, BLACK)
        m = g.count(me) - g.count(other)
        assert v == eng.WIN_BONUS * np.sign(m) + m
        assert int(eng.margin_of(jnp.float32(v))) == m


def ref_static_terms(board: np.ndarray) -> list[float]:
    """The module docstring's discs, corners, closeness and potential terms (weight 1, divided
    by 100) read off ``board`` (int[n, n]: 1 the mover, -1 the opponent, 0 empty) in numpy."""
    n = len(board)
    p, o, e = board == 1, board == -1, board == 0

    def ratio(a, b):
        return (a - b) / max(a + b, 1)

    corners = [(0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1)]
    near = 0  # mover's minus opponent's discs on the X and C squares of an empty corner
    for r, c in corners:
        if e[r, c]:
            dr, dc = (1 if r == 0 else -1), (1 if c == 0 else -1)
            near += sum(board[sq] for sq in ((r + dr, c), (r, c + dc), (r + dr, c + dc)))

    def beside(side):  # squares with a disc of ``side`` among their 8 neighbours
        padded = np.pad(side, 1)
        shifts = [np.roll(padded, (dr, dc), (0, 1)) for dr in (-1, 0, 1) for dc in (-1, 0, 1)]
        return np.any(shifts, axis=0)[1:-1, 1:-1]

    return [
        ratio(p.sum(), o.sum()),
        0.25 * (sum(p[c] for c in corners) - sum(o[c] for c in corners)),
        -0.125 * near,
        ratio((e & beside(o)).sum(), (e & beside(p)).sum()),
    ]


@pytest.mark.parametrize("size", [6, 8])
def test_static_terms_match_a_numpy_reading_of_the_docstring(size):
    """Each heuristic term alone (its weight 1, the others 0) on random midgame positions
    equals :func:`ref_static_terms`: closeness counts against the mover, potential mobility
    counts the empties next to the *other* side. Mobility and stability have their own tests;
    positions where the mover must pass are left out (their score may be the exact one)."""
    env, rng = env_of(size), random.Random(size)
    games = [random_position(size, rng.randint(4, size * size - 8), rng) for _ in range(40)]
    games = [g for g in games if g and g.legal_actions() != [size * size]]
    assert len(games) >= 20
    fn = jax.jit(jax.vmap(lambda s, w: eng.evaluate(env, s, weights=w), in_axes=(0, None)))
    batch = stack([board_state(env, g) for g in games])
    want = []
    for g in games:
        cells = np.array(g.cells()).reshape(size, size)
        want.append(ref_static_terms(np.where(cells == 1 + g.player, 1, np.sign(cells) * -1)))
    for term, column in zip((0, 1, 2, 4), range(4)):
        got = np.asarray(fn(batch, jnp.eye(6)[term]))
        np.testing.assert_allclose(
            got, np.array(want)[:, column], rtol=1e-5, atol=1e-5, err_msg=f"term {term}"
        )


def test_bad_arguments():
    env = env_of(6)
    with pytest.raises(ValueError, match="depth"):
        eng.reversi_engine_policy(env, 0)
    with pytest.raises(ValueError, match="endgame_empties"):
        eng.reversi_engine_policy(env, 2, -1)
    with pytest.raises(ValueError, match="reversi"):
        eng.reversi_engine_policy(jaxgames.make("tic_tac_toe"), 2)
    # a concrete position with more empties than the solve was built for: refused, not garbage
    r4 = env_of(4)
    start = r4.init(jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="more than max_empties=4 empty squares"):
        eng.solve_endgame(r4, start, 4)
    margin, _ = eng.solve_endgame(r4, start, 12)
    assert int(margin) == -8  # 4x4 reversi is a second-player win by 8 discs
