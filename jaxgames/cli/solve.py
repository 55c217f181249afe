"""``jaxgames solve animal_shogi``: build the solved table of animal shogi (every position
reachable from the start, its value and distance, :mod:`jaxgames.evaluation.animal_shogi_solver`)
into the cache folder, where the ``perfect`` player reads it; once built, report it.
``jaxgames solve reversi --size 6 --empties 14``: solve random positions with that many empty
squares exactly (:mod:`jaxgames.evaluation.reversi_solver`) and report the cost per position."""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from jaxgames.evaluation import animal_shogi_solver as solver
from jaxgames.evaluation import reversi_solver
from jaxgames.runs.outputs import check_output_path
from jaxgames.terminal import one_line
from jaxgames.validation import check_int, check_seed

GAMES = ("animal_shogi", "reversi")
_VALUES = {1: "win", 0: "draw", -1: "loss"}


def _reversi(args: argparse.Namespace) -> int:
    size = 6 if args.size is None else args.size
    if args.empties is None:
        raise ValueError("solve reversi needs --empties E (empty squares of the positions)")
    reversi_solver.check_size(size, "--size")
    check_int("--positions", args.positions)
    positions = reversi_solver.random_endgames(size, args.empties, args.positions, args.seed)
    seconds, nodes, margins = [], [], []
    for p, o in positions:
        t0 = time.process_time()  # CPU time: the machine may be shared
        margin, n = reversi_solver.solve_position(size, p, o)
        seconds.append(time.process_time() - t0)
        nodes.append(n)
        margins.append(margin)
    s, n, m = np.array(seconds), np.array(nodes), np.array(margins)
    print(
        f"reversi {size}x{size}, {len(positions)} random positions with {args.empties} empties "
        f"(seed {args.seed}), exact margin for the mover"
    )
    for name, x in (("CPU seconds", s), ("nodes", n)):
        stats = f"mean {x.mean():.3g}, median {np.median(x):.3g}, max {x.max():.3g}"
        print(f"  {name + ' per position:':26} {stats}")
    print(
        f"  mover wins {int((m > 0).sum())}, draws {int((m == 0).sum())}, losses "
        f"{int((m < 0).sum())}; mean margin {m.mean():+.2f}"
    )
    return 0


#: each game's own flags (the others are refused, not ignored)
_FLAGS = {
    "reversi": ("size", "empties", "positions"),
    "animal_shogi": ("cache_dir", "force", "check", "unfolded"),
}


def _check_flags(args: argparse.Namespace) -> None:
    """``ValueError`` naming a flag given (not at its default) that belongs to the other game."""
    for game, flags in _FLAGS.items():
        if game == args.game:
            continue
        for name in flags:
            if getattr(args, name) != args.flag_defaults[name]:
                flag = "--" + name.replace("_", "-")
                raise ValueError(f"{flag} is for 'solve {game}', not 'solve {args.game}'")


def run_solve(args: argparse.Namespace) -> int:
    """``solve``; a missing compiler or a failed solve prints one line and returns 2."""
    try:
        _check_flags(args)
        check_seed("--seed", args.seed)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.game == "reversi":
        try:
            return _reversi(args)
        except (solver.SolverUnavailable, ValueError) as e:
            print(f"error: {one_line(e)}", file=sys.stderr)
            return 2
    if args.check < 0:
        print(f"error: --check must be >= 0, got {args.check}", file=sys.stderr)
        return 2
    folder = os.path.abspath(os.path.expanduser(args.cache_dir)) if args.cache_dir else None
    folder = folder or solver.cache_dir()
    if folder is None:  # a solve of minutes and gigabytes that nothing could read back
        print(
            f"error: the solve cache is off ({solver.ENV_VAR}=0): give --cache-dir FOLDER for "
            "the table",
            file=sys.stderr,
        )
        return 2
    try:
        t0 = time.perf_counter()
        load = not args.force and all(map(os.path.exists, solver.table_paths(folder)))
        if not load:  # where the solve will save: checked before it
            check_output_path(folder, "--cache-dir", folder=True)
        if load:
            table = solver.load_table(folder)
            print(f"loaded the solved table from {folder} in {time.perf_counter() - t0:.1f} s")
        else:
            table = solver.solve_animal_shogi(folder, verbose=not args.quiet)
            print(f"solved in {table.stats['seconds']:.0f} s, saved to {folder}")
        try:
            value, plies = table.lookup(solver.START[None])
        except KeyError:  # a table of a reduced solve (other roots) saved under the name
            raise ValueError(
                f"the solved table in {folder} does not hold the start position (a reduced "
                "solve's?): run 'jaxgames solve animal_shogi --force' to rebuild it"
            ) from None
        s = table.stats
        print(
            f"positions {s['positions']:,} (side to move normalised, mirror folded): "
            f"wins {s['wins']:,}, losses {s['losses']:,}, draws {s['draws']:,}; "
            f"longest {s['longest']} plies"
        )
        start = _VALUES[int(value[0])]
        print(f"start position: a {start} for the side to move in {int(plies[0])} plies")
        if args.unfolded:
            print(f"positions with mirror images counted apart: {table.unfolded_count():,}")
        if args.check:
            report = solver.check_consistency(table, args.check, seed=args.seed)
            bad = len(report["failures"])
            print(f"consistency: {report['checked']:,} random positions checked, {bad} failures")
            if bad:
                return 1
    except (solver.SolverUnavailable, OSError, ValueError) as e:
        print(f"error: {one_line(e)}", file=sys.stderr)
        return 2
    return 0


def add_command(subparsers) -> None:
    """Register ``solve`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser(
        "solve",
        help="solve animal shogi by retrograde analysis (the table the perfect player reads)",
        description="Build the table of every animal-shogi position reachable from the start "
        "(value and distance to the end) with a C program compiled at first use, and cache it "
        "(default ~/.cache/jaxgames/solved; JAXGAMES_SOLVE_CACHE=<folder> moves it, =0 turns "
        "it off). Run once: the perfect player reads the cached table.",
    )
    p.add_argument("game", choices=GAMES, help="the game to solve")
    p.add_argument("--cache-dir", default=None, help="folder of the table (default: the cache)")
    p.add_argument("--force", action="store_true", help="solve again though a table is cached")
    p.add_argument(
        "--check",
        type=int,
        default=0,
        metavar="N",
        help="check N random positions against their successors (default 0)",
    )
    p.add_argument("--seed", type=int, default=0, help="--check / reversi: the sample's seed")
    p.add_argument("--quiet", action="store_true", help="no progress lines while solving")
    p.add_argument(
        "--unfolded", action="store_true", help="also count positions without mirror folding"
    )
    p.add_argument("--size", type=int, default=None, help="reversi: board size (default 6)")
    p.add_argument("--empties", type=int, default=None, help="reversi: empty squares")
    p.add_argument(
        "--positions", type=int, default=20, help="reversi: random positions (default 20)"
    )
    own = [name for flags in _FLAGS.values() for name in flags]
    p.set_defaults(func=run_solve, flag_defaults={name: p.get_default(name) for name in own})
