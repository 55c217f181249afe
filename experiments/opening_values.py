"""Perfect-play values of the 6x6 reversi targets' openings: which the first player wins, draws
or loses whatever is played, and so the most any agent can score against a perfect opponent
at the targets' protocol, per colour.

    python experiments/opening_values.py --every 5                 # 40 of the 200 openings
    python experiments/opening_values.py --every 5 --agent mcts:64:pretrained:reversi6
    python experiments/opening_values.py --every 1 --json all.json  # all 200 (~1 h; resumable)
    python experiments/opening_values.py --every 1 --values all.json --agent pretrained:reversi6 \
        --engine 2                                                   # another split, no solving

The openings are those of ``experiments/strength_targets.py`` and ``jaxgames eval`` (as in
:mod:`experiments.forced_openings`: ``--games`` laid out and keyed as one ``arena`` call with
``PRNGKey(--seed)``, 4 random plies, the first player to move; an agent meets opening k once
as first and once as second player). Each is solved to the end of the game (28 empty squares
on 6x6) by an exact alpha-beta solver in C (``experiments/reversi_solver.c``, built here with
the system's C compiler: the JAX engine's exact solve, fine from 14-16 empties, would take
hours per opening from 28) with the window (-1, 1), which gives win, draw or loss for the side
to move; tests check it against :func:`jaxgames.evaluation.reversi_engine.solve_endgame`.
``--size 4`` does the same on 4x4 (8 empties after the opening: every solve instant).
Solves run in ``--jobs`` processes, from under a second to a few minutes each on the 2-core
CPU (all 200 openings: about an hour), so ``--every K`` solves every K-th opening, a systematic
sample of independent random openings whose ceilings get a 95% Wilson interval for all 200;
``--every 1`` gives the exact ceilings of these openings.

An opening the first player wins by force is lost by *any* second player against a perfect
opponent; the ceiling of a colour is its mean result against perfect play (win 1, draw 1/2).
Against an imperfect opponent such as ``engine:4`` an agent can do better by exploiting its
mistakes; the values say how much of a target rests on them. ``--agent SPEC`` plays that
agent's targets' games against ``engine:--engine`` and splits its W/D/L per colour over the
solved openings into those it is lost in by force and the others. ``--json FILE`` writes
everything, the value of each solved opening included, and keeps the values in it as each
solve finishes; ``--values FILE`` reads them back (the same openings, a finished run or an
interrupted one) and solves only the openings it lacks: to split another agent's games without
solving again, to resume, or to extend ``--every 5`` to ``--every 1``.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jaxgames  # noqa: E402
from experiments.common import write_json  # noqa: E402
from experiments.forced_openings import (  # noqa: E402
    opening_positions,
    print_split,
    split_games,
    take,
)
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.evaluation.elo import Record  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reversi_solver.c")
#: the final margin lies within +-N*N, so (-BOUND, BOUND) is the full window
BOUND = 65


class SolverUnavailable(RuntimeError):
    """No C compiler, or building the solver failed."""


def build_solver() -> str:
    """Compile ``reversi_solver.c`` once per source version (into the temp folder); returns the
    shared library's path. :class:`SolverUnavailable` when no C compiler is found or it fails."""
    with open(SOURCE, "rb") as f:
        tag = hashlib.sha256(f.read()).hexdigest()[:12]
    lib = os.path.join(tempfile.gettempdir(), f"jaxgames_reversi_solver_{tag}.so")
    if os.path.exists(lib):
        return lib
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SolverUnavailable("no C compiler found (cc or gcc; or set CC) to build the solver")
    tmp = f"{lib}.{os.getpid()}"
    cmd = [cc, "-O3", "-shared", "-fPIC", "-o", tmp, SOURCE]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SolverUnavailable(f"building the solver failed: {done.stderr.strip()[:300]}")
    os.replace(tmp, lib)  # atomic: a concurrent build leaves one whole library
    return lib


@functools.lru_cache(maxsize=None)
def _library(path: str):  # loaded once per process
    lib = ctypes.CDLL(path)
    lib.solve.restype = ctypes.c_longlong
    lib.solve.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int]
    lib.solve.argtypes += [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    return lib


def solve_one(job: tuple) -> tuple[int, int, float]:
    """(library path, size, mover bits, opponent bits, alpha, beta) -> (value, nodes,
    seconds); value exact inside (alpha, beta), else a bound of the same side."""
    path, size, mover, opponent, alpha, beta = job
    value = ctypes.c_int()
    t0 = time.perf_counter()
    nodes = _library(path).solve(size, mover, opponent, alpha, beta, ctypes.byref(value))
    if nodes < 0:
        raise MemoryError("the solver could not allocate its transposition table")
    return value.value, nodes, time.perf_counter() - t0


def _indexed(item: tuple) -> tuple:
    return item[0], solve_one(item[1])


def bitboards(states) -> tuple[list[int], list[int]]:
    """The mover's and the opponent's discs of each state (batched; boards up to 8x8) as
    Python ints, bit ``row * N + col``."""

    def join(words: np.ndarray) -> list[int]:
        words = words.astype(np.uint64)
        out = words[:, 0].copy()
        if words.shape[1] > 1:
            out |= words[:, 1] << np.uint64(32)
        return [int(x) for x in out]

    return join(np.asarray(states.mover)), join(np.asarray(states.opponent))


def solve_states(
    env, states, window: int = 1, jobs: int = 2, on_solved=None
) -> tuple[np.ndarray, np.ndarray]:
    """Perfect-play values of a batch of live reversi states (side to move's view): with
    ``window`` 1 the sign of the final margin (win 1, draw 0, loss -1), with :data:`BOUND` the
    margin itself; and the seconds of each solve. ``on_solved(i, value, seconds)`` is called
    as each one finishes (to report and save progress)."""
    size = int(env.config["size"])
    if size > 8:
        raise ValueError(f"the solver handles boards up to 8x8, not {size}x{size}")
    path = build_solver()
    mover, opponent = bitboards(states)
    work = [(path, size, m, o, -window, window) for m, o in zip(mover, opponent)]
    results: list = [None] * len(work)

    def done(i: int, r: tuple) -> None:
        results[i] = r
        if on_solved is not None:
            on_solved(i, r[0] if window > 1 else int(np.sign(r[0])), r[2])

    if jobs > 1 and len(work) > 1:
        # spawn, not fork: the parent runs JAX's threads
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            for i, r in pool.imap_unordered(_indexed, enumerate(work), chunksize=1):
                done(i, r)
    else:
        for i, w in enumerate(work):
            done(i, solve_one(w))
    values = np.array([r[0] for r in results], np.int64)
    if window == 1:
        values = np.sign(values)
    return values, np.array([r[2] for r in results])


def analyse(
    games: int,
    seed: int,
    every: int,
    jobs: int,
    engine: int,
    agent: str | None,
    size: int = 6,
    known: dict | None = None,
    save: str | None = None,
) -> dict:
    """The module docstring's numbers. ``known``: an earlier result (or saved progress) for the
    same openings (size, games, seed); the values of the openings it solved are reused, the
    rest solved. ``save``: a JSON file where the values are written as each solve finishes,
    so an interrupted run resumes from it as ``known``."""
    env = jaxgames.make("reversi", size=size)
    t0 = time.perf_counter()
    states, opening = opening_positions(env, games, seed)
    solved = np.arange(0, games, every)
    if np.asarray(states.terminated)[solved].any():
        raise ValueError("an opening ended the game")
    # opening index -> (first player's value, seconds of its solve)
    values: dict[int, tuple[int, float]] = {}
    if known is not None:
        same = {k: known.get(k) for k in ("size", "games", "seed")}
        if same != dict(size=size, games=games, seed=seed):
            raise ValueError(f"--values holds other openings ({same}), not these")
        for i, v, t in zip(known["solved"], known["first_player_value"], known["solve_seconds"]):
            values[int(i)] = (int(v), float(t))

    def progress_record() -> dict:
        done = sorted(values)
        return dict(
            size=size,
            games=games,
            seed=seed,
            opening_plies=opening,
            solved=done,
            first_player_value=[values[i][0] for i in done],
            solve_seconds=[values[i][1] for i in done],
        )

    todo = np.array([i for i in solved if int(i) not in values], np.int64)
    if len(todo):
        held = len(values)  # before solving (`known` may hold openings outside this sample)

        def on_solved(j: int, v: int, t: float) -> None:
            values[int(todo[j])] = (v, t)
            n = len(values) - held
            result = ("loses", "draws", "wins")[v + 1]
            print(
                f"  {n}/{len(todo)} solved: opening {todo[j]}, the first player {result} "
                f"({t:.1f} s)",
                flush=True,
            )
            if save:
                write_json(save, dict(progress_record(), complete=False))

        # the first player is to move at every opening: the values are from its side
        solve_states(env, take(states, todo), 1, jobs, on_solved=on_solved)
    value = np.array([values[int(i)][0] for i in solved], np.int64)
    seconds = np.array([values[int(i)][1] for i in solved])
    # a colour's record against perfect play over the solved openings
    ceilings = {}
    for colour, sign in (("first", 1), ("second", -1)):
        rec = Record.of(sign * value)
        lo, hi = rec.ci("score")
        ceilings[colour] = dict(
            wins=rec.wins, draws=rec.draws, losses=rec.losses, score=rec.score, low=lo, high=hi
        )
    lost = dict(first=solved[value < 0], second=solved[value > 0])
    return dict(
        size=size,
        games=games,
        seed=seed,
        opening_plies=opening,
        every=every,
        complete=True,
        solved=solved.tolist(),
        first_player_value=value.tolist(),
        solve_seconds=seconds.tolist(),
        reused=int(len(solved) - len(todo)),  # values taken from `known`, not solved here
        ceiling_vs_perfect=ceilings,
        engine=f"engine:{engine}",
        agent=agent,
        agent_games=None
        if agent is None
        else split_games(env, agent, engine, games, seed, lost, among=solved),
        seconds=time.perf_counter() - t0,
    )


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=200, help="openings (games per colour; 200)")
    p.add_argument("--size", type=int, default=6, choices=(4, 6), help="board (6; 4: seconds)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--every", type=int, default=5, help="solve every K-th opening (5)")
    p.add_argument("--jobs", type=int, default=2, help="solver processes (2)")
    p.add_argument("--engine", type=int, default=4, help="--agent's opponent engine depth (4)")
    p.add_argument(
        "--agent",
        help="also play this agent's targets' games against the engine and split its W/D/L "
        "over the solved openings into those it is lost in by force and the others",
    )
    p.add_argument(
        "--json", help="also write the result to this JSON file (and the values as they come)"
    )
    p.add_argument(
        "--values",
        metavar="JSON",
        help="reuse the values of an earlier --json of these openings (finished or not); "
        "only the openings it lacks are solved",
    )
    args = p.parse_args(argv)
    for name in ("games", "every", "jobs", "engine"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.agent:  # a bad spec fails here, before the solves
        make_opponent(args.agent, jaxgames.make("reversi", size=args.size))
    known = None
    if args.values:
        try:
            with open(args.values) as f:
                known = json.load(f)
        except (OSError, ValueError) as e:
            p.error(f"--values {args.values}: {e}")
        lists = ("solved", "first_player_value", "solve_seconds")
        if not isinstance(known, dict) or not all(isinstance(known.get(k), list) for k in lists):
            needs = ", ".join(lists)
            p.error(f"--values {args.values}: not a --json of this script (needs {needs})")
    try:
        if known is None:
            build_solver()  # no compiler: one line before any work
        out = analyse(
            args.games,
            args.seed,
            args.every,
            args.jobs,
            args.engine,
            args.agent,
            args.size,
            known,
            save=args.json,
        )
    except SolverUnavailable as e:  # with --values, only openings it lacks need the solver
        p.error(str(e))
    n = len(out["solved"])
    v = np.array(out["first_player_value"])
    fastest, slowest = min(out["solve_seconds"]), max(out["solve_seconds"])
    print(
        f"reversi {args.size}x{args.size}: {n} of {args.games} openings "
        f"({out['opening_plies']} random plies, seed {args.seed}, every {args.every}) solved "
        f"to the end ({n - out['reused']} here, {out['reused']} from --values; "
        f"{sum(out['solve_seconds']):.0f} s of solving, one solve {fastest:.1f}-{slowest:.0f} s; "
        f"this run {out['seconds']:.0f} s)"
    )
    print(f"first player wins {(v > 0).sum()}, draws {(v == 0).sum()}, loses {(v < 0).sum()}")
    for colour, c in out["ceiling_vs_perfect"].items():
        # all solved: exact for these openings, the interval is for random openings at large
        ci = f"[{c['low']:.1%}, {c['high']:.1%}]"
        where = (
            f"exact here; {ci} for random openings"
            if n == args.games
            else f"{ci} for all {args.games}"
        )
        print(
            f"as {colour} player against perfect play: at most {c['score']:.1%} ({where}; "
            f"lost by force in {c['losses']} of {n})"
        )
    print_split(f"{args.agent} vs {out['engine']}", out["agent_games"])
    if args.json:
        write_json(args.json, out)
    return out


if __name__ == "__main__":
    report_errors(main)
