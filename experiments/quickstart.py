"""Quick start: a short PPO self-play run on tic-tac-toe, then its strength against random,
greedy and the perfect player.

    python experiments/quickstart.py
    python experiments/quickstart.py --total-steps 200000 --out runs/quickstart_short
    python experiments/quickstart.py --quick                 # a smoke test: seconds of training

Training goes through the library's run driver (``run_training``, as ``jaxgames train ppo
--game tic_tac_toe``), so ``runs/quickstart/`` is an ordinary run directory: ``config.json``,
``metrics.jsonl``/``metrics.csv`` (per chunk: losses, entropy, steps/s, the greedy policy vs
random as X and as O), ``checkpoints/``, ``learning_curve.png``; this script adds
``strength.md``/``strength.json``: ``--games-per-colour`` games of the greedy agent against each
opponent as X and as O (W/D/L, win rates with 95% Wilson intervals). Rerunning resumes (a
finished run is only re-evaluated). ``--field=value`` overrides the PPO config. Then play it:
``jaxgames play --game tic_tac_toe --agent runs/quickstart``.
"""

from __future__ import annotations

import os
import sys
import time

import jax

from jaxgames.agents.config import parse_overrides
from jaxgames.agents.presets import default_config
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.evaluation.match import arena
from jaxgames.specs import check_spec, make_opponent
from jaxgames.training.driver import run_training
from jaxgames.training.experiment import write_json
from jaxgames.validation import check_int

#: about 600k plies
DEFAULT_STEPS = 614_400


def main(argv=None) -> dict:
    p = ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--total-steps", type=int, default=None, help="self-play plies in all")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--games-per-colour", type=int, default=500, help="evaluation games")
    p.add_argument("--opponents", nargs="+", default=["random", "greedy", "perfect"])
    p.add_argument("--out", default="runs/quickstart")
    p.add_argument("--quick", action="store_true", help="40k plies, 100 games per colour")
    p.add_argument("--no-progress", action="store_true")
    a, extra = p.parse_known_args(argv)
    if a.total_steps is not None:
        check_int("--total-steps", a.total_steps)
    check_int("--games-per-colour", a.games_per_colour)
    steps = a.total_steps or (40_960 if a.quick else DEFAULT_STEPS)
    games = min(a.games_per_colour, 100) if a.quick else a.games_per_colour
    t0 = time.time()
    cfg = default_config("ppo", "tic_tac_toe", seed=a.seed, total_steps=steps)
    cfg = cfg.override({"updates_per_chunk": 5, "eval_games": 200, **parse_overrides(extra)})
    for name in a.opponents:  # every opponent plays before anything trains
        check_spec(name, cfg.make_env())
    print(f"PPO self-play on tic-tac-toe: {cfg.total_steps:,} plies, {cfg.num_envs} games at once")
    run = run_training("ppo", cfg, a.out, progress=not a.no_progress)
    t_train = time.time() - t0
    algo, env = run.algorithm, run.algorithm.env
    policy = algo.agent.policy(algo.params(run.state), greedy=True)
    strength, lines = {}, []
    for i, name in enumerate(a.opponents):
        key = jax.random.fold_in(jax.random.PRNGKey(1234 + a.seed), i)
        r = arena(policy, make_opponent(name, env), env, 2 * games, key)
        strength[name] = r.to_dict()
        cells = [
            f"{rec.wdl} | {rec.win_rate:.1%} [{rec.ci()[0]:.1%}, {rec.ci()[1]:.1%}]"
            for rec in (r.as_first, r.as_second)
        ]
        lines.append(f"| {name} | {' | '.join(cells)} | {r.overall.losses} |")
    result = dict(
        run_dir=a.out,
        total_steps=algo.total_steps,
        train_and_compile_seconds=t_train,
        total_seconds=time.time() - t0,
        final_metrics=run.last,
        strength=strength,
    )
    write_json(os.path.join(a.out, "strength.json"), result)
    md = [
        f"# Quick start: PPO self-play on tic-tac-toe ({algo.total_steps:,} plies)",
        "",
        f"Greedy agent, {games} games per colour; W/D/L from the agent's side, win rates with "
        "95% Wilson intervals.",
        "",
        "| opponent | as X W/D/L | win as X | as O W/D/L | win as O | losses |",
        "|---|---|---|---|---|---|",
        *lines,
        "",
        f"Training (with compilation) {t_train:.0f} s, in all {result['total_seconds']:.0f} s.",
    ]
    with open(os.path.join(a.out, "strength.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    print(f"\nplay against it: jaxgames play --game tic_tac_toe --agent {a.out}")
    return result


if __name__ == "__main__":
    sys.exit(report_errors(main))
