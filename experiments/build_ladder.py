"""Build a game's ladder of fixed opponents: play the rungs' pairings from a fixed opening set,
fit their Elo (random = 0) with 95% bootstrap intervals, and store it as package data.

    # -> jaxgames/evaluation/ladders/reversi8.json
    python experiments/build_ladder.py --game reversi --size 8
    python experiments/build_ladder.py --game animal_shogi --openings 100
    python experiments/build_ladder.py --all                          # every game's default ladder
    python experiments/build_ladder.py --game reversi --size 6 --quick   # small, into runs/ only
    # new rungs on top of the shipped ladder: only their pairings are played
    python experiments/build_ladder.py --game reversi --size 8 --extend engine:5 engine:6

The rungs of each game (weakest first) are in :data:`LADDERS`; each rung plays the next
``--span`` rungs up (default 2, see :func:`jaxgames.evaluation.ladder.build_ladder`). The
ladder file records the games of every pairing, the opening set, the command, machine and
date, so ``jaxgames rate`` can place any player on it and the fit can be redone from the file.
A summary table is also written to ``runs/ladders/<game>.md``.

``--extend`` keeps the shipped ladder's pairings and plays only those of the added rungs: the
games a full rebuild with the longer rung list would play (same openings, same random keys:
see :func:`jaxgames.evaluation.ladder.build_ladder`), at the cost of the new pairings alone.
"""

from __future__ import annotations

import os
import shlex
import sys
import time

import jaxgames
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.evaluation.ladder import build_ladder, game_key, ladder_path, load_ladder, save_ladder
from jaxgames.specs import make_opponent
from jaxgames.validation import check_int

#: the reversi 6x6 and animal-shogi rungs, weakest first (engine:5 and engine:6 extend the
#: shipped ladders: --extend)
ENGINE_RUNGS = ["random", "greedy", "uct:100"] + [f"engine:{d}" for d in range(1, 7)]

#: game key -> (make options, rungs weakest first, openings, random opening plies)
LADDERS: dict[str, tuple[str, dict, list[str], int, int]] = {
    "tic_tac_toe": ("tic_tac_toe", {}, ["random", "greedy", "uct:30", "uct:300", "perfect"], 36, 2),
    "reversi6": (
        "reversi",
        {"size": 6},
        ENGINE_RUNGS,
        50,
        4,
    ),
    "reversi8": (
        "reversi",
        {"size": 8},
        # the order the shipped ladder was built with (its pairings, docs/ladders.md);
        # engine:5 to engine:7 extend it (--extend)
        [
            "random",
            "greedy",
            "uct:100",
            "engine:1",
            "uct:1000",
            "engine:2",
            "engine:3",
            "engine:4",
            "engine:5",
            "engine:6",
            "engine:7",
        ],
        50,
        4,
    ),
    "animal_shogi": (
        "animal_shogi",
        {},
        # perfect play (the solved table, jaxgames solve animal_shogi) tops it: --extend perfect
        ENGINE_RUNGS + ["perfect"],
        50,
        4,  # 2 random plies reach only 13 distinct positions
    ),
}


def summary_markdown(ladder, command: str, seconds: float) -> str:
    lines = [
        f"# Ladder: {ladder.game}",
        "",
        f"`{command}` ({seconds / 60:.1f} min; {ladder.machine}; {ladder.created})",
        "",
        "| rung | Elo [95% CI] |",
        "|---|---|",
    ]
    lines += [f"| `{r.spec}` | {r.rating} |" for r in ladder.rungs]
    lines += [
        "",
        "| pairing | score [95% CI] | as first (W/D/L) | as second (W/D/L) |",
        "|---|---|---|---|",
    ]
    for p in ladder.pairings:
        lo, hi = p.score_ci()
        f, s = p.as_first, p.as_second
        lines.append(
            f"| `{p.a}` vs `{p.b}` | {p.score:.1%} [{lo:.1%}, {hi:.1%}] | "
            f"{f.wins}/{f.draws}/{f.losses} | {s.wins}/{s.draws}/{s.losses} |"
        )
    return "\n".join(lines) + "\n"


def build(key: str, args) -> None:
    game, options, rungs, n_openings, plies = LADDERS[key]
    env = jaxgames.make(game, **options)
    if args.rungs:
        rungs = args.rungs
    n_openings = args.openings or (8 if args.quick else n_openings)
    played = []
    if args.extend:
        shipped = load_ladder(key)
        if (shipped.n_openings, shipped.plies, shipped.opening_seed) != (
            n_openings,
            plies,
            args.seed,
        ):
            raise ValueError(
                f"--extend: the shipped {key} ladder has {shipped.n_openings} openings of "
                f"{shipped.plies} plies, seed {shipped.opening_seed}; this build "
                f"{n_openings}, {plies}, {args.seed}"
            )
        known = [s for s in args.extend if s in shipped.specs]
        if known:
            raise ValueError(f"--extend: {known} are rungs of the shipped {key} ladder already")
        rungs, played = shipped.specs + list(args.extend), shipped.pairings
    command = "python experiments/build_ladder.py " + " ".join(map(shlex.quote, sys.argv[1:]))
    t0 = time.time()
    ladder = build_ladder(
        env,
        rungs,
        lambda spec: make_opponent(spec, env),
        n_openings=n_openings,
        plies=plies,
        seed=args.seed,
        span=args.span or None,
        command=command,
        played=played,
    )
    seconds = time.time() - t0
    print(ladder)
    os.makedirs(args.runs, exist_ok=True)
    with open(os.path.join(args.runs, f"{key}.md"), "w") as f:
        f.write(summary_markdown(ladder, command, seconds))
    out = os.path.join(args.runs, f"{key}.json") if args.quick else ladder_path(key)
    save_ladder(ladder, out)
    print(f"{key}: {seconds / 60:.1f} min; wrote {out} and {args.runs}/{key}.md")


def main(argv=None) -> None:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", choices=sorted({g for g, *_ in LADDERS.values()}))
    p.add_argument("--size", type=int, default=None)
    p.add_argument("--all", action="store_true", help="every game's default ladder")
    p.add_argument("--rungs", nargs="+", help="override the rungs (weakest first)")
    p.add_argument(
        "--extend",
        nargs="+",
        metavar="RUNG",
        help="rungs to add on top of the shipped ladder (weakest first); only their pairings "
        "are played",
    )
    p.add_argument("--openings", type=int, default=None, help="openings (2 games each)")
    p.add_argument("--span", type=int, default=2, help="pairings per rung upwards (0: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="8 openings, written to runs/ only")
    p.add_argument("--runs", default="runs/ladders")
    args = p.parse_args(argv)
    if args.openings is not None:
        check_int("--openings", args.openings)
    if args.all:
        keys = list(LADDERS)
    elif args.game:
        opts = {} if args.size is None else {"size": args.size}
        keys = [game_key(jaxgames.make(args.game, **opts))]
        if keys[0] not in LADDERS:
            raise ValueError(f"no ladder for {keys[0]}; ladders: {', '.join(LADDERS)}")
    else:
        p.error("give --game (and --size) or --all")
    if args.extend and (len(keys) != 1 or args.rungs or args.quick):
        p.error("--extend takes one --game, without --all, --rungs or --quick")
    for key in keys:
        build(key, args)


if __name__ == "__main__":
    sys.exit(report_errors(main))
