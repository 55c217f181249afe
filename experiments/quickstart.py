"""Quick start: a short PPO self-play run on tic-tac-toe, then its strength vs random, greedy
and the perfect player. Well under 3 minutes on a 2-core CPU, compilation included.

    PYTHONPATH=$PWD python experiments/quickstart.py
    PYTHONPATH=$PWD python experiments/quickstart.py --total-steps 200000 \\
        --out runs/quickstart_short

Training goes through the shared run driver (``jaxgames.training.driver.run_training``, the
same as ``jaxgames train ppo --game tic_tac_toe``), so ``runs/quickstart/`` is an ordinary run
directory: ``config.json``, ``metrics.jsonl``/``metrics.csv`` (per chunk: losses, entropy,
steps/s, greedy policy vs random as X and as O), ``checkpoints/``, ``learning_curve.png``;
this script adds ``strength.md``/``strength.json`` (``--games-per-colour`` games of the greedy
agent against each opponent, as X and as O, W/D/L with 95% Wilson intervals). Rerunning with
the same settings resumes (a finished run is just re-evaluated). Then try
``python -m jaxgames.cli play --game tic_tac_toe --agent runs/quickstart``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments.common import add_overrides_argument, fmt_rate, write_json  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402

#: about 600k plies: strong vs random in ~1-2 minutes of CPU training
DEFAULT_STEPS = 614_400


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--total-steps",
        type=int,
        default=DEFAULT_STEPS,
        help="self-play plies (all games together)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--games-per-colour", type=int, default=500, help="strength evaluation games per colour"
    )
    p.add_argument("--opponents", nargs="+", default=["random", "greedy", "perfect"])
    add_overrides_argument(p, "PPO config overrides, e.g. --set num_envs=128")
    p.add_argument("--out", default="runs/quickstart")
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)

    import jax

    from jaxgames.agents import ppo
    from jaxgames.evaluation import arena
    from jaxgames.specs import make_opponent
    from jaxgames.training.driver import run_training

    t0 = time.time()
    cfg = ppo.default_config(
        "tic_tac_toe", seed=a.seed, total_steps=a.total_steps, updates_per_chunk=5, eval_games=200
    )
    if a.overrides:
        cfg = cfg.override(dict(kv.split("=", 1) for kv in a.overrides))
    print(
        f"PPO self-play on tic-tac-toe: {cfg.total_steps:,} plies, {cfg.num_envs} games at once "
        f"-> {a.out}/"
    )
    summary = run_training("ppo", cfg, a.out, progress=not a.no_progress)
    t_train = time.time() - t0

    algo = summary.algorithm
    policy = algo.agent.policy(algo.params(summary.state), greedy=True)
    env = algo.env
    key = jax.random.PRNGKey(1234 + a.seed)
    strength, lines = {}, []
    for i, name in enumerate(a.opponents):
        r = arena(
            policy,
            make_opponent(name, env),
            env,
            2 * a.games_per_colour,
            jax.random.fold_in(key, i),
        )
        strength[name] = r.to_dict()
        lines.append(
            f"| {name} | {r.as_first.wins}/{r.as_first.draws}/{r.as_first.losses} | "
            f"{fmt_rate(r.as_first.wins, r.as_first.games)} | "
            f"{r.as_second.wins}/{r.as_second.draws}/{r.as_second.losses} | "
            f"{fmt_rate(r.as_second.wins, r.as_second.games)} | {r.overall.losses} |"
        )
    seconds = time.time() - t0
    last = summary.last
    result = dict(
        run_dir=a.out,
        total_steps=algo.total_steps,
        train_and_compile_seconds=t_train,
        total_seconds=seconds,
        final_metrics=last,
        strength=strength,
    )
    write_json(os.path.join(a.out, "strength.json"), result)
    md = [
        f"# Quick start: PPO self-play on tic-tac-toe ({algo.total_steps:,} plies)",
        "",
        f"Greedy agent, {a.games_per_colour} games per colour; W/D/L from the agent's side, "
        "win rates with 95% Wilson intervals.",
        "",
        "| opponent | as X W/D/L | win as X | as O W/D/L | win as O | losses |",
        "|---|---|---|---|---|---|",
        *lines,
        "",
        f"Training (incl. compile) {t_train:.0f}s, total {seconds:.0f}s.",
    ]
    with open(os.path.join(a.out, "strength.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    print(
        f"\nwrote {a.out}/: config.json, metrics.jsonl, metrics.csv, learning_curve.png, "
        f"checkpoints/, strength.md, strength.json"
    )
    print(f"play against it: python -m jaxgames.cli play --game tic_tac_toe --agent {a.out}")
    return result


if __name__ == "__main__":
    sys.exit(report_errors(main))
