"""Value iteration for tic-tac-toe (the C++ article's baseline) and the opponents' ladder.

    # 20k games perfect vs random, 4k per pair
    python experiments/value_iteration_tictactoe.py
    python experiments/value_iteration_tictactoe.py --quick

1. Enumerates the reachable positions and runs value iteration (zero-sum, gamma 1) and the
   C++ article's variant (gamma 0.8, win 1, loss -1, draw 0.3); prints sizes, sweeps, times,
   game values.
2. Plays ``perfect`` against random (its score depends on how ties between optimal moves are
   broken -- ours: uniformly at random; docs/results.md has the reference's numbers).
3. A round robin of random, greedy, alphabeta:2, alphabeta:4, perfect -> Elo table and plot
   (``--quick``: random, greedy, perfect; each pairing is a compile).

Writes runs/value_iteration/: summary.json, ratings.csv, ratings_matches.csv, elo.png/.pdf.
"""

from __future__ import annotations

import json
import os
import sys
import time

import jax

import jaxgames
from jaxgames.baselines.value_iteration import ARTICLE_CPP, enumerate_positions, value_iteration
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.evaluation.elo import bradley_terry, plot_ratings, write_ratings_csv
from jaxgames.evaluation.match import arena, round_robin
from jaxgames.specs import make_opponent
from jaxgames.training.experiment import check_experiment_out
from jaxgames.validation import check_int, check_seed

SPECS = ["random", "greedy", "alphabeta:2", "alphabeta:4", "perfect"]


def main(argv=None):
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=20_000, help="games of perfect vs random")
    p.add_argument(
        "--rr-games", type=int, default=4000, help="games per pairing of the round robin"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/value_iteration")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    check_int("--games", a.games)
    check_int("--rr-games", a.rr_games)
    check_seed("--seed", a.seed)
    check_experiment_out(a.out)
    if a.quick:  # a smaller run: never more than asked
        a.games, a.rr_games = min(a.games, 400), min(a.rr_games, 200)
    os.makedirs(a.out, exist_ok=True)
    env = jaxgames.make("tic_tac_toe")
    summary = {}

    t0 = time.time()
    pos = enumerate_positions()
    summary["positions"] = int(len(pos.codes))
    summary["terminal_positions"] = int(pos.terminal.sum())
    summary["enumerate_s"] = time.time() - t0
    for name, kw in [("zero_sum", {}), ("cpp_article", ARTICLE_CPP)]:
        t0 = time.time()
        vt = value_iteration(**kw)
        summary[name] = dict(
            settings=kw,
            sweeps=vt.iterations,
            seconds=time.time() - t0,
            start_value_x=vt.value("......... X", 0),
            start_value_o=vt.value("......... X", 1),
        )
    print(json.dumps(summary, indent=2))

    key = jax.random.PRNGKey(a.seed)
    perfect = make_opponent("perfect", env)
    t0 = time.time()
    r = arena(perfect, make_opponent("random", env), env, a.games, key)
    summary["perfect_vs_random"] = dict(r.to_dict(), seconds=time.time() - t0)
    print("perfect vs random\n" + str(r))

    specs = ["random", "greedy", "perfect"] if a.quick else SPECS
    t0 = time.time()
    matches = round_robin(
        {s: make_opponent(s, env) for s in specs}, env, a.rr_games, jax.random.fold_in(key, 1)
    )
    ratings = bradley_terry(matches, anchor="random")
    summary["round_robin_s"] = time.time() - t0
    summary["elo"] = ratings
    summary["matches"] = [m.__dict__ for m in matches]
    write_ratings_csv(ratings, matches, os.path.join(a.out, "ratings.csv"))
    for ext in ("png", "pdf"):
        plot_ratings(
            ratings,
            os.path.join(a.out, f"elo.{ext}"),
            title="tic-tac-toe opponents (Elo, random = 0)",
        )
    for m in matches:
        print(f"{m.a:>12} vs {m.b:<12} W {m.wins:6d} D {m.draws:6d} L {m.losses:6d}")
    print("Elo:", {k: round(v) for k, v in ratings.items()})
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, default=float)
    print(f"wrote {a.out}/summary.json, ratings.csv, elo.png/.pdf")


if __name__ == "__main__":
    sys.exit(report_errors(main))
