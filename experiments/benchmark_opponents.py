"""Time the ladder rungs: milliseconds per move, one position at a time and for a batch.

    python experiments/benchmark_opponents.py             # every rung of every game
    python experiments/benchmark_opponents.py --games reversi8 --batch 1 256
    python experiments/benchmark_opponents.py --games animal_shogi --specs greedy --quick

The opponents of each game are the rungs of its rating ladder (the shipped ladder of the game,
or of another size of it), weakest first; ``--specs`` replaces them. Positions come from
``--plies`` random plies from the start (one batch, fixed seed; default 10, at most a quarter
of the game's actions: 2 for tic-tac-toe, whose games end by ply 9).
Each (spec, batch) is compiled once, then timed over ``--repeats`` calls with fresh keys: the
batch-1 time is the cost of one move; a larger batch (games played side by side, as in the
arena and in training) gives the cost per position under ``vmap``.

Prints a table per game and writes ``<out>/<game>.csv`` and ``<out>/opponents.md``.
"""

from __future__ import annotations

import os
import sys
import time

import jax

import jaxgames
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.specs import check_spec, make_opponent
from jaxgames.training.experiment import (
    check_experiment_out,
    game_ladder,
    make_variant,
    variant_keys,
    write_csv,
)
from jaxgames.validation import check_int


def ladder_specs(env) -> list[str]:
    """The rungs of ``env``'s ladder, weakest first (none without a ladder)."""
    ladder = game_ladder(env)
    return ladder.specs if ladder is not None else []


def random_positions(env, key, n, plies):
    """n states after ``plies`` random plies (finished games stay finished)."""

    def one(k):
        def body(t, s):
            return env.step(
                s, jaxgames.random_action(jax.random.fold_in(k, t), s.legal_action_mask)
            )

        return jax.lax.fori_loop(0, plies, body, env.init(k))

    return jax.jit(jax.vmap(one))(jax.random.split(key, n))


def time_spec(env, spec: str, batch: int, plies: int, repeats: int) -> dict:
    """One row: ms per call of ``spec`` choosing a move for each of ``batch`` positions."""
    act = jax.jit(jax.vmap(make_opponent(spec, env)))
    states = random_positions(env, jax.random.PRNGKey(0), batch, plies)
    t0 = time.perf_counter()
    jax.block_until_ready(act(jax.random.split(jax.random.PRNGKey(1), batch), states))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for r in range(repeats):
        jax.block_until_ready(act(jax.random.split(jax.random.PRNGKey(2 + r), batch), states))
    ms = 1000 * (time.perf_counter() - t0) / repeats
    return dict(
        spec=spec,
        batch=batch,
        ms_per_call=round(ms, 3),
        ms_per_position=round(ms / batch, 4),
        compile_s=round(compile_s, 2),
    )


def main(argv=None) -> list[dict]:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--games",
        nargs="+",
        default=variant_keys(),
        help=f"default: {' '.join(variant_keys())}",
    )
    p.add_argument("--specs", nargs="+", default=None, help="default: the game's ladder rungs")
    p.add_argument("--batch", type=int, nargs="+", default=[1, 64])
    p.add_argument("--plies", type=int, default=None, help="random plies before timing")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", default="runs/benchmark_opponents")
    p.add_argument("--quick", action="store_true", help="2 repeats")
    a = p.parse_args(argv)
    if any(b < 1 for b in a.batch):
        p.error(f"--batch sizes must be >= 1, got {a.batch}")
    check_int("--repeats", a.repeats)
    if a.plies is not None:
        check_int("--plies", a.plies, minimum=0)
    for label in a.games:  # every game and spec checked before any is timed
        env = make_variant(label)
        for spec in a.specs or ():
            check_spec(spec, env)
    check_experiment_out(a.out)
    if a.quick:
        a.repeats = min(a.repeats, 2)
    device = jax.devices()[0].platform
    rows = []
    for label in a.games:
        env = make_variant(label)
        specs = a.specs or ladder_specs(env)
        plies = a.plies if a.plies is not None else min(10, env.num_actions // 4)
        print(f"{env!r} on {device}: ms per call (one move for every position of the batch)")
        game_rows = []
        for spec in specs:
            for b in a.batch:
                row = {"game": label, "plies": plies, **time_spec(env, spec, b, plies, a.repeats)}
                game_rows.append(row)
                print(
                    f"{spec:>12} batch {b:5d}: {row['ms_per_call']:9.2f} ms/call  "
                    f"{row['ms_per_position']:8.3f} ms/position  (compile {row['compile_s']:.1f}s)",
                    flush=True,
                )
        print(f"wrote {write_csv(os.path.join(a.out, f'{label}.csv'), game_rows)}")
        rows += game_rows
    path = os.path.join(a.out, "opponents.md")
    with open(path, "w") as f:
        f.write(markdown(rows, a))
    print(f"wrote {path}")
    return rows


def markdown(rows: list[dict], a) -> str:
    """One line per (game, spec): ms per move at each batch size (per position for batch > 1)."""
    batches = sorted({r["batch"] for r in rows})
    heads = [f"ms per move, batch {b}" + (" (per position)" if b > 1 else "") for b in batches]
    lines = [
        f"Per-move cost on {jax.devices()[0].device_kind} ({os.cpu_count()} CPUs), positions "
        f"after random plies (`plies` in the CSVs), mean of {a.repeats} calls after compiling.",
        "",
        "| game | opponent | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(batches),
    ]
    by = {(r["game"], r["spec"], r["batch"]): r for r in rows}
    for game, spec in dict.fromkeys((r["game"], r["spec"]) for r in rows):
        cells = [by.get((game, spec, b)) for b in batches]
        lines.append(
            f"| {game} | `{spec}` | "
            + " | ".join("-" if c is None else f"{c['ms_per_position']:.3g}" for c in cells)
            + " |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(report_errors(main))
