"""Time the classic opponents: milliseconds per move for a batch of positions.

    PYTHONPATH=. python experiments/benchmark_opponents.py --game reversi \\
        --specs greedy alphabeta:2 alphabeta:3
    PYTHONPATH=. python experiments/benchmark_opponents.py --game animal_shogi --batch 8 64 --quick

Positions come from ``--plies`` random plies from the start (one batch, fixed seed). Each
(spec, batch) is compiled once, then timed over ``--repeats`` calls with fresh keys.
Prints a table and writes runs/benchmark_opponents/<game>.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import time

import jax

import jaxgames
from jaxgames.specs import make_opponent


def random_positions(env, key, n, plies):
    """n states after ``plies`` random plies (finished games stay finished)."""

    def one(k):
        def body(t, s):
            return env.step(
                s, jaxgames.random_action(jax.random.fold_in(k, t), s.legal_action_mask)
            )

        return jax.lax.fori_loop(0, plies, body, env.init(k))

    return jax.jit(jax.vmap(one))(jax.random.split(key, n))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="tic_tac_toe")
    p.add_argument("--size", type=int, default=None, help="reversi board size")
    p.add_argument(
        "--specs",
        nargs="+",
        default=["random", "greedy", "alphabeta:1", "alphabeta:2", "alphabeta:3", "alphabeta:4"],
    )
    p.add_argument("--batch", type=int, nargs="+", default=[1, 16, 128])
    p.add_argument("--plies", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", default="runs/benchmark_opponents")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    if a.quick:
        a.repeats, a.specs = 2, [s for s in a.specs if s not in ("alphabeta:4",)]
    env = jaxgames.make(a.game, **({"size": a.size} if a.size else {}))
    rows = []
    print(
        f"{env!r} on {jax.devices()[0].platform}: "
        "ms per call (one move for every position of the batch)"
    )
    for spec in a.specs:
        policy = make_opponent(spec, env)
        act = jax.jit(jax.vmap(policy))
        for b in a.batch:
            states = random_positions(env, jax.random.PRNGKey(0), b, a.plies)
            keys = jax.random.split(jax.random.PRNGKey(1), b)
            t0 = time.time()
            jax.block_until_ready(act(keys, states))
            compile_s = time.time() - t0
            t0 = time.time()
            for r in range(a.repeats):
                jax.block_until_ready(act(jax.random.split(jax.random.PRNGKey(2 + r), b), states))
            ms = 1000 * (time.time() - t0) / a.repeats
            rows.append(
                dict(
                    game=a.game,
                    spec=spec,
                    batch=b,
                    ms_per_call=round(ms, 3),
                    ms_per_position=round(ms / b, 4),
                    compile_s=round(compile_s, 2),
                )
            )
            print(
                f"{spec:>12} batch {b:5d}: {ms:9.2f} ms/call  {ms / b:8.3f} ms/position  "
                f"(compile {compile_s:.1f}s)"
            )
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"{a.game}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
