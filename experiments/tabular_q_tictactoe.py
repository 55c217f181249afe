"""Reproduce the Godot article's tabular Q-learning curve on tic-tac-toe, vectorised on device.

The article trains a Q table (epsilon 10%) against a random opponent and reports about 80% wins
after 10,000 games and a plateau just under 90% at 20,000-30,000 games. Here every seed plays
``--envs`` games at once in one jitted ``lax.scan`` (seeds are ``vmap``-ed), and the greedy
table is evaluated against random at ``--points`` moments during training.

    python experiments/tabular_q_tictactoe.py            # 40k games x 5 seeds
    python experiments/tabular_q_tictactoe.py --quick    # smoke test, seconds

Writes runs/tabular_q/: config.json, evals.csv (greedy policy vs random, per seed and mean),
train_curve.csv (epsilon-greedy training games, windows of --window games),
learning_curve.png/.pdf, summary.json.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import sys
import time

import jax
import numpy as np

from jaxgames.baselines.tabular_q import TabularQConfig, learning_curve, make_train
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.evaluation.elo import wilson_interval
from jaxgames.training.experiment import check_experiment_out, prepare_out
from jaxgames.validation import check_int, check_seed

#: the article's numbers, as stated in its text (games played, win rate vs random)
ARTICLE = [(10_000, 0.80), (20_000, 0.88), (30_000, 0.89)]


def main(argv=None):
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=40_000, help="games per seed (about)")
    p.add_argument("--envs", type=int, default=256, help="simultaneous games per seed")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--points", type=int, default=40, help="greedy evaluations during training")
    p.add_argument("--eval-games", type=int, default=2000)
    p.add_argument("--window", type=int, default=1000, help="training-curve window (games)")
    p.add_argument("--epsilon", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=0.3)
    p.add_argument("--gamma", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/tabular_q")
    p.add_argument("--quick", action="store_true", help="tiny run for a smoke test")
    a = p.parse_args(argv)
    for flag in ("seeds", "points", "eval_games", "window"):  # --games, --envs: the config's
        check_int(f"--{flag.replace('_', '-')}", getattr(a, flag))
    check_seed("--seed", a.seed)
    check_experiment_out(a.out)
    if a.quick:  # a smaller run: never more than asked
        a.games, a.seeds, a.points = min(a.games, 6000), min(a.seeds, 2), min(a.points, 6)
        a.eval_games, a.envs = min(a.eval_games, 500), min(a.envs, 128)

    cfg = TabularQConfig(
        total_games=a.games,
        num_envs=a.envs,
        epsilon=a.epsilon,
        lr=a.lr,
        gamma=a.gamma,
        eval_points=a.points,
        eval_games=a.eval_games,
    )
    prepare_out(a.out, dict(dataclasses.asdict(cfg), seeds=a.seeds, seed=a.seed, window=a.window))

    train = jax.jit(jax.vmap(make_train(cfg)))
    keys = jax.random.split(jax.random.PRNGKey(a.seed), a.seeds)
    t0 = time.time()
    train.lower(keys).compile()
    t_compile = time.time() - t0
    t0 = time.time()
    out = jax.block_until_ready(train(keys))
    t_run = time.time() - t0
    print(
        f"{a.seeds} seeds x ~{a.games} games ({a.envs} at once): "
        f"compile {t_compile:.1f}s, run {t_run:.1f}s"
    )

    ev = {k: np.asarray(v) for k, v in out.evals.items()}  # [seeds, points]
    n_eval = 2 * (a.eval_games // 2)
    games = ev["games"].mean(0)
    win = ev["wins"] / n_eval
    with open(os.path.join(a.out, "evals.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            ["games", "win_mean", "win_std", "win_x_mean", "win_o_mean", "draw_mean", "loss_mean"]
            + [f"win_seed{s}" for s in range(a.seeds)]
        )
        for j in range(len(games)):
            w.writerow(
                [
                    int(games[j]),
                    f"{win[:, j].mean():.4f}",
                    f"{win[:, j].std():.4f}",
                    f"{(ev['x_wins'][:, j] / (n_eval // 2)).mean():.4f}",
                    f"{(ev['o_wins'][:, j] / (n_eval // 2)).mean():.4f}",
                    f"{(ev['draws'][:, j] / n_eval).mean():.4f}",
                    f"{(ev['losses'][:, j] / n_eval).mean():.4f}",
                ]
                + [f"{x:.4f}" for x in win[:, j]]
            )

    curves = [
        learning_curve({k: np.asarray(v[s]) for k, v in out.curve.items()}, a.window)
        for s in range(a.seeds)
    ]
    m = min(len(c[0]) for c in curves)
    tg = curves[0][0][:m]
    tw = np.stack([c[1][:m] for c in curves])
    with open(os.path.join(a.out, "train_curve.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["games", "train_win_mean", "train_win_std"])
        for j in range(m):
            w.writerow([int(tg[j]), f"{tw[:, j].mean():.4f}", f"{tw[:, j].std():.4f}"])

    def at(g):
        if games[-1] < 0.95 * g:
            return None
        j = int(np.argmin(np.abs(games - g)))
        k = int(ev["wins"][:, j].sum())
        return dict(
            games=float(games[j]),
            greedy_win=float(win[:, j].mean()),
            ci95=wilson_interval(k, n_eval * a.seeds),
        )

    summary = dict(
        compile_s=t_compile,
        run_s=t_run,
        at_10k=at(10_000),
        at_20k=at(20_000),
        at_30k=at(30_000),
        final=at(games[-1]),
        final_train_win=float(tw[:, -1].mean()),
        final_x_win=float((ev["x_wins"][:, -1] / (n_eval // 2)).mean()),
        final_o_win=float((ev["o_wins"][:, -1] / (n_eval // 2)).mean()),
    )
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    plot(games, win, tg, tw, a, os.path.join(a.out, "learning_curve"))


def plot(games, win, tg, tw, a, stem):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    mu, sd = win.mean(0), win.std(0)
    ax.plot(
        games,
        mu,
        "o-",
        ms=3,
        color="tab:blue",
        label=f"greedy table vs random (mean of {a.seeds} seeds)",
    )
    ax.fill_between(games, mu - sd, mu + sd, color="tab:blue", alpha=0.2)
    ax.plot(
        tg,
        tw.mean(0),
        "-",
        color="tab:orange",
        lw=1,
        label=f"training games, epsilon={a.epsilon} (window {a.window})",
    )
    ax.plot(*zip(*ARTICLE), "s--", color="k", label="Godot article (numbers from its text)")
    ax.axhline(0.4365, color="gray", ls=":", lw=1, label="random vs random (0.437)")
    ax.set_xlabel("games played (per seed)")
    ax.set_ylabel("win rate vs random (colours alternate)")
    ax.set_ylim(0.3, 1.0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("Tabular Q-learning on tic-tac-toe (jaxgames, vectorised)")
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(f"{stem}.{ext}")
    plt.close(fig)
    print(f"wrote {stem}.png/.pdf")


if __name__ == "__main__":
    sys.exit(report_errors(main))
