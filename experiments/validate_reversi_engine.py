"""Validate the reversi engine by matches: deeper beats shallower, and it beats the old opponents.

    PYTHONPATH=. python experiments/validate_reversi_engine.py              # 8x8 and 6x6
    PYTHONPATH=. python experiments/validate_reversi_engine.py --sizes 6 --games 100

For every board size: ``engine:D+1`` against ``engine:D`` for each D of ``--depths``, then
``engine:D`` for each D of ``--against-depths`` against each of ``--baselines`` (specs of
:func:`jaxgames.evaluation.opponents.make_opponent`). Every match is one
:func:`jaxgames.evaluation.arena.arena`: ``--games`` games, half with each colour, after
``--opening`` uniformly random plies (varied openings; the two halves share their random
numbers), 95% Wilson intervals. All engines solve the endgame exactly from ``--endgame``
empties, so the depth matches measure the midgame search.

Results are printed as they come and written to ``<out>/validate_reversi_engine.md`` (and
``.json``). The arena evaluates both policies on every game at every ply, so a match costs
about both engines' search time on every position.

Result of the default run (the first command; 20 minutes on 2 shared CPU cores)::

    board  A         B            score of A            W / D / L     as first  as second
    8x8    engine:2  engine:1     0.875 [0.822, 0.914]  175 / 0 / 25   0.910     0.840
    8x8    engine:3  engine:2     0.743 [0.678, 0.798]  143 / 11 / 46  0.725     0.760
    8x8    engine:4  engine:3     0.713 [0.646, 0.771]  139 / 7 / 54   0.785     0.640
    8x8    engine:2  alphabeta:2  0.797 [0.736, 0.847]  159 / 1 / 40   0.795     0.800
    8x8    engine:2  greedy       0.895 [0.845, 0.930]  179 / 0 / 21   0.910     0.880
    8x8    engine:4  alphabeta:2  0.973 [0.939, 0.988]  194 / 1 / 5    0.990     0.955
    8x8    engine:4  greedy       0.970 [0.936, 0.986]  194 / 0 / 6    0.970     0.970
    6x6    engine:2  engine:1     0.735 [0.670, 0.791]  147 / 0 / 53   0.760     0.710
    6x6    engine:3  engine:2     0.618 [0.549, 0.682]  119 / 9 / 72   0.650     0.585
    6x6    engine:4  engine:3     0.642 [0.574, 0.706]  127 / 3 / 70   0.700     0.585
    6x6    engine:2  alphabeta:2  0.802 [0.742, 0.852]  160 / 1 / 39   0.830     0.775
    6x6    engine:2  greedy       0.895 [0.845, 0.930]  177 / 4 / 19   0.935     0.855
    6x6    engine:4  alphabeta:2  0.865 [0.811, 0.906]  172 / 2 / 26   0.925     0.805
    6x6    engine:4  greedy       0.950 [0.910, 0.973]  189 / 2 / 9    1.000     0.900
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import jax

import jaxgames
from jaxgames.cli import report_errors
from jaxgames.evaluation.match import arena
from jaxgames.evaluation.reversi_engine import reversi_engine_policy
from jaxgames.specs import make_opponent


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 6])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3], help="D of D+1 vs D")
    ap.add_argument("--against-depths", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--baselines", nargs="*", default=["alphabeta:2", "greedy"])
    ap.add_argument("--endgame", type=int, default=10, help="exact endgame empties")
    ap.add_argument("--opening", type=int, default=4, help="random opening plies")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/validate_reversi_engine")
    args = ap.parse_args(argv)

    rows = []

    def match(env, name_a, a, name_b, b):
        t = time.time()
        key = jax.random.PRNGKey(args.seed)
        r = arena(a, b, env, args.games, key, opening_plies=args.opening)
        row = dict(
            size=env.size,
            a=name_a,
            b=name_b,
            games=args.games,
            seconds=round(time.time() - t, 1),
            **{k: v for k, v in r.to_dict().items()},
        )
        rows.append(row)
        o = r.overall
        lo, hi = o.ci("score")
        print(
            f"{env.size}x{env.size} {name_a} vs {name_b}: score {o.score:.3f} [{lo:.3f}, {hi:.3f}] "
            f"(W {o.wins} D {o.draws} L {o.losses}; as first {r.as_first.score:.3f}, as second "
            f"{r.as_second.score:.3f}; {row['seconds']:.0f} s)",
            flush=True,
        )

    e = args.endgame
    for size in args.sizes:
        env = jaxgames.make("reversi", size=size)
        engines = {}

        def engine(d):
            if d not in engines:  # one policy object per depth: arenas compile once per pair
                engines[d] = reversi_engine_policy(env, d, e)
            return engines[d]

        for d in args.depths:
            match(env, f"engine:{d + 1}", engine(d + 1), f"engine:{d}", engine(d))
        for d in args.against_depths:
            for spec in args.baselines:
                match(env, f"engine:{d}", engine(d), spec, make_opponent(spec, env))

    os.makedirs(args.out, exist_ok=True)
    lines = [
        "# Reversi engine validation",
        "",
        f"{args.games} games per match (half per colour), {args.opening} random opening plies, "
        f"exact endgame from {e} empties; A's score (wins + draws / 2) with 95% Wilson interval.",
        "",
        "| board | A | B | score of A | W / D / L | as first | as second | seconds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        o = r["overall"]
        lo, hi = o["score_ci"]
        lines.append(
            f"| {r['size']}x{r['size']} | {r['a']} | {r['b']} | {o['score']:.3f} "
            f"[{lo:.3f}, {hi:.3f}] | {o['wins']} / {o['draws']} / {o['losses']} | "
            f"{r['as_first']['score']:.3f} | {r['as_second']['score']:.3f} | {r['seconds']:.0f} |"
        )
    with open(os.path.join(args.out, "validate_reversi_engine.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "validate_reversi_engine.json"), "w") as f:
        json.dump(rows, f, indent=2)
    print("\n".join(lines))
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
