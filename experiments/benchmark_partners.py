"""What training partners cost: a game's preset (with its partners) vs the same config in pure
self-play, side by side in one process.

    python experiments/benchmark_partners.py                   # reversi 8x8 PPO
    python experiments/benchmark_partners.py --game animal_shogi --repeats 7
    python experiments/benchmark_partners.py --variants preset '{}' '{"alphabeta:2": 0.25}' \\
        '{"greedy": 0.25}' --updates-per-chunk=5
    python experiments/benchmark_partners.py --quick          # 2 rounds of 1-update chunks

Every variant (``preset``: the game's default partners; otherwise a JSON dict of partner spec
-> share, ``{}`` = pure self-play) is the algorithm's per-game default config with that
``partners`` (plus any ``--field=value`` overrides). All variants are compiled first, then
timed in rounds (one chunk of each variant per round, in turn), so a load change on a shared
machine hits them alike; the report gives the median and best steps/s over the rounds and the
ratio of each variant's median chunk time to pure self-play's (the ``{}`` variant).

``--games-only`` also times the training games alone (``games.step`` for ``num_steps`` plies
with uniformly random learner moves, no network, no learning): the cost of the partners'
replies and the resets without the update around them.

Prints a table and writes ``<out>/partners.csv`` and ``<out>/config.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import jax

from jaxgames.agents.config import parse_overrides
from jaxgames.agents.games_batch import make_training_games
from jaxgames.agents.registry import ALGORITHMS, algorithm_module
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.core import random_action
from jaxgames.specs import check_partners, make_partners
from jaxgames.training.experiment import check_experiment_out


def variant_config(base, variant: str):
    """``base`` with the partners of ``variant`` (``preset`` keeps the preset's)."""
    if variant == "preset":
        return base
    try:
        partners = json.loads(variant)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid --variants entry {variant!r}: not JSON ({e})") from None
    return base.override({"partners": partners})


def games_only(games, plies: int):
    """jit((env_state, key) -> (env_state, key, games finished)): ``plies`` plies of the
    training games ``games`` with uniformly random learner moves."""

    def run(env_state, key):
        def ply(carry, _):
            s, k = carry
            k, k_act, k_step = jax.random.split(k, 3)
            out = games.step(s, random_action(k_act, s.legal_action_mask), k_step)
            return (out.state, k), out.done.sum()

        (s, k), done = jax.lax.scan(ply, (env_state, key), None, length=plies)
        return s, k, done.sum()

    return jax.jit(run)


def main(argv=None) -> list[dict]:
    p = ArgumentParser(
        allow_abbrev=False,
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--algorithm", default="ppo", choices=sorted(ALGORITHMS))
    p.add_argument("--game", default="reversi")
    p.add_argument("--size", type=int, default=None, help="board size (reversi only; default 8)")
    p.add_argument("--variants", nargs="+", default=["preset", "{}"])
    p.add_argument("--repeats", type=int, default=5, help="timing rounds (one chunk per variant)")
    p.add_argument("--games-only", action="store_true", help="also time the games without learning")
    p.add_argument("--out", default="runs/benchmark_partners")
    p.add_argument("--quick", action="store_true", help="2 rounds, chunks of one update")
    args, extra = p.parse_known_args(argv)
    check_experiment_out(args.out)
    overrides = parse_overrides(extra)
    overrides.setdefault("updates_per_chunk", "1" if args.quick else "5")
    args.repeats = min(args.repeats, 2) if args.quick else args.repeats
    if args.size is not None and args.game != "reversi":
        raise ValueError(f"--size is for reversi, not {args.game!r}")
    options = {"size": args.size or 8} if args.game == "reversi" else {}
    module = algorithm_module(args.algorithm)
    base = module.default_config(args.game, options).override(overrides)
    configs = [(v, variant_config(base, v)) for v in args.variants]
    for _, config in configs:  # every variant's partners play the game before any compiles
        check_partners(config.partners, config.make_env())

    built = []
    for v, config in configs:
        env = config.make_env()
        policies = make_partners(config.partners, env)
        algo = module.make_algorithm(config, policies)
        state = jax.jit(algo.init)(jax.random.PRNGKey(config.seed))
        chunk = jax.jit(algo.chunk, donate_argnums=0)
        t0 = time.perf_counter()
        state, m = chunk(state)
        jax.block_until_ready(m)
        item = dict(
            variant=v,
            partners=config.partners,
            algo=algo,
            chunk=chunk,
            state=state,
            compile_s=time.perf_counter() - t0,
            times=[],
        )
        if args.games_only:
            games = make_training_games(env, config.num_envs, config.partners, policies)
            fn = games_only(games, config.num_steps)
            item["games_fn"] = fn
            jax.block_until_ready(fn(state.env_state, state.key))
            item["games_times"] = []
        built.append(item)
        print(f"compiled {v}: {item['compile_s']:.1f}s", flush=True)

    for r in range(args.repeats):
        for item in built:
            t0 = time.perf_counter()
            item["state"], m = item["chunk"](item["state"])
            jax.block_until_ready((item["state"], m))
            item["times"].append(time.perf_counter() - t0)
            if "games_fn" in item:
                s = item["state"]
                t0 = time.perf_counter()
                jax.block_until_ready(item["games_fn"](s.env_state, s.key))
                item["games_times"].append(time.perf_counter() - t0)

    selfplay = next((b for b in built if not b["partners"]), None)
    rows = []
    print(
        f"\n{args.algorithm} {args.game} {options or ''} network={base.network} {base.net} "
        f"num_envs={base.num_envs} num_steps={base.num_steps} updates_per_chunk="
        f"{base.updates_per_chunk} on {jax.devices()[0].platform}, {args.repeats} rounds"
    )
    for item in built:
        steps = item["algo"].steps_per_chunk
        med = statistics.median(item["times"])
        row = dict(
            variant=item["variant"],
            partners=json.dumps(item["partners"]),
            median_steps_per_s=round(steps / med),
            best_steps_per_s=round(steps / min(item["times"])),
            median_chunk_s=round(med, 4),
            compile_s=round(item["compile_s"], 2),
            times=[round(t, 4) for t in item["times"]],
        )
        if selfplay is not None:
            row["x_selfplay"] = round(med / statistics.median(selfplay["times"]), 3)
        if "games_times" in item:
            g = statistics.median(item["games_times"])
            row["games_only_median_s"] = round(g, 4)
            row["games_only_steps_per_s"] = round(base.num_envs * base.num_steps / g)
        rows.append(row)
        print(
            f"  {item['variant']:>24}: median {row['median_steps_per_s']:>8,} steps/s "
            f"(best {row['best_steps_per_s']:,}), chunk {med:.3f}s"
            + (f", x{row['x_selfplay']:.2f} self-play time" if "x_selfplay" in row else "")
            + (
                f"; games only {row['games_only_median_s'] * 1000:.0f} ms/update"
                if "games_only_median_s" in row
                else ""
            )
        )
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump({**vars(args), "overrides": overrides, "jax": jax.__version__}, f, indent=2)
    with open(os.path.join(args.out, "partners.csv"), "w") as f:
        keys = list(rows[0])
        f.write(",".join(keys) + "\n")
        for row in rows:
            f.write(",".join(json.dumps(str(row.get(k, ""))) for k in keys) + "\n")
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
