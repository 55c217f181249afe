"""The C reversi solver against a plain negamax over the reference rules
(tests/reference_reversi.py), and its perfect player keeping the solved margin on the env."""

from __future__ import annotations

import json
import random
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from reference_reversi import BLACK, WHITE
from test_reversi_engine import random_position, ref_solve

import jaxgames
from jaxgames.core import random_action
from jaxgames.evaluation import native, reversi_solver

pytestmark = pytest.mark.skipif(not native.has_compiler(), reason="no C compiler")


def _bits(g) -> tuple[int, int]:
    me, other = (BLACK, WHITE) if g.player == 0 else (WHITE, BLACK)
    cells = [v for row in g.board for v in row]
    mover = sum(1 << i for i, v in enumerate(cells) if v == me)
    return mover, sum(1 << i for i, v in enumerate(cells) if v == other)


@pytest.mark.parametrize("size, empties, count", [(4, 8, 30), (6, 7, 12)])
def test_solver_matches_plain_negamax(size, empties, count):
    """Exact margins equal the reference negamax's, also solved again on the table a solve
    left; the (-1, 1) window gives their sign; the best move's margin is the position's."""
    rng = random.Random(size)
    solved = 0
    while solved < count:
        g = random_position(size, empties, rng)
        if g is None:
            continue
        want = ref_solve(g, {}, [False])
        p, o = _bits(g)
        value, nodes = reversi_solver.solve_position(size, p, o)
        assert value == want and nodes > 0
        # again, on the transposition table the first solve left (exact entries reused)
        assert reversi_solver.solve_position(size, p, o)[0] == want
        sign, _ = reversi_solver.solve_position(size, p, o, alpha=-1, beta=1)
        assert np.sign(sign) == np.sign(want)
        assert max(reversi_solver.move_margins(size, p, o).values()) == want
        solved += 1


def test_perfect_player_keeps_the_margin():
    """On 4x4 from 8 empties the perfect player's move has the best margin of the position's
    legal moves (which are the env's), before that it plays ``before``."""
    env = jaxgames.make("reversi", size=4)
    games, empties = 16, 8
    step = jax.jit(jax.vmap(env.step))
    state = jax.vmap(env.init)(jax.random.split(jax.random.key(0), games))
    key = jax.random.key(1)
    for _ in range(16 - 4 - empties):
        key, k = jax.random.split(key)
        act = jax.vmap(random_action)(jax.random.split(k, games), state.legal_action_mask)
        nxt = step(state, act)
        done = state.terminated
        state = jax.tree.map(
            lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b),
            state,
            nxt,
        )
    policy = jax.jit(jax.vmap(reversi_solver.perfect_policy(env, empties)))
    actions = np.asarray(policy(jax.random.split(jax.random.key(2), games), state))
    checked = 0
    for i in range(games):
        s = jax.tree.map(lambda a: a[i], state)
        if bool(s.terminated):
            continue
        p, o = reversi_solver.state_bits(s)
        margins = reversi_solver.move_margins(4, p, o, bool(s.passed))
        assert set(margins) == set(np.flatnonzero(np.asarray(s.legal_action_mask)).tolist())
        if 16 - bin(p | o).count("1") <= empties:  # (a pass leaves more empties: ``before``)
            assert margins[int(actions[i])] == max(margins.values())
            checked += 1
    assert checked >= games // 2


def _position_row(size: int, p: int, o: int, passed: bool = False) -> np.ndarray:
    words = -(-size * size // 32)
    split = lambda b: [(b >> (32 * i)) & 0xFFFFFFFF for i in range(words)]  # noqa: E731
    return np.asarray(split(p) + split(o) + [int(passed)], np.uint32)


@pytest.mark.parametrize("size, most, count", [(4, 8, 40), (6, 6, 8)])
def test_reversi_accuracy_oracle_matches_plain_negamax(size, most, count):
    """The accuracy oracle's verdict on a random placement (value class before and after,
    disc margin lost) equals the reference negamax's; positions with more empties than the
    oracle's limit and passes are left unjudged."""
    from jaxgames.evaluation.accuracy import reversi_oracle

    rng, limit = random.Random(size + 10), most - 1
    rows, actions, want = [], [], []
    while len(rows) < count:
        g = random_position(size, rng.randint(2, most), rng)
        if g is None or g.legal_actions() == [size * size]:
            continue
        best = ref_solve(g, {}, [False])
        a = rng.choice(g.legal_actions())
        h = g.copy()
        h.play(a)
        mine = -ref_solve(h, {}, [False])
        rows.append(_position_row(size, *_bits(g)))
        actions.append(a)
        judged = g.count(0) <= limit
        want.append((judged, np.sign(best), np.sign(mine), best - mine))
    got = reversi_oracle(size, limit).judge(np.stack(rows), np.asarray(actions), np.zeros(count))
    assert any(w[0] for w in want) and not all(w[0] for w in want)
    for i, (judged, before, after, lost) in enumerate(want):
        assert bool(got["judged"][i]) == judged
        if judged:
            assert (got["before"][i], got["after"][i], got["lost"][i]) == (before, after, lost)
    passing = reversi_oracle(size, limit).judge(rows[0][None], np.asarray([size * size]), [0])
    assert not passing["judged"][0]


def test_make_oracle_per_game_and_its_refusals(tmp_path, monkeypatch):
    """``specs.make_oracle``, the one place that picks the accuracy oracle of a game (the
    ``accuracy`` command and ``learning_curves.py --accuracy``): reversi's default and given
    empties, and one-line refusals for a size, empties or game it cannot judge."""
    from jaxgames.evaluation import animal_shogi_solver
    from jaxgames.evaluation.accuracy import DEFAULT_EMPTIES
    from jaxgames.specs import make_oracle

    assert make_oracle(jaxgames.make("reversi", size=6)).empties == DEFAULT_EMPTIES[6]
    oracle = make_oracle(jaxgames.make("reversi", size=4), empties=5)
    assert (oracle.empties, oracle.note) == (5, "placements with <= 5 empty squares")
    assert make_oracle(jaxgames.make("tic_tac_toe")).empties is None
    bad = [
        (jaxgames.make("reversi", size=10), None, "sizes 4, 6 or 8, not 10"),
        (jaxgames.make("reversi", size=4), 13, "empties must be from 1 to 12 on 4x4, not 13"),
        (jaxgames.make("reversi", size=4), 0, "empties must be from 1 to 12 on 4x4, not 0"),
        (jaxgames.make("tic_tac_toe"), 3, "empties is for reversi: tic_tac_toe"),
        (jaxgames.make("animal_shogi"), 3, "empties is for reversi: animal_shogi"),
        (jaxgames.make("animal_shogi"), None, "run 'jaxgames solve animal_shogi' first"),
    ]
    monkeypatch.setenv(animal_shogi_solver.ENV_VAR, str(tmp_path / "no_table"))
    for env, empties, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)):
            make_oracle(env, empties=empties)


def test_reversi_move_accuracy_of_perfect_and_random_play(capsys):
    """On 4x4 from 8 empties the perfect player keeps every value and loses no discs; a
    random player loses discs on average; the per-colour and the per-phase counts add up; the
    command line prints the disc margin and rejects bad reversi options in one line."""
    from jaxgames import cli
    from jaxgames.evaluation.accuracy import format_accuracy, move_accuracy

    env = jaxgames.make("reversi", size=4)
    perfect = reversi_solver.perfect_policy(env, 8)
    rand = lambda key, state: random_action(key, state.legal_action_mask)  # noqa: E731
    kw = dict(games=6, opening_plies=2, empties=8)
    good = move_accuracy(perfect, rand, env, **kw)
    assert good["overall"]["moves"] > 0 and good["overall"]["share"] == 1.0
    assert good["overall"]["blunders"] == 0 and good["overall"]["margin_lost"]["mean"] == 0.0
    bad = move_accuracy(rand, perfect, env, seed=1, **kw)
    assert bad["overall"]["margin_lost"]["mean"] > 0
    assert bad["as_first"]["moves"] + bad["as_second"]["moves"] == bad["overall"]["moves"]
    # so do the phases' (their bounds split the judged moves, none counted twice or left out)
    assert sum(s["moves"] for s in bad["phases"].values()) == bad["overall"]["moves"]
    assert "discs lost per move" in format_accuracy(bad)
    # a phase without moves (none judged before 8 empties) has no mean: "-", and strict JSON
    empty = [s for s in bad["phases"].values() if s["moves"] == 0]
    assert empty and all(s["margin_lost"]["mean"] is None for s in empty)
    assert "nan" not in format_accuracy(bad) and json.dumps(bad, allow_nan=False)
    args = ["accuracy", "random", "--game", "reversi", "--size", "4", "--empties", "6"]
    assert cli.main(args + ["--against", "random", "--games", "2"]) == 0
    assert "discs lost per move" in capsys.readouterr().out
    assert cli.main(args) == 2
    assert "--against is needed" in capsys.readouterr().err
    assert cli.main(["accuracy", "random", "--game", "reversi", "--size", "5"]) == 2
    assert "--size must be 4, 6 or 8" in capsys.readouterr().err
    assert cli.main(args[:2] + ["--empties", "3"]) == 2
    assert "--empties and --size are for --game reversi" in capsys.readouterr().err
    # solve reversi: boards the solver has, counts and seeds checked before any solving
    solve = ["solve", "reversi", "--empties", "4"]
    for bad, why in [
        (["--size", "100"], "--size must be 4, 6 or 8"),
        (["--size", "-6"], "--size must be 4, 6 or 8"),
        (["--positions", str(10**23)], "invalid --positions="),
        (["--seed", "-1"], "invalid --seed=-1"),
    ]:
        assert cli.main(solve + bad) == 2
        assert why in capsys.readouterr().err


def test_solver_refuses_what_is_not_a_position():
    """Bitboards off the board, overlapping or negative are refused (the solver would read
    them as some other position)."""
    for mover, opponent, why in [
        (-1, 0, "mover=-0x1 is not a bitboard of a 4x4 board"),
        (0b0110, 0b0110, "share squares"),
        (1, 1 << 16, "opponent=0x10000 is not a bitboard"),
        (1.0, 2, "mover must be an int bitboard"),
    ]:
        with pytest.raises(ValueError, match=why):
            reversi_solver.solve_position(4, mover, opponent)


def test_solves_hold_the_lock(monkeypatch):
    """The C solver keeps its search in globals (the board size among them) and ctypes lets
    go of the GIL during a call: every call holds the module's lock, so solves from threads
    never share the globals."""
    lib = reversi_solver.library()
    held = []

    class Watched:
        def solve(self, *args):
            held.append(reversi_solver._LOCK.locked())
            return lib.solve(*args)

    monkeypatch.setattr(reversi_solver, "library", lambda: Watched())
    (p, o), *_ = reversi_solver.random_endgames(4, 6, 1, 0)
    reversi_solver.solve_position(4, p, o)
    reversi_solver.move_margins(4, p, o)
    assert len(held) > 1 and all(held)


def test_compiled_libraries_rebuild_damage_and_name_failures(tmp_path, monkeypatch, capsys):
    """A cached library that does not load is built again; a cache folder that cannot be
    written and a $CC that is not a command line are named; $CC may carry flags; a failing
    compiler is named with its exit code, one line from a command; with the cache off the
    library lives in a folder of the process's own, gone at exit (never a shared temp path
    another user could fill)."""
    import os
    import shutil
    import subprocess
    import sys

    from jaxgames import cli

    monkeypatch.setenv(native.ENV_VAR, str(tmp_path / "cache"))
    lib = native.build(reversi_solver.SOURCE)
    with open(lib, "wb") as f:
        f.write(b"not a library")
    assert native.load(reversi_solver.SOURCE) is not None and os.path.getsize(lib) > 1000
    # a cache folder this user cannot write (os.access: root writes anywhere, so faked here)
    readonly = str(tmp_path / "readonly")
    os.makedirs(readonly)
    monkeypatch.setenv(native.ENV_VAR, readonly)
    real_access = os.access
    monkeypatch.setattr(native.os, "access", lambda p, mode: p != readonly and real_access(p, mode))
    with pytest.raises(native.SolverUnavailable, match=r"readonly .*is not writable: set JAX"):
        native.build(reversi_solver.SOURCE)
    monkeypatch.setattr(native.os, "access", real_access)
    assert os.listdir(readonly) == []
    # $CC is a command line, flags and all, as make reads it
    monkeypatch.setenv(native.ENV_VAR, str(tmp_path / "flags"))
    compiler = shutil.which("cc") or shutil.which("gcc")
    monkeypatch.setenv("CC", f"{compiler} -O1 -DJAXGAMES_CC_FLAGS")
    assert os.path.getsize(native.build(reversi_solver.SOURCE)) > 1000
    monkeypatch.setenv(native.ENV_VAR, str(tmp_path / "quote"))
    monkeypatch.setenv("CC", f"{compiler} '-O1")
    with pytest.raises(native.SolverUnavailable, match="is not a command line"):
        native.build(reversi_solver.SOURCE)
    monkeypatch.setenv(native.ENV_VAR, str(tmp_path / "empty"))
    monkeypatch.setenv("CC", "false")
    with pytest.raises(native.SolverUnavailable, match=r"with false failed \(exit code 1\)"):
        native.build(reversi_solver.SOURCE)
    reversi_solver.library.cache_clear()  # loaded once per process: load afresh
    accuracy = ["accuracy", "random", "--against", "random", "--game", "reversi", "--size", "4"]
    assert cli.main([*accuracy, "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: building reversi_solver.c with false") and err.count("\n") == 1
    monkeypatch.delenv("CC")
    reversi_solver.library.cache_clear()
    code = (
        "from jaxgames.evaluation import native, reversi_solver as r; print(native.build(r.SOURCE))"
    )
    env = {**os.environ, native.ENV_VAR: "0"}
    path = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    folder = os.path.dirname(path.stdout.strip())
    assert os.path.basename(folder).startswith("jaxgames_solvers_"), path
    assert not os.path.exists(folder)
