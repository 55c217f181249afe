"""The animal-shogi retrograde solver on small position sets: its move generator against the
jaxgames rules on positions from random games, its un-moves against its moves, and its values
on reduced endgames against a brute-force solve built on the jaxgames rules alone (the full
table is a benchmark: docs/perfect_play.md)."""

from __future__ import annotations

import functools
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxgames
from jaxgames.core import random_action
from jaxgames.evaluation import animal_shogi_solver as solver
from jaxgames.evaluation import native
from jaxgames.games.animal_shogi.rules import LION, legal_action_mask

pytestmark = pytest.mark.skipif(not native.has_compiler(), reason="no C compiler")


def _plain_keys(positions: np.ndarray) -> np.ndarray:
    """Keys without the mirror folded (the reference's own identity of positions)."""
    p = np.asarray(positions).astype(np.uint64)
    board = np.sum(p[..., :12] << solver._BOARD_SHIFT, axis=-1, dtype=np.uint64)
    return board + np.sum(p[..., 12:] << solver._HAND_SHIFT, axis=-1, dtype=np.uint64)


@functools.lru_cache(maxsize=1)
def _expand():
    """jitted int32[B, 18] -> (bool[B, 132] legal, int32[B, 132, 18] successors, bool[B] the
    side to move has lost by the opponent's try), from the jaxgames rules."""

    def one(pos):
        legal = legal_action_mask(pos[:12], pos[12:15])
        tried = jnp.any(pos[9:12] == LION + 5)
        return legal & ~tried, solver.successor_positions(pos), tried

    return jax.jit(jax.vmap(one))


def _random_positions(games: int, plies: int, seed: int) -> np.ndarray:
    """uint8[games * plies, 18] positions met in random games (mover's frame, unfinished),
    ``games`` played at once."""
    env = jaxgames.make("animal_shogi", max_steps=plies + 1)

    @jax.jit
    def play(key):
        def ply(state, key):
            pos = jax.vmap(solver.state_positions)(state.board, state.hand, state.current_player)
            keys = jax.random.split(key, games)
            actions = jax.vmap(random_action)(keys, state.legal_action_mask)
            over = state.terminated | state.truncated
            state = jax.vmap(env.step)(state, actions)
            return state, (pos, over)

        state = jax.vmap(env.init)(jax.random.split(key, games))
        _, (pos, over) = jax.lax.scan(ply, state, jax.random.split(key, plies))
        return pos, over

    pos, over = map(np.asarray, play(jax.random.key(seed)))
    return pos[~over].astype(np.uint8)


def test_move_generator_matches_the_rules():
    """On positions from random games the C solver's successors are exactly the jaxgames
    rules' (legal actions applied, turned to the next mover, mirror folded), and every
    position is among the un-moves of each of its successors."""
    positions = _random_positions(8, 40, seed=1)
    legal, succ, _ = map(np.asarray, _expand()(jnp.asarray(positions, jnp.int32)))
    checked = 0
    for pos, ok, nxt in zip(positions, legal, succ):
        want = np.unique(solver.canonical_keys(nxt[ok].astype(np.uint8)))
        np.testing.assert_array_equal(solver.c_children(pos), want)
        me = solver.canonical_keys(pos)
        for child in nxt[ok][:4].astype(np.uint8):
            assert me in solver.c_parents(child)
            checked += 1
    assert len(positions) > 100 and checked > 300


def _brute_force(roots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every position reachable from ``roots`` by the jaxgames rules (no mirror folding) and
    its value and distance by fixpoint iteration over successors: -> (uint8[N, 18],
    int8[N] value, int32[N] plies)."""
    expand = _expand()
    index = {}
    positions, edges = [], []
    frontier = [r for r in roots.astype(np.uint8)]
    for r in frontier:
        index.setdefault(int(_plain_keys(r)), len(index))
    positions = list(frontier)
    done = 0
    lost_now = []
    while done < len(positions):
        batch = np.stack(positions[done : done + 512])
        pad = np.zeros((512 - len(batch), 18), np.uint8)
        legal, succ, tried = map(
            np.asarray, expand(jnp.asarray(np.concatenate([batch, pad]), jnp.int32))
        )
        for i in range(len(batch)):
            kids = succ[i][legal[i]].astype(np.uint8)
            ids = []
            for kid, key in zip(kids, _plain_keys(kids)):
                key = int(key)
                if key not in index:
                    index[key] = len(index)
                    positions.append(kid)
                ids.append(index[key])
            edges.append(sorted(set(ids)))
            lost_now.append(bool(tried[i]) or not ids)
        done += len(batch)
    n = len(positions)
    value = np.zeros(n, np.int8)
    plies = np.zeros(n, np.int32)
    resolved = np.array(lost_now)
    value[resolved] = -1
    d = 0
    while True:  # level d + 1 from the values of levels <= d
        d += 1
        new = []
        for i in np.flatnonzero(~resolved):
            kids = edges[i]
            if any(resolved[k] and value[k] == -1 for k in kids):
                best = min(plies[k] for k in kids if resolved[k] and value[k] == -1)
                if best == d - 1:
                    new.append((i, 1))
            elif all(resolved[k] for k in kids):
                new.append((i, -1))
        if not new:
            break
        for i, v in new:
            value[i], plies[i], resolved[i] = v, d, True
    return np.stack(positions), value, plies


def _root(board: dict[int, int], own=(0, 0, 0), opp=(0, 0, 0)) -> np.ndarray:
    pos = np.zeros(18, np.uint8)
    for s, code in board.items():
        pos[s] = code
    pos[12:15], pos[15:] = own, opp
    return pos


#: reduced endgames: the two lions and a chick in the mover's hand; the two lions and an
#: elephant in the mover's hand
ROOTS = np.stack([_root({1: 6, 10: 1}, own=(0, 0, 1)), _root({1: 6, 10: 1}, own=(0, 1, 0))])


@pytest.mark.parametrize("root", range(len(ROOTS)))
def test_reduced_endgames_match_brute_force(root):
    """Every position reachable from a reduced endgame: the retrograde table (C, un-moves,
    mirror folded) and a forward fixpoint on the jaxgames rules give the same value and
    distance, and the table holds exactly the positions the rules reach."""
    table = solver.solve(ROOTS[root : root + 1], log2_slots=12)
    positions, value, plies = _brute_force(ROOTS[root : root + 1])
    got_value, got_plies = table.lookup(positions)
    np.testing.assert_array_equal(got_value, value)
    np.testing.assert_array_equal(got_plies, plies)
    assert len(table) == len(np.unique(solver.canonical_keys(positions)))
    assert {-1, 0, 1} <= set(value.tolist())  # the endgame has wins, losses and draws
    assert table.stats["draws"] == int(np.sum(table.results == 0))


def test_consistency_check_finds_a_wrong_entry():
    """The successor check passes on a solved table and flags a corrupted distance: every win
    one ply too late, or a single one, which is itself flagged (its quickest lost successor is
    now two plies nearer, not one), not only through the losses that lead to it."""
    table = solver.solve(ROOTS[:1], log2_slots=12)
    assert solver.check_consistency(table, 200, seed=0)["failures"] == []
    results = table.results.copy()
    won = (results & 3) == solver.WIN
    results[won] += 4  # one ply too late
    bad = solver.SolvedTable(table.keys, results, table.stats)
    report = solver.check_consistency(bad, 200, seed=0)
    assert len(report["failures"]) >= 50
    i = np.flatnonzero(won)[np.count_nonzero(won) // 2]
    results = table.results.copy()
    results[i] += 4
    one = solver.SolvedTable(table.keys, results, table.stats)
    assert int(table.keys[i]) in solver.check_consistency(one, len(table), seed=0)["failures"]


def test_perfect_player_keeps_the_value():
    """From every position of a reduced endgame the perfect player's move keeps the value:
    a win stays a win one ply sooner, a draw a draw, a loss as long as possible."""
    table = solver.solve(ROOTS[:1], log2_slots=12)
    env = jaxgames.make("animal_shogi")
    policy = jax.jit(jax.vmap(solver.perfect_policy(table)))
    positions = solver.decode_keys(table.keys)
    value, plies = table.lookup(positions)
    states = jax.vmap(lambda p: _state_of(env, p))(jnp.asarray(positions, jnp.int32))
    keys = jax.random.split(jax.random.key(0), len(positions))
    actions = np.asarray(policy(keys, states))
    legal, succ, _ = map(np.asarray, _expand()(jnp.asarray(positions, jnp.int32)))
    for i, a in enumerate(actions):
        if plies[i] == 0 and value[i] == -1:
            continue  # the game is over
        assert legal[i, a]
        v, d = table.lookup(succ[i, a].astype(np.uint8))
        assert -int(v) == int(value[i])
        if value[i] != 0:
            assert int(d) == int(plies[i]) - 1


def _state_of(env, pos):
    """The jaxgames state of a mover-frame position with sente to move."""
    from jaxgames.games.animal_shogi import rules

    hand = jnp.stack([pos[12:15], pos[15:]])
    return rules.make_state(env.spec, pos[:12], hand, 0, 0)


def test_perfect_spec_needs_the_table(tmp_path, monkeypatch, capsys):
    """``perfect`` on animal shogi: without the cached table a one-line error says how to
    build it (the spec check and the command line); with a table in the folder the spec
    builds a player; ``solve`` rejects a bad option before solving."""
    from jaxgames import cli, specs

    monkeypatch.setenv(solver.ENV_VAR, str(tmp_path))
    env = jaxgames.make("animal_shogi")
    with pytest.raises(ValueError, match="jaxgames solve animal_shogi"):
        specs.check_spec("perfect", env)
    assert cli.main(["eval", "--game", "animal_shogi", "--a", "perfect", "--b", "random"]) == 2
    assert "run 'jaxgames solve animal_shogi' first" in capsys.readouterr().err
    assert cli.main(["accuracy", "random"]) == 2
    assert "run 'jaxgames solve animal_shogi' first" in capsys.readouterr().err
    assert cli.main(["solve", "animal_shogi", "--check", "-1"]) == 2
    assert "--check must be >= 0" in capsys.readouterr().err
    # a ladder's perfect rung is skipped, saying why, until the table is there
    assert specs.playable_rungs(["random", "perfect"], env)[0] == ["random"]
    rate = ["rate", "random", "--game", "animal_shogi", "--rungs", "random,perfect"]
    assert cli.main(rate + ["--games-per-rung", "2"]) == 0
    assert "not played: perfect (the solved animal-shogi table is not in" in capsys.readouterr().out
    solver.solve(ROOTS[:1], log2_slots=12).save(str(tmp_path))
    assert specs.check_spec("perfect", env) == "perfect"
    assert specs.playable_rungs(["random", "perfect"], env) == (["random", "perfect"], {})
    assert callable(specs.make_opponent("perfect", env))
    monkeypatch.setenv(solver.ENV_VAR, "0")
    with pytest.raises(ValueError, match="is off"):
        specs.check_spec("perfect", env)
    # a damaged table is named with how to rebuild it, not a KeyError inside a lookup
    bad = tmp_path / "damaged"  # (a folder loaded once is not read again in this process)
    solver.solve(ROOTS[:1], log2_slots=12).save(str(bad))
    keys_path, results_path, stats_path = solver.table_paths(str(bad))
    np.save(results_path, np.zeros(3, np.uint16))  # fewer results than keys
    with pytest.raises(ValueError, match=f"the solved table in {bad} is damaged.*--force"):
        solver.load_table(str(bad))
    open(stats_path, "w").close()
    with pytest.raises(ValueError, match="is damaged \\(Expecting value"):
        solver.load_table(str(bad))
    monkeypatch.setenv(solver.ENV_VAR, str(bad))
    assert cli.main(["match", "perfect", "random", "--game", "animal_shogi", "--games", "2"]) == 2
    assert "is damaged" in capsys.readouterr().err
    small = solver.solve(ROOTS[:1], log2_slots=12)
    stats = dict(small.stats)
    damages = [  # (file, what is written there, the message)
        ("keys.npy", b"", "is damaged \\(No data left in file"),
        ("json", b"{}", "its statistics lack counts of positions"),
        ("json", json.dumps({**stats, "positions": "many"}).encode(), "lack counts"),
        ("json", json.dumps({**stats, "wins": stats["wins"] + 1}).encode(), "won, lost or drawn"),
        ("json", json.dumps({**stats, "rules_version": 99}).encode(), "rules version 99"),
    ]
    for i, (part, data, why) in enumerate(damages):
        folder = tmp_path / f"damage{i}"
        small.save(str(folder))
        (folder / f"animal_shogi.{part}").write_bytes(data)
        with pytest.raises(ValueError, match=why):
            solver.load_table(str(folder))
    # a reduced solve's table does not hold the start: solve names it, the player too
    assert cli.main(["solve", "animal_shogi", "--cache-dir", str(tmp_path)]) == 2
    assert "does not hold the start position" in capsys.readouterr().err
    monkeypatch.setenv(solver.ENV_VAR, str(tmp_path))
    assert cli.main(["match", "perfect", "random", "--game", "animal_shogi", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: perfect: a position is not in the solved table") and (
        err.count("\n") == 1
    ), err
    # the cache off: no solve whose table nothing could read; flags of the other game refused
    monkeypatch.setenv(solver.ENV_VAR, "0")
    assert cli.main(["solve", "animal_shogi"]) == 2
    assert "the solve cache is off" in capsys.readouterr().err
    assert cli.main(["solve", "animal_shogi", "--size", "6"]) == 2
    assert "--size is for 'solve reversi'" in capsys.readouterr().err
    assert cli.main(["solve", "reversi", "--empties", "4", "--check", "5"]) == 2
    assert "--check is for 'solve animal_shogi'" in capsys.readouterr().err
    # where the table would be saved is checked before the solve (minutes), as is the seed
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    assert cli.main(["solve", "animal_shogi", "--cache-dir", str(a_file)]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    assert cli.main(["solve", "animal_shogi", "--seed", "-1"]) == 2
    assert "invalid --seed=-1" in capsys.readouterr().err


def endgame_starts():
    """(a table solved from the first reduced endgame, animal shogi capped at 40 plies, 12 of
    the table's unfinished positions of every value as a batch of states)."""
    from jaxgames.games.animal_shogi import rules

    table = solver.solve(ROOTS[:1], log2_slots=12)
    env = jaxgames.make("animal_shogi", max_steps=40)
    value, _ = table.lookup(solver.decode_keys(table.keys))
    pick = np.flatnonzero(value != -1)[::17][:12]  # unfinished positions of every value
    pos = jnp.asarray(solver.decode_keys(table.keys[pick]), jnp.int32)
    starts = jax.vmap(
        lambda p: rules.make_state(env.spec, p[:12], jnp.stack([p[12:15], p[15:]]), 0, 0)
    )(pos)
    return table, env, starts


def test_move_accuracy_of_perfect_and_random_play():
    """From reduced-endgame starts the perfect player keeps the value with every move and
    never blunders; a random player blunders; the per-colour counts add up."""
    from jaxgames.evaluation.accuracy import format_accuracy, move_accuracy

    table, env, starts = endgame_starts()
    perfect = solver.perfect_policy(table)
    rand = lambda key, state: random_action(key, state.legal_action_mask)  # noqa: E731
    good = move_accuracy(perfect, rand, env, table, starts=starts)
    assert good["overall"]["moves"] > 0 and good["overall"]["share"] == 1.0
    assert good["overall"]["blunders"] == 0
    bad = move_accuracy(rand, perfect, env, table, starts=starts, seed=1)
    assert bad["overall"]["blunders"] > 0 and bad["overall"]["share"] < 1.0
    assert bad["as_first"]["moves"] + bad["as_second"]["moves"] == bad["overall"]["moves"]
    assert "value kept" in format_accuracy(bad)


@pytest.mark.slow
def test_full_table_when_cached():
    """The benchmark of the full table, where ``jaxgames solve animal_shogi`` cached it: the
    start is lost for the side to move (Tanaka 2009) in 76 plies (the published 78 less the
    suicidal move and the lion capture jaxgames' rules do not play), and random entries are
    consistent with their successors."""
    try:
        table = solver.load_table()
    except solver.TableMissing:
        pytest.skip("no cached table (jaxgames solve animal_shogi)")
    value, plies = table.lookup(solver.START[None])
    assert (int(value[0]), int(plies[0])) == (-1, 76)
    assert solver.check_consistency(table, 2000, seed=1)["failures"] == []


#: (row, column) steps of each piece in its mover's frame, row 0 the far rank: lion,
#: giraffe, elephant, chick, hen (codes 1..5)
_STEPS = {
    1: [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)],
    2: [(-1, 0), (0, -1), (0, 1), (1, 0)],
    3: [(-1, -1), (-1, 1), (1, -1), (1, 1)],
    4: [(-1, 0)],
    5: [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, 0)],
}


def _official_successors(pos: np.ndarray, capture_ends: bool) -> list[np.ndarray]:
    """The positions after every move under the official rules, each in the next mover's
    frame (board turned by 180 degrees, colours and hands swapped): any move of a piece or a
    drop; a lion capture ends the game and a try (the opponent's lion on the mover's near
    rank) has ended it, so neither leaves a position; ``capture_ends``: nor does a position
    where the opponent's lion can be captured."""
    board, hand = [int(x) for x in pos[:12]], [int(x) for x in pos[12:]]
    if 6 in board[9:12]:
        return []
    after = []
    targets = {
        3 * (s // 3 + dr) + s % 3 + dc
        for s, k in enumerate(board)
        for dr, dc in _STEPS.get(k, [])
        if 0 <= s // 3 + dr < 4 and 0 <= s % 3 + dc < 3
    }
    if capture_ends and 6 in [board[t] for t in targets]:
        return []
    for s, k in enumerate(board):
        for dr, dc in _STEPS.get(k, []):
            r, c = s // 3 + dr, s % 3 + dc
            t = 3 * r + c
            if not (0 <= r < 4 and 0 <= c < 3) or 1 <= board[t] <= 5 or board[t] == 6:
                continue
            b, h = list(board), list(hand)
            if b[t] >= 7:  # a giraffe, elephant, chick or hen goes to the hand (a hen as a chick)
                h[min(b[t] - 7, 2)] += 1
            b[s], b[t] = 0, 5 if (k == 4 and r == 0) else k
            after.append((b, h))
    for i in range(3):
        for t in range(12):
            if hand[i] and board[t] == 0:
                b, h = list(board), list(hand)
                b[t], h[i] = i + 2, h[i] - 1
                after.append((b, h))
    turn = lambda c: 0 if c == 0 else (c + 5 if c <= 5 else c - 5)  # noqa: E731
    return [np.array([turn(c) for c in b[::-1]] + h[3:] + h[:3], np.uint8) for b, h in after]


@pytest.mark.parametrize("rules", ["official", "official-capture-ends"])
def test_official_rules_count_matches_a_python_enumeration(rules):
    """``count_reachable`` under the official rules (the C enumeration) reaches, from reduced
    endgames, exactly the positions a plain Python enumeration of the official moves reaches;
    jaxgames' rules reach a subset."""
    for root in ROOTS:
        seen = {int(solver.canonical_keys(root[None])[0])}
        frontier = [root]
        while frontier:
            kids = [k for p in frontier for k in _official_successors(p, rules != "official")]
            if not kids:
                break
            keys = solver.canonical_keys(np.stack(kids)).tolist()
            fresh = {key: k for k, key in zip(kids, keys) if key not in seen}
            seen.update(keys)
            frontier = list(fresh.values())
        got = solver.count_reachable(root[None], rules=rules, log2_slots=14)
        assert got["positions"] == len(seen)
        ours = solver.count_reachable(root[None], log2_slots=14)["positions"]
        assert len(solver.solve(root[None], log2_slots=14)) == ours < len(seen)
    with pytest.raises(ValueError, match="rules must be one of"):
        solver.count_reachable(ROOTS[:1], rules="tanaka")


def test_solver_calls_hold_the_lock(monkeypatch):
    """The C solver keeps its tables and rules in globals and ctypes lets go of the GIL
    during a call: every call (solve, move generation, a count under other rules) holds the
    module's lock, so threads never share the globals."""
    lib = solver.library()
    held = []

    class Watched:
        def __getattr__(self, name):
            def call(*args):
                held.append((name, solver._LOCK._is_owned()))
                return getattr(lib, name)(*args)

            return call

    monkeypatch.setattr(solver, "library", lambda: Watched())
    solver.c_children(solver.START)
    solver.c_parents(solver.START)
    solver.count_reachable(ROOTS[:1], rules="official", log2_slots=12)
    names = {name for name, _ in held}
    assert {"as_children", "as_parents", "as_solve", "as_set_rules", "as_free"} <= names
    assert all(owned for _, owned in held), held
