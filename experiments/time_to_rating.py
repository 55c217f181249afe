"""Time to rating: how long training takes to reach fixed strengths against held-out opponents.

For every (algorithm, game) a single seed trains with the algorithm's preset; after every
``--eval-every`` chunks its greedy policy plays ``--eval-games`` games (half with each colour,
fixed evaluation keys; reversi and animal-shogi games start from the ladder's 4 random
opening plies, so a greedy network meets a deterministic engine in varied games) against each
milestone opponent. A milestone is reached at the first
evaluation whose score (wins + draws / 2, both colours) is at least its threshold. The
milestone opponents are ladder rungs the presets never train with (``MILESTONES``; a
milestone whose opponent is among the run's training partners is refused).

    PYTHONPATH=$PWD python experiments/time_to_rating.py                    # PPO, every game
    PYTHONPATH=$PWD python experiments/time_to_rating.py --games reversi:6 --algos ppo dqn \\
        --budget-min 20
    PYTHONPATH=$PWD python experiments/time_to_rating.py --quick            # ~2 minutes

Reported per run: compile seconds (separate; a warm persistent compilation cache makes them
small), then per milestone the env steps and training wall clock (chunks only, not compilation
or evaluation) at which it was reached, or "not reached" with the best score and the budget;
plus training steps/s, and for PPO the network FLOPs per second (estimated:
:func:`network_flops_per_step`) and their fraction of this machine's measured float32 matmul
peak (:func:`common.matmul_peak_flops`).

Writes ``<out>/time_to_rating.csv`` (one row per run and milestone), ``<out>/time_to_rating.md``
(the table), ``<out>/curves.csv`` (every evaluation point) and ``<out>/config.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from experiments.common import (  # noqa: E402
    add_overrides_argument,
    compiled_flops,
    eval_opening_plies,
    make_config,
    matmul_peak_flops,
    parse_game,
    parse_set_args,
    prepare_out,
    standard_games,
    train_seeds,
    write_csv,
)
from jaxgames.agents import algorithm_module  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402
from jaxgames.specs import make_opponent  # noqa: E402

#: game -> [(opponent spec, score threshold)], weakest first; held-out ladder rungs only
MILESTONES: dict[str, list[tuple[str, float]]] = {
    "tic_tac_toe": [("random", 0.9), ("uct:300", 0.5), ("perfect", 0.5)],
    "reversi": [("random", 0.9), ("engine:2", 0.5), ("engine:4", 0.5)],
    "animal_shogi": [("random", 0.9), ("engine:2", 0.5), ("engine:4", 0.5)],
}


def milestones_for(game: str, partners) -> list[tuple[str, float]]:
    """The milestones of ``game``; ``ValueError`` if an engine or MCTS milestone opponent is a
    training partner (a partner is no yardstick: the agent was trained against it). Random
    play is the one exception: the reversi and animal-shogi presets play an eighth of their
    games against it, and "90% vs random" is the usual first bar; the table marks it."""
    ms = MILESTONES[game]
    trained = sorted({spec for spec, _ in ms} & set(partners) - {"random"})
    if trained:
        raise ValueError(
            f"milestone opponent(s) {trained} are training partners of this config; "
            "time to rating is measured against held-out opponents only"
        )
    return ms


def network_flops_per_step(algo: str, config) -> float | None:
    """Estimated network FLOPs per env step of a PPO run: one forward pass to act, and forward
    + backward (~3 forward passes) in each of the ``update_epochs`` passes over the sample;
    the forward pass counted by XLA on one observation. None for other algorithms (search,
    replay: no simple count)."""
    if algo != "ppo":
        return None
    agent = algorithm_module(algo).make_algorithm(config).agent
    params = agent.init_params(jax.random.PRNGKey(0))
    obs = jnp.zeros((1, *config.make_env().observation_shape), jnp.float32)
    fwd = compiled_flops(jax.jit(agent.apply).lower(params, obs).compile())
    return fwd * (1 + 3 * config.update_epochs) if fwd else None


def score(row: dict) -> float:
    games = row["win_all"] + row["draw_all"] + row["loss_all"]
    return (row["win_all"] + 0.5 * row["draw_all"]) / games


def run_one(game_spec: str, algo: str, a, peak: float | None) -> tuple[list[dict], list[dict]]:
    game, options, label = parse_game(game_spec)
    config = make_config(algo, game, options, a.quick, dict(a.overrides))
    ms = milestones_for(game, config.partners)
    env = config.make_env()
    opponents = {spec: make_opponent(spec, env) for spec, _ in ms}
    print(f"[{algo} {label}] milestones: " + ", ".join(f"{s} >= {t:.0%}" for s, t in ms))
    result = train_seeds(
        algo,
        config,
        [a.seed],
        opponents,
        a.eval_games,
        eval_every=a.eval_every,
        eval_at_start=False,
        time_budget_s=a.budget_min * 60,
        opening_plies=eval_opening_plies(env),
    )
    curve = [dict(r, game=label, algorithm=algo, score=score(r)) for r in result.rows]
    steps = result.num_chunks * result.steps_per_chunk
    sps = steps / result.train_seconds if result.train_seconds else float("nan")
    per_step = network_flops_per_step(algo, config)
    flops_s = per_step * sps if per_step and result.train_seconds else None
    rows = []
    for spec, threshold in ms:
        points = [r for r in curve if r["opponent"] == spec]
        hit = next((r for r in points if r["score"] >= threshold), None)
        rows.append(
            dict(
                game=label,
                algorithm=algo,
                milestone=f"{threshold:.0%} vs {spec}"
                + (" (training partner)" if spec in config.partners else ""),
                reached=hit is not None,
                env_steps=hit["env_steps"] if hit else None,
                train_seconds=hit["train_seconds"] if hit else None,
                best_score=round(max((r["score"] for r in points), default=float("nan")), 4),
                budget_env_steps=steps,
                budget_train_seconds=round(result.train_seconds, 1),
                compile_seconds=round(result.compile_seconds, 1),
                steps_per_second=round(sps),
                gflops_per_second=round(flops_s / 1e9, 1) if flops_s else None,
                fraction_of_matmul_peak=round(flops_s / peak, 3) if flops_s and peak else None,
            )
        )
    return rows, curve


def markdown(rows: list[dict], peak: float | None, command: str) -> str:
    lines = [
        "# Time to rating",
        "",
        f"`{command}`; {jax.device_count()} x {jax.devices()[0].platform}, "
        f"{os.cpu_count()} CPUs; float32 matmul peak measured "
        + (f"{peak / 1e9:.0f} GFLOP/s" if peak else "n/a")
        + f"; {time.strftime('%Y-%m-%d')}",
        "",
        "| game | algorithm | milestone | env steps | training wall clock | best score "
        "| compile | steps/s | network GFLOP/s (share of matmul peak) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["reached"]:
            steps, wall = f"{r['env_steps']:,}", f"{r['train_seconds']:.0f} s"
        else:
            steps = f"not reached in {r['budget_env_steps']:,}"
            wall = f"not reached in {r['budget_train_seconds']:.0f} s"
        fl = (
            f"{r['gflops_per_second']} ({r['fraction_of_matmul_peak']:.0%})"
            if r["gflops_per_second"] and r["fraction_of_matmul_peak"]
            else "n/a"
        )
        lines.append(
            f"| {r['game']} | {r['algorithm']} | {r['milestone']} | {steps} | {wall} "
            f"| {r['best_score']:.0%} | {r['compile_seconds']:.0f} s | {r['steps_per_second']:,} "
            f"| {fl} |"
        )
    return "\n".join(lines) + "\n"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=None, help="default: every registered variant")
    p.add_argument("--algos", nargs="+", default=["ppo"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget-min", type=float, default=15.0, help="training minutes per run")
    p.add_argument("--eval-every", type=int, default=2, help="chunks between evaluations")
    p.add_argument("--eval-games", type=int, default=64, help="games per opponent and point")
    add_overrides_argument(p, "config overrides for every run, e.g. net.hidden=64")
    p.add_argument("--quick", action="store_true", help="quick presets, 1-minute budget")
    p.add_argument("--out", default="runs/time_to_rating")
    a = p.parse_args(argv)
    a.overrides = parse_set_args(p, a.overrides)
    if a.quick:
        a.budget_min = min(a.budget_min, 1.0)
        a.games = a.games or ["tic_tac_toe", "reversi:6"]
    a.games = a.games or standard_games()
    return a


def main(argv=None) -> list[dict]:
    a = parse_args(argv)
    command = "python experiments/time_to_rating.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    out = prepare_out(a.out, {"args": vars(a), "command": command})
    peak = matmul_peak_flops()
    rows, curves = [], []
    for g in a.games:
        for algo in a.algos:
            r, c = run_one(g, algo, a, peak)
            rows += r
            curves += c
            write_csv(os.path.join(out, "time_to_rating.csv"), rows)
            write_csv(os.path.join(out, "curves.csv"), curves)
            table = markdown(rows, peak, command)
            with open(os.path.join(out, "time_to_rating.md"), "w") as f:
                f.write(table)
    print(table)
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
