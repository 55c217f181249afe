"""Learning curves: win rate and ladder Elo vs environment steps and vs wall clock against
random and the game's held-out ladder rungs, seed mean with a 95% band, PPO, DQN and Gumbel
AlphaZero on the same axes, every game.

    # full: 4 games x 3 algos x 3 seeds
    PYTHONPATH=$PWD python experiments/learning_curves.py
    # ~3 minutes: tic-tac-toe, reversi 6x6
    PYTHONPATH=$PWD python experiments/learning_curves.py --quick
    PYTHONPATH=$PWD python experiments/learning_curves.py --games tic_tac_toe --algos ppo --seeds 5

All seeds of one (game, algorithm) train at once: the algorithm's pure ``chunk`` is
``vmap``-ed over the seed keys ``PRNGKey(seed)`` and compiled once (see
``experiments/common.py:train_seeds``); between chunks every seed's greedy policy plays
``--eval-games`` games (half as first, half as second player, each from ``--opening-plies``
random plies) against each opponent in one seed-vmapped, jitted arena. The wall clock counts
the training chunks only (all seeds together), never compilation or evaluation; compile time
is reported separately.

The opponents (``--opponents`` overrides them): random plus the rungs of the game's ladder
(``experiments/build_ladder.py``) cheap enough to play at every evaluation
(``common.CURVE_RUNG_LIMITS``), leaving out the run's training partners, so the curves measure
held-out strength: e.g. reversi PPO (partners random, greedy, alphabeta:2): random, uct:100,
engine:1, engine:2; tic-tac-toe: random, greedy, uct:30, uct:300, perfect.

Elo: at every evaluation point each seed's games against the opponents that are rungs of the
game's shipped ladder give its rating on the ladder's scale (``jaxgames rate``'s: random = 0),
the rungs' ratings held fixed (``rate_against_ladder``; 95% bootstrap interval per seed, the
figure's band is the t-interval over seeds).

Writes ``<out>/<game>_<algo>/``: ``config.json`` (script arguments + the algorithm config +
timings), ``curves.csv`` (one row per evaluation point, seed and opponent: W/D/L counts and
rates as first, as second and overall), ``elo.csv`` (one row per evaluation point and seed),
``summary.json`` (final seed means with 95% t-intervals), ``learning_curves.png/.pdf`` and
``seed<k>/`` (each seed's final agent as a run directory: ``jaxgames play``/``load_policy``/
``strength_table.py`` read it); ``<out>/<game>_elo.png/.pdf`` (every algorithm's Elo curve on
one pair of axes), ``<out>/summary.md`` and ``<out>/index.json`` listing them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments.common import (  # noqa: E402
    add_overrides_argument,
    curve_arrays,
    curve_opponents,
    eval_opening_plies,
    make_config,
    mean_band,
    parse_game,
    parse_set_args,
    plot_band,
    prepare_out,
    pyplot,
    read_csv,
    save_figure,
    save_seed_runs,
    standard_games,
    target_line,
    train_seeds,
    with_eval_points,
    write_csv,
    write_json,
)
from jaxgames.cli import report_errors  # noqa: E402

DEFAULT_GAMES = standard_games()  # every registered game and variant
QUICK_GAMES = ["tic_tac_toe", "reversi:6"]
DEFAULT_ALGOS = ["ppo", "dqn", "alphazero"]
#: env steps per seed of the full runs, chosen so that 3 seeds in one vmap train in <= ~12
#: minutes on the 2-core CPU (games not listed use the algorithm's preset ``total_steps``)
FULL_STEPS = {
    ("reversi6x6", "ppo"): 6_000_000,
    ("reversi6x6", "dqn"): 3_000_000,
    ("reversi8x8", "ppo"): 5_000_000,
    ("reversi8x8", "dqn"): 3_000_000,
    ("animal_shogi", "ppo"): 2_500_000,
    ("animal_shogi", "dqn"): 2_000_000,
    # Gumbel AlphaZero (8 simulations per ply): more than fits the time budget, so the budget
    # decides where its curve ends
    ("reversi6x6", "alphazero"): 3_000_000,
    ("reversi8x8", "alphazero"): 2_000_000,
    ("animal_shogi", "alphazero"): 2_000_000,
}
#: config overrides of the full runs (like FULL_STEPS: not with --quick or --total-steps; --set
#: wins). Reversi 6x6 PPO: a quarter of the games vs random and entropy 0.1, the combination
#: that reached 99.0% / 98.2% vs random in experiments/ablation.py (the preset: ~97.5%); on 8x8
#: the same change cost 3 points vs alphabeta:2 (88.8% vs 92.0%), so the preset keeps its values
FULL_OVERRIDES = {
    ("reversi6x6", "ppo"): {
        "ent_coef": 0.1,
        "partners": {"random": 0.25, "greedy": 0.25, "alphabeta:2": 0.25},
    },
}


def plot_curves(
    rows, opponents, title: str, stem: str, n_seeds: int, game: str | None = None
) -> list[str]:
    """A grid: one column per opponent; top row vs env steps, bottom row vs training wall
    clock. Win rate (solid) and loss rate (dotted) of the greedy policy over both colours,
    seed mean with a 95% band; the win-rate or score target of ``game`` (if any) as a dashed
    line."""
    plt = pyplot()
    n = len(opponents)
    fig, axes = plt.subplots(2, n, figsize=(3.2 * n + 0.6, 5.6), sharey=True, squeeze=False)
    for i, opp in enumerate(opponents):
        steps, secs, win = curve_arrays(rows, opp, "win_rate_all")
        _, _, loss = curve_arrays(rows, opp, "loss_rate_all")
        _, _, draw = curve_arrays(rows, opp, "draw_rate_all")
        target = target_line(game, opp) if game else None
        for ax, x in zip(axes[:, i], (steps, secs)):
            if target is not None:
                what, thr = target
                ax.axhline(thr, ls="--", lw=0.8, color="gray", label=f"target {what} {thr:.0%}")
            plot_band(ax, x, win, "win", color="tab:blue")
            plot_band(ax, x, loss, "loss", color="tab:red", style=":", alpha=0.12)
            if target is not None and target[0] == "score":  # the target's own rate
                plot_band(ax, x, win + 0.5 * draw, "score", color="tab:green", style="--")
            ax.set_ylim(-0.02, 1.02)
            ax.grid(alpha=0.3)
        axes[0, i].set_title(f"vs {opp}")
        axes[0, i].set_xlabel("env steps per seed", fontsize=8)
        axes[1, i].set_xlabel("training wall clock (s)", fontsize=8)
    axes[0, 0].set_ylabel("rate, both colours")
    axes[1, 0].set_ylabel("rate, both colours")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(
        f"{title}: greedy policy, mean of {n_seeds} seeds (trained at once), 95% band", fontsize=10
    )
    fig.tight_layout()
    return save_figure(fig, stem)


def elo_rows(rows, env) -> list[dict]:
    """One row per (evaluation point, seed): the agent's Elo on the game's ladder
    (``jaxgames rate``'s scale) from that point's games against the opponents that are rungs,
    the rungs' ratings held fixed (their bootstrap propagated) and a 95% percentile interval;
    ``bound`` is "lower"/"upper" where the agent won/lost every game (``elo`` is then the
    one-sided bound). Empty for a game without a shipped ladder."""
    from jaxgames.evaluation.ladder import Pairing, game_key, load_ladder, rate_against_ladder

    try:
        fit = load_ladder(game_key(env)).fit()
    except (FileNotFoundError, ValueError):
        return []
    groups: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        if r["opponent"] in fit.names:
            groups.setdefault((int(r["chunk"]), int(r["seed"])), []).append(r)
    out = []
    for (chunk, seed), rs in sorted(groups.items()):
        results = {
            r["opponent"]: Pairing.from_counts(
                "<agent>", r["opponent"], r["win_all"], r["draw_all"], r["loss_all"]
            )
            for r in rs
        }
        rating = rate_against_ladder(results, fit)
        out.append(
            dict(
                chunk=chunk,
                env_steps=rs[0]["env_steps"],
                train_seconds=rs[0]["train_seconds"],
                seed=seed,
                elo=round(rating.elo, 1),
                elo_lo=round(rating.lo, 1),
                elo_hi=round(rating.hi, 1),
                bound=rating.bound or "",
                rungs=" ".join(results),
            )
        )
    return out


def plot_elo(out: str, label: str, runs: list[dict]) -> list[str]:
    """``<out>/<label>_elo.png/.pdf``: ladder Elo vs env steps and vs training wall clock, one
    line per algorithm (seed mean, 95% band over seeds), with the ladder's engine rungs as
    horizontal references. ``runs``: the label's summaries (``dir`` and ``algorithm``)."""
    from jaxgames.evaluation.ladder import load_ladder

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    ladder = None
    for s in runs:
        rows = read_csv(os.path.join(s["dir"], "elo.csv"))
        if not rows:
            continue
        ladder = ladder or s.get("ladder")
        steps, secs, elo = curve_arrays(rows, None, "elo")
        n = elo.shape[0]
        for ax, x in zip(axes, (steps, secs)):
            plot_band(ax, x, elo, f"{s['algorithm']} ({n} seed{'s' * (n > 1)})")
    if ladder:
        for spec, e in load_ladder(ladder).elos.items():
            if spec.startswith("engine:"):
                for ax in axes:
                    ax.axhline(e, ls="--", lw=0.7, color="gray")
                axes[1].annotate(
                    spec,
                    (1.0, e),
                    xycoords=("axes fraction", "data"),
                    fontsize=7,
                    va="bottom",
                    ha="right",
                    color="gray",
                )
    axes[0].set_xlabel("env steps per seed")
    axes[1].set_xlabel("training wall clock (s, all seeds at once)")
    axes[0].set_ylabel("Elo on the ladder (random = 0)")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{label}: greedy network vs held-out ladder rungs, seed mean, 95% band")
    fig.tight_layout()
    return save_figure(fig, os.path.join(out, f"{label}_elo"))


def run_one(game_spec: str, algo: str, a, echo=print) -> dict:
    """Train + evaluate one (game, algorithm); write its folder. Returns its summary."""
    from jaxgames.evaluation.ladder import game_key
    from jaxgames.specs import make_opponent

    game, options, label = parse_game(game_spec)
    full = not (a.quick or a.total_steps)  # the full runs' steps and overrides
    cfg = make_config(
        algo,
        game,
        options,
        a.quick,
        {**(FULL_OVERRIDES.get((label, algo), {}) if full else {}), **dict(a.overrides)},
    )
    steps = a.total_steps or (FULL_STEPS.get((label, algo)) if full else None)
    if steps:
        cfg = cfg.override({"total_steps": steps})
    cfg = with_eval_points(algo, cfg, a.evals)
    env = cfg.make_env()
    opp_names = a.opponents or curve_opponents(env, getattr(cfg, "partners", None))
    opponents = {name: make_opponent(name, env) for name in opp_names}
    plies = eval_opening_plies(env) if a.opening_plies is None else a.opening_plies
    seeds = list(range(a.seed, a.seed + a.seeds))
    out = os.path.join(a.out, f"{label}_{algo}")
    prepare_out(
        out,
        dict(
            script="learning_curves.py",
            game=game_spec,
            algorithm=algo,
            seeds=seeds,
            opponents=opp_names,
            eval_games=a.eval_games,
            opening_plies=plies,
            quick=a.quick,
            algorithm_config=cfg.to_dict(),
        ),
    )
    echo(
        f"== {label} {algo}: {len(seeds)} seeds x {cfg.total_steps:,} steps, opponents {opp_names}"
    )
    t0 = time.time()
    res = train_seeds(
        algo,
        cfg,
        seeds,
        opponents,
        a.eval_games,
        echo=echo,
        time_budget_s=a.budget_minutes * 60 if a.budget_minutes else None,
        opening_plies=plies,
    )
    write_csv(os.path.join(out, "curves.csv"), res.rows)
    elos = elo_rows(res.rows, env)
    write_csv(os.path.join(out, "elo.csv"), elos)
    final_elo = None
    if elos:
        last_elo = np.array([[float(r["elo"])] for r in elos if r["chunk"] == res.num_chunks])
        mu, lo, hi = mean_band(last_elo)
        final_elo = dict(mean=float(mu[0]), ci95=[float(lo[0]), float(hi[0])])
    final = {}
    last = [r for r in res.rows if r["chunk"] == res.num_chunks]
    for opp in opp_names:
        sel = [r for r in last if r["opponent"] == opp]
        entry = {}
        for col in (
            "win_rate_first",
            "win_rate_second",
            "win_rate_all",
            "loss_rate_all",
            "draw_rate_all",
        ):
            mu, lo, hi = mean_band(np.array([[r[col]] for r in sel]))
            entry[col] = dict(mean=float(mu[0]), ci95=[float(lo[0]), float(hi[0])])
        entry["losses_total"] = int(sum(r["loss_all"] for r in sel))
        entry["games_total"] = int(sum(r["win_all"] + r["draw_all"] + r["loss_all"] for r in sel))
        final[opp] = entry
    run_dirs = save_seed_runs(res, out) if not a.no_save_runs else []
    summary = dict(
        game=game_spec,
        label=label,
        algorithm=algo,
        seeds=seeds,
        partners=dict(getattr(cfg, "partners", None) or {}),
        env_steps_per_seed=res.num_chunks * res.steps_per_chunk,
        chunks=res.num_chunks,
        compile_seconds=res.compile_seconds,
        train_seconds=res.train_seconds,
        eval_seconds=res.eval_seconds,
        total_seconds=time.time() - t0,
        final=final,
        final_elo=final_elo,
        ladder=game_key(env) if elos else None,
        run_dirs=run_dirs,
        steps_per_second_all_seeds=len(seeds)
        * res.num_chunks
        * res.steps_per_chunk
        / max(res.train_seconds, 1e-9),
    )
    write_json(os.path.join(out, "summary.json"), summary)
    if not a.no_plot:
        plot_curves(
            res.rows,
            opp_names,
            f"{algo.upper()} on {label}",
            os.path.join(out, "learning_curves"),
            len(seeds),
            game,
        )
    echo(
        f"   compile {res.compile_seconds:.1f}s, train {res.train_seconds:.1f}s, "
        f"eval {res.eval_seconds:.1f}s; "
        + "; ".join(
            f"{o}: win {final[o]['win_rate_all']['mean']:.1%} "
            f"loss {final[o]['loss_rate_all']['mean']:.1%}"
            for o in opp_names
        )
    )
    echo(
        f"   wrote {out}/ (config.json, curves.csv, summary.json, learning_curves.png/.pdf, seed*/)"
    )
    return summary


def replot(out: str) -> None:
    """Redraw the figure of an existing ``<out>/<game>_<algo>`` folder from its curves.csv."""
    rows = read_csv(os.path.join(out, "curves.csv"))
    opps = list(dict.fromkeys(r["opponent"] for r in rows))
    seeds = {r["seed"] for r in rows}
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    game, _, label = parse_game(cfg["game"])
    plot_curves(
        rows,
        opps,
        f"{cfg['algorithm'].upper()} on {label}",
        os.path.join(out, "learning_curves"),
        len(seeds),
        game,
    )


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--games",
        nargs="+",
        default=None,
        help=f"names or name:size, e.g. reversi:6 (default {' '.join(DEFAULT_GAMES)}; "
        f"with --quick {' '.join(QUICK_GAMES)})",
    )
    p.add_argument("--algos", nargs="+", default=DEFAULT_ALGOS)
    p.add_argument("--seeds", type=int, default=3, help="number of seeds (trained in one vmap)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--evals", type=int, default=8, help="evaluation points during training (about)")
    p.add_argument(
        "--eval-games", type=int, default=200, help="games per opponent and seed (half per colour)"
    )
    p.add_argument(
        "--total-steps",
        type=int,
        default=None,
        help="env steps per seed (default: the algorithm's)",
    )
    add_overrides_argument(p, "algorithm config overrides, e.g. --set num_envs=64 net.hidden=64")
    p.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        help="override the opponent list (all games; default: random and the game's held-out "
        "ladder rungs cheap enough to play during training)",
    )
    p.add_argument(
        "--opening-plies",
        type=int,
        default=None,
        help="random plies starting each evaluation game (default: the ladder's, 4; tic-tac-toe 0)",
    )
    p.add_argument(
        "--budget-minutes", type=float, default=15.0, help="training time cap per run (0: none)"
    )
    p.add_argument("--out", default="runs/learning_curves")
    p.add_argument(
        "--quick",
        action="store_true",
        help="a few minutes: tic-tac-toe and reversi 6x6 (unless --games), "
        "the algorithms' quick presets, 3 seeds, 4 evaluations x 64 games",
    )
    p.add_argument("--no-plot", action="store_true")
    p.add_argument(
        "--replot",
        nargs="+",
        default=None,
        metavar="DIR",
        help="only redraw the figures of existing <game>_<algo> folders from their curves.csv",
    )
    p.add_argument(
        "--no-save-runs", action="store_true", help="do not write the seed<k>/ run directories"
    )
    a = p.parse_args(argv)
    if a.games is None:
        a.games = QUICK_GAMES if a.quick else DEFAULT_GAMES
    if a.quick:
        a.evals = min(a.evals, 4)
        a.eval_games = min(a.eval_games, 64)
    a.overrides = parse_set_args(p, a.overrides)
    if a.seeds < 1:
        p.error("--seeds must be >= 1")
    if a.opening_plies is not None and a.opening_plies < 0:
        p.error(f"--opening-plies must be >= 0, got {a.opening_plies}")
    return a


def write_index(out: str) -> str:
    """``<out>/index.json``: every finished ``<game>_<algo>`` folder under ``out`` (found by its
    summary.json, so runs of earlier invocations and of interrupted ones stay listed)."""
    runs, summaries = [], []
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        path = os.path.join(out, name, "summary.json")
        if os.path.exists(path):
            with open(path) as f:
                s = json.load(f)
            summaries.append(s)
            runs.append(
                dict(
                    game=s["game"],
                    label=s["label"],
                    algorithm=s["algorithm"],
                    dir=os.path.join(out, name),
                    run_dirs=s["run_dirs"],
                )
            )
    write_summary_table(out, summaries)
    by_label: dict[str, list[dict]] = {}
    for run, s in zip(runs, summaries):
        if s.get("final_elo") is not None:
            by_label.setdefault(s["label"], []).append({**run, "ladder": s["ladder"]})
    for label, group in by_label.items():
        plot_elo(out, label, group)
    return write_json(os.path.join(out, "index.json"), dict(runs=runs))


def elo_cell(final_elo: dict | None) -> str:
    """``"612 [580, 644]"``: the seed mean of the final Elo with its 95% t-interval."""
    if final_elo is None:
        return "-"
    lo, hi = final_elo["ci95"]
    return f"{final_elo['mean']:.0f} [{lo:.0f}, {hi:.0f}]"


def write_summary_table(out: str, summaries: list[dict]) -> str:
    """``<out>/summary.md`` from the runs' summary.json contents: one row per finished run, the
    final win rate (both colours) vs each opponent as the seed mean with its 95% t-interval
    ("partner" where the run trained against that opponent), plus steps and training time."""
    opps: list[str] = []
    for s in summaries:
        opps += [o for o in s["final"] if o not in opps]
    lines = [
        "| game | algorithm | seeds | env steps per seed | training (all seeds) | Elo | "
        + " | ".join(f"vs {o}: win (loss)" for o in opps)
        + " |",
        "|---|---|---|---|---|---|" + "---|" * len(opps),
    ]
    for s in summaries:
        cells = []
        for o in opps:
            f = s["final"].get(o)
            if f is None:
                cells.append("-")
                continue
            w, (lo, hi) = f["win_rate_all"]["mean"], f["win_rate_all"]["ci95"]
            partner = " partner" if o in s.get("partners", {}) else ""
            cells.append(
                f"{w:.1%} [{lo:.1%}, {hi:.1%}] ({f['loss_rate_all']['mean']:.1%}){partner}"
            )
        lines.append(
            f"| {s['label']} | {s['algorithm']} | {len(s['seeds'])} | "
            f"{s['env_steps_per_seed']:,} | "
            f"{s['train_seconds'] / 60:.1f} min | {elo_cell(s.get('final_elo'))} | "
            + " | ".join(cells)
            + " |"
        )
    path = os.path.join(out, "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main(argv=None) -> list[dict]:
    a = parse_args(argv)
    if a.replot:
        for d in a.replot:
            replot(d)
            print(f"redrew {d}/learning_curves.png/.pdf")
        return []
    summaries = []
    t0 = time.time()
    for g in a.games:
        for algo in a.algos:
            summaries.append(run_one(g, algo, a))
            index = write_index(a.out)
    print(f"done in {time.time() - t0:.0f}s; index: {index}")
    return summaries


if __name__ == "__main__":
    sys.exit(report_errors(main))
