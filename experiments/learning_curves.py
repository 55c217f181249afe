"""Learning curves: win rate, score and ladder Elo against environment steps and training wall
clock, seed mean with a 95% band, for PPO, DQN and Gumbel AlphaZero on every game; the time
each run takes to reach fixed scores against held-out opponents; variants of a config side by
side (an ablation).

    python experiments/learning_curves.py                      # every game, 3 algorithms, 3 seeds
    python experiments/learning_curves.py --quick              # minutes: tic_tac_toe, reversi6
    python experiments/learning_curves.py --games reversi6 --algos ppo --ent-coef=0.1 \\
        --variant ent0.1 --out runs/ablation                    # one variant of an ablation

All seeds of a (game, algorithm) train at once through the library's run driver
(``run_training(..., seeds=...)``: one jitted vmap), each seed an ordinary run directory
``<out>/<label>/seed<s>/`` (``jaxgames play``, ``rate``, ``export`` read it; rerunning the
command resumes it). After every chunk (``on_chunk``) every seed's greedy policy plays
``--eval-games`` games against each opponent (half per colour, each from ``--opening-plies``
random plies, seed-vmapped). The wall clock counts the training chunks only (all seeds
together), not compilation or evaluation. ``--field=value`` arguments override the algorithm's
config (the ``jaxgames train`` syntax).

Opponents: random plus the rungs of the game's ladder cheap enough to play at every evaluation
(:data:`RUNG_LIMITS`), leaving out the run's training partners: held-out strength. Elo: at each
point, each seed's games against the ladder's rungs rate it on the ladder's scale (random = 0;
``rate_against_ladder``), when the games start from as many random plies as the ladder's
(tic-tac-toe's curves play from the start, its ladder from 2 plies: no Elo). Milestones
(:data:`MILESTONES`, time to rating): the first point whose seed-mean score (wins + draws /
2, both colours) reaches the threshold, in steps and seconds.

Writes ``<out>/<label>/`` (label ``<game>_<algo>[_<variant>]``): ``experiment.json``,
``curves.csv`` (per point, seed and opponent: W/D/L per colour), ``elo.csv``, ``summary.json``,
``learning_curves.png/.pdf`` and ``seed<s>/``; ``<out>/<game>_elo.png/.pdf``, ``summary.md``
(one row per run of ``<out>``: the ablation table, and the milestones) and ``index.json``.

``--accuracy N``: at every point each seed's greedy policy also plays N openings (both colours)
against ``--accuracy-against`` (default: the strongest opponent) and every move it makes
where the oracle applies is judged against perfect play
(:func:`jaxgames.evaluation.accuracy.move_accuracy`: the solved table on animal shogi, which
``jaxgames solve animal_shogi`` caches; the exact solver from ``--accuracy-empties`` on
reversi; value iteration on tic-tac-toe): ``accuracy.csv`` and an accuracy panel beside the
Elo figure.
"""

from __future__ import annotations

import json
import os
import sys
import time

import jax
import numpy as np

from jaxgames.agents.config import parse_overrides
from jaxgames.agents.presets import default_config
from jaxgames.agents.registry import algorithm_module
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.evaluation import accuracy as acc
from jaxgames.specs import check_spec, make_opponent, make_oracle, parse_spec, playable_rungs
from jaxgames.training import experiment as ex
from jaxgames.training.driver import run_training
from jaxgames.training.init_from import initial_params
from jaxgames.validation import check_float, check_int

QUICK_GAMES = ["tic_tac_toe", "reversi6"]
# fmt: off
#: env steps per seed of the full runs (3 seeds in one vmap, sized to the time budget); the
#: others train for the preset's ``total_steps``
FULL_STEPS = {
    ("reversi6", "ppo"): 6_000_000, ("reversi6", "dqn"): 3_000_000,
    ("reversi6", "alphazero"): 3_000_000, ("reversi8", "ppo"): 5_000_000,
    ("reversi8", "dqn"): 3_000_000, ("reversi8", "alphazero"): 2_000_000,
    ("animal_shogi", "ppo"): 2_500_000, ("animal_shogi", "dqn"): 2_000_000,
    ("animal_shogi", "alphazero"): 2_000_000,
}
#: overrides of the full runs (not with --quick or --total-steps; command-line ones win): the
#: reversi 6x6 PPO variant of the ablation in docs/results.md
FULL_OVERRIDES = {("reversi6", "ppo"): {
    "ent_coef": 0.1, "partners": {"random": 0.25, "greedy": 0.25, "alphabeta:2": 0.25}}}
#: the costliest rungs played at every evaluation (uct simulations, engine depth)
RUNG_LIMITS = {"uct": 300, "engine": 2}
#: score thresholds against held-out ladder rungs, weakest first (time to rating)
MILESTONES = {
    "tic_tac_toe": {"random": 0.9, "uct:300": 0.5, "perfect": 0.5},
    "default": {"random": 0.9, "engine:2": 0.5, "engine:4": 0.5},
}
# fmt: on


def milestones(game: str) -> dict[str, float]:
    return MILESTONES.get(game, MILESTONES["default"])


def curve_opponents(env, partners=()) -> list[str]:
    """random and the ladder's held-out rungs within :data:`RUNG_LIMITS`, weakest first."""
    ladder = ex.game_ladder(env)

    def cheap(text: str) -> bool:
        spec = parse_spec(text)
        return spec.kind not in RUNG_LIMITS or spec.args[0] <= RUNG_LIMITS[spec.kind]

    rungs = [r for r in (ladder.specs if ladder else []) if r != "random" and cheap(r)]
    rungs = playable_rungs(rungs, env)[0]  # perfect on animal shogi: once its table is cached
    return ["random"] + [r for r in rungs if r not in partners]


def opening_plies(env) -> int:
    """The ladder's random plies (a greedy network meets an engine in varied games); none for
    tic-tac-toe, whose milestones are about the game from its start."""
    ladder = ex.game_ladder(env)
    return 0 if env.name == "tic_tac_toe" or ladder is None else ladder.plies


def rating_ladder(env, plies: int, echo=print):
    """The game's ladder, to rate the curves' points on; None without one, or (saying so) when
    the games start from other than its random plies: its rungs' ratings hold for its own."""
    ladder = ex.game_ladder(env)
    if ladder is not None and plies != ladder.plies:
        echo(
            f"   no ladder Elo: the games start after {plies} random plies, the {ladder.game} "
            f"ladder's after {ladder.plies}"
        )
        return None
    return ladder


def make_config(key: str, algo: str, a):
    """The preset (quick, or the full run's steps and overrides), the command's overrides,
    about ``--evals`` chunks; an ``init_from`` agent checked before anything is written."""
    game, options = ex.parse_variant(key)
    full = not (a.quick or a.total_steps)
    cfg = default_config(algo, game, options, quick=a.quick, scale_envs=a.scale_envs)
    cfg = cfg.override({**(FULL_OVERRIDES.get((key, algo), {}) if full else {}), **a.overrides})
    steps = a.total_steps or (FULL_STEPS.get((key, algo)) if full else None)
    cfg = cfg.override({"total_steps": steps} if steps else {})
    cfg = ex.with_chunks(algo, cfg, a.evals)
    if cfg.init_from:
        initial_params(algorithm_module(algo).make_algorithm(cfg))
    return cfg


def plot_curves(rows, title: str, stem: str, game: str) -> list[str]:
    """Per opponent: win (solid), loss (dotted) and, with a milestone, score (dashed) and its
    threshold; against env steps (top) and training wall clock (bottom)."""
    plt, opponents = ex.pyplot(), list(dict.fromkeys(r["opponent"] for r in rows))
    n = len(opponents)
    fig, axes = plt.subplots(2, n, figsize=(3.2 * n + 0.6, 5.6), sharey=True, squeeze=False)
    for i, opp in enumerate(opponents):
        steps, secs, win = ex.curve_arrays(rows, opp, "win_rate_all")
        loss, score = (ex.curve_arrays(rows, opp, c)[2] for c in ("loss_rate_all", "score"))
        threshold = milestones(ex.parse_variant(game)[0]).get(opp)
        for ax, x in zip(axes[:, i], (steps, secs)):
            ex.plot_band(ax, x, win, "win", color="tab:blue")
            ex.plot_band(ax, x, loss, "loss", color="tab:red", style=":", alpha=0.12)
            if threshold is not None:
                ex.plot_band(ax, x, score, "score", color="tab:green", style="--")
                ax.axhline(threshold, ls="--", lw=0.8, color="gray", label=f"{threshold:.0%}")
            ax.set_ylim(-0.02, 1.02)
            ax.grid(alpha=0.3)
        axes[0, i].set_title(f"vs {opp}")
        axes[0, i].set_xlabel("env steps per seed", fontsize=8)
        axes[1, i].set_xlabel("training wall clock (s)", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    seeds = len({r["seed"] for r in rows})
    fig.suptitle(f"{title}: greedy policy, mean of {seeds} seeds, 95% band", fontsize=10)
    fig.tight_layout()
    return ex.save_figure(fig, stem)


def accuracy_judge(env, a, opponents):
    """``judge(agent, params, chunk) -> row``: one seed's move accuracy at a point
    (``--accuracy``), or ``None`` when off; the table is checked before anything is written."""
    if not a.accuracy:
        return None
    try:
        oracle = make_oracle(env, empties=a.accuracy_empties)
    except ValueError as e:
        raise ValueError(f"--accuracy: {e}") from None
    against = a.accuracy_against or opponents[-1]
    opponent = make_opponent(against, env)

    def judge(agent, params, chunk: int) -> dict:
        policy = agent.policy(params, greedy=True)
        out = acc.move_accuracy(
            policy,
            opponent,
            env,
            games=a.accuracy,
            opening_plies=opening_plies(env),
            seed=chunk,
            oracle=oracle,
        )
        distinct, out = out["distinct_games"], out["overall"]
        per_game = out["blunders_per_game"]
        share = float("nan") if out["share"] is None else out["share"]  # no move judged
        row = dict(
            against=against,
            distinct_games=distinct,
            moves=out["moves"],
            share=share,
            lo=out["lo"],
            hi=out["hi"],
            blunders=out["blunders"],
            blunders_per_game=per_game["mean"],
        )
        if "margin_lost" in out:
            row["margin_lost"] = out["margin_lost"]["mean"]
        return row

    return judge


def _chunk_seed(row: dict) -> tuple[int, int]:
    return int(row["chunk"]), int(row["seed"])


def _earlier_points(out: str, info: dict) -> tuple[list[dict], list[dict]]:
    """The curve and accuracy rows an earlier run into ``out`` wrote, of this run's seeds and
    opponents, and none if it evaluated with other games or openings."""
    path = f"{out}/experiment.json"
    if not os.path.exists(path):
        return [], []
    with open(path) as f:
        before = json.load(f)
    if any(before.get(k) != info[k] for k in ("eval_games", "opening_plies")):
        return [], []
    seeds, opponents = {str(s) for s in info["seeds"]}, set(info["opponents"])
    rows = ex.read_csv(f"{out}/curves.csv") if os.path.exists(f"{out}/curves.csv") else []
    acc = ex.read_csv(f"{out}/accuracy.csv") if os.path.exists(f"{out}/accuracy.csv") else []
    keep = [r for r in rows if r["seed"] in seeds and r["opponent"] in opponents]
    return keep, [r for r in acc if r["seed"] in seeds]


def run_one(key: str, algo: str, a, echo=print) -> dict:
    """Train and evaluate one (game, algorithm, variant) into ``<out>/<label>/``; its summary."""
    cfg = make_config(key, algo, a)
    label = f"{key}_{algo}" + (f"_{a.variant}" if a.variant else "")
    env, seeds, out = cfg.make_env(), list(range(a.seed, a.seed + a.seeds)), f"{a.out}/{label}"
    opponents = a.opponents or curve_opponents(env, cfg.partners)
    plies = opening_plies(env) if a.opening_plies is None else a.opening_plies
    judge = accuracy_judge(env, a, opponents)
    scale = {"scale-envs": a.scale_envs} if a.scale_envs else {}
    overrides = " ".join(f"--{k}={v}" for k, v in {**scale, **a.overrides}.items()) or "-"
    info = dict(game=key, algorithm=algo, variant=a.variant, overrides=overrides, seeds=seeds)
    info.update(opponents=opponents, eval_games=a.eval_games, opening_plies=plies)
    old_rows, old_acc = _earlier_points(out, info)  # a resumed run's points
    ex.prepare_out(out, {**info, "config": cfg.to_dict()}, "experiment.json")
    echo(f"== {label}: {len(seeds)} seeds x {cfg.total_steps:,} steps, opponents {opponents}")
    algorithm = algorithm_module(algo).make_algorithm(cfg)
    evaluate = {o: make_opponent(o, env) for o in opponents}
    for o, policy in evaluate.items():  # every seed against o, in one vmap
        evaluate[o] = ex.seed_evaluator(
            algorithm.agent, env, policy, a.eval_games, opening_plies=plies
        )
    rows = {(r["chunk"], r["seed"], r["opponent"]): r for r in old_rows}
    acc_rows = {(r["chunk"], r["seed"]): r for r in old_acc}
    clock = {"train": 0.0, "eval": 0.0}

    def write_points():  # after every point: a run killed and resumed keeps its curve
        ex.write_csv(f"{out}/curves.csv", sorted(rows.values(), key=_chunk_seed))
        if acc_rows:
            ex.write_csv(f"{out}/accuracy.csv", sorted(acc_rows.values(), key=_chunk_seed))

    def on_chunk(k, state, records):
        clock["train"] += records[0].get("chunk_seconds", 0.0)
        t0 = time.perf_counter()
        params = jax.vmap(algorithm.params)(state)
        keys = jax.numpy.stack([jax.random.fold_in(jax.random.PRNGKey(s), k) for s in seeds])
        results = {o: play(params, keys) for o, play in evaluate.items()}
        for r in ex.result_rows(k, seeds, results):
            rows[(str(k), str(r["seed"]), r["opponent"])] = r
        if judge is not None:
            for i, s in enumerate(seeds):
                row = judge(algorithm.agent, jax.tree.map(lambda x: x[i], params), k)
                acc_rows[(str(k), str(s))] = dict(chunk=k, seed=s, **row)
        clock["eval"] += time.perf_counter() - t0
        write_points()
        scores = ", ".join(f"{o} {np.mean([r.score for r in rs]):.2f}" for o, rs in results.items())
        echo(f"  [{label}] chunk {k}/{algorithm.num_chunks}: score {scores}")
        return bool(a.budget_minutes) and clock["train"] > 60 * a.budget_minutes

    run = run_training(algo, cfg, out, seeds=seeds, on_chunk=on_chunk, progress=False, echo=echo)
    # each point's training seconds: its chunks' own (seed 0's metrics: all seeds at once)
    seconds = np.cumsum([0.0] + [r["chunk_seconds"] for r in run.records[0]])
    rows = sorted(rows.values(), key=_chunk_seed)
    for r in rows:
        k = int(r["chunk"])
        r.update(env_steps=k * algorithm.steps_per_chunk, train_seconds=round(seconds[k], 3))
    ladder = rating_ladder(env, plies, echo)
    elos = ex.ladder_ratings(rows, ladder) if ladder is not None else []
    ex.write_csv(f"{out}/curves.csv", rows)
    ex.write_csv(f"{out}/elo.csv", elos)
    acc_rows = sorted(acc_rows.values(), key=_chunk_seed)
    for r in acc_rows:
        k = int(r["chunk"])
        r.update(env_steps=k * algorithm.steps_per_chunk, train_seconds=round(seconds[k], 3))
    if acc_rows:
        ex.write_csv(f"{out}/accuracy.csv", acc_rows)
    last = max(int(r["chunk"]) for r in rows)
    final, reached = {}, {}
    for o in opponents:
        sel = [r for r in rows if r["opponent"] == o and int(r["chunk"]) == last]
        final[o] = {c: ex.band([[float(r[c])] for r in sel]) for c in ("win_rate_all", "score")}
        final[o]["loss"] = float(np.mean([float(r["loss_rate_all"]) for r in sel]))
        if o in milestones(env.name):
            steps, secs, score = ex.curve_arrays(rows, o, "score")
            hit = np.flatnonzero(score.mean(0) >= milestones(env.name)[o])
            at = (float(steps[hit[0]]), float(secs[hit[0]])) if len(hit) else None
            reached[o] = dict(threshold=milestones(env.name)[o], at=at, best=score.mean(0).max())
    # a sweep's one-sided bound is no estimate: its seeds are counted apart, not averaged in
    last_rows = [r for r in elos if int(r["chunk"]) == last]
    last_elo = [[float(r["elo"])] for r in last_rows if not r["bound"]]
    summary = dict(info, label=label, partners=dict(cfg.partners), final=final, milestones=reached)
    summary.update(env_steps_per_seed=last * algorithm.steps_per_chunk, eval_seconds=clock["eval"])
    summary.update(train_seconds=float(seconds[last]), final_elo=last_elo and ex.band(last_elo))
    summary.update(final_elo_bounds=sum(1 for r in last_rows if r["bound"]))
    last_acc = [
        [float(r["share"])]
        for r in acc_rows
        if int(r["chunk"]) == last and r["share"] != "" and np.isfinite(float(r["share"]))
    ]
    summary.update(final_accuracy=last_acc and ex.band(last_acc))
    summary["run_dirs"] = [f"{out}/seed{s}" for s in seeds]
    ex.write_json(f"{out}/summary.json", summary)
    if not a.no_plot:
        plot_curves(rows, f"{algo.upper()} on {key}", f"{out}/learning_curves", key)
    echo(f"   wrote {out}/ (curves.csv, elo.csv, summary.json, figures, seed*/)")
    return summary


def plot_elo(out: str, game: str, runs: list[dict]) -> list[str]:
    """``<out>/<game>_elo.png/.pdf``: every run's ladder Elo against env steps and wall clock
    (seed mean, 95% band), the ladder's engine rungs as references; where runs measured it
    (``--accuracy``), their move accuracy against env steps beside."""
    accuracy = [s for s in runs if os.path.exists(f"{s['dir']}/accuracy.csv")]
    panels = 3 if accuracy else 2
    fig, axes = ex.pyplot().subplots(1, panels, figsize=(5.5 * panels, 4.2), squeeze=False)
    axes = axes[0]
    axes[1].sharey(axes[0])
    for s in runs:
        steps, secs, elo = ex.curve_arrays(ex.read_csv(f"{s['dir']}/elo.csv"), None, "elo")
        for ax, x in zip(axes, (steps, secs)):
            ex.plot_band(ax, x, elo, f"{s['label']} ({elo.shape[0]} seeds)")
    for spec, e in ex.game_ladder(ex.make_variant(game)).elos.items():
        for ax in axes[:2] if spec.startswith("engine:") else ():
            ax.axhline(e, ls="--", lw=0.7, color="gray")
            ax.text(1.0, e, spec, transform=ax.get_yaxis_transform(), fontsize=7, ha="right")
    for s in accuracy:
        rows = ex.read_csv(f"{s['dir']}/accuracy.csv")
        steps, _, share = ex.curve_arrays(rows, None, "share")
        ex.plot_band(axes[2], steps, share, f"{s['label']} vs {rows[0]['against']}")
    if accuracy:
        axes[2].set_xlabel("env steps per seed")
        axes[2].set_ylabel("moves that keep the game-theoretic value")
        axes[2].legend(fontsize=8)
    axes[0].set_xlabel("env steps per seed")
    axes[1].set_xlabel("training wall clock (s, all seeds at once)")
    axes[0].set_ylabel("Elo on the ladder (random = 0)")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{game}: greedy network vs held-out ladder rungs, seed mean, 95% band")
    fig.tight_layout()
    return ex.save_figure(fig, os.path.join(out, f"{game}_elo"))


def cell(band: dict | None, fmt: str = ".1%") -> str:
    if not band:
        return "-"
    if band["ci95"] is None:
        return f"{band['mean']:{fmt}} (one seed)"
    lo, hi = band["ci95"]
    return f"{band['mean']:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def write_index(out: str) -> str:
    """``summary.md`` (a row per run of ``out``, earlier invocations' too: a study's variants;
    then the milestones), each game's Elo figure and ``index.json``."""
    runs = []
    for name in sorted(os.listdir(out)):
        if os.path.exists(path := os.path.join(out, name, "summary.json")):
            with open(path) as f:
                runs.append({**json.load(f), "dir": os.path.join(out, name)})
    opps = list(dict.fromkeys(o for s in runs for o in s["final"]))
    lines = [
        "| game | algorithm | variant | seeds | env steps per seed | training | Elo | accuracy | "
        + "".join(f"vs {o}: win (loss) | " for o in opps).rstrip(),
        "|---|---|---|---|---|---|---|---|" + "---|" * len(opps),
    ]
    for s in runs:
        f = s["final"]
        cells = [
            f"{cell(f[o]['win_rate_all'])} ({f[o]['loss']:.1%})" + " partner" * (o in s["partners"])
            if o in f
            else "-"
            for o in opps
        ]
        lines.append(
            f"| {s['game']} | {s['algorithm']} | {s['variant'] or '-'} `{s['overrides']}` | "
            f"{len(s['seeds'])} | {s['env_steps_per_seed']:,} | {s['train_seconds'] / 60:.1f} "
            f"min | {cell(s['final_elo'], '.0f')} | {cell(s.get('final_accuracy'))} | "
            + " | ".join(cells)
            + " |"
        )
    lines += ["", "| run | milestone: score | reached at | best |", "|---|---|---|---|"]
    for s in runs:
        for o, m in s["milestones"].items():
            at = f"{m['at'][0]:,.0f} steps, {m['at'][1]:.0f} s" if m["at"] else "not reached"
            lines.append(f"| {s['label']} | {m['threshold']:.0%} vs {o} | {at} | {m['best']:.0%} |")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for game in dict.fromkeys(s["game"] for s in runs if s["final_elo"]):
        plot_elo(out, game, [s for s in runs if s["game"] == game and s["final_elo"]])
    return ex.write_json(os.path.join(out, "index.json"), dict(runs=runs))


def parse_args(argv=None):
    p = ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", help=f"default: {' '.join(ex.variant_keys())}")
    p.add_argument("--algos", nargs="+", default=["ppo", "dqn", "alphazero"])
    p.add_argument("--seeds", type=int, default=3, help="number of seeds (trained in one vmap)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--evals", type=int, default=8, help="evaluation points (about)")
    p.add_argument(
        "--eval-games", type=int, default=200, help="per opponent and seed (even: both colours)"
    )
    p.add_argument("--total-steps", type=int, default=None, help="env steps per seed")
    p.add_argument("--opponents", nargs="+", help="default: random and the cheap held-out rungs")
    p.add_argument("--opening-plies", type=int, default=None, help="default: the ladder's")
    p.add_argument("--budget-minutes", type=float, default=15.0, help="training cap (0: none)")
    p.add_argument(
        "--accuracy",
        type=int,
        default=0,
        metavar="N",
        help="openings per point for the move accuracy vs perfect play (0: off)",
    )
    p.add_argument("--accuracy-against", help="the accuracy games' opponent (default: strongest)")
    p.add_argument("--accuracy-empties", type=int, help="reversi: judged from E empty squares")
    p.add_argument(
        "--scale-envs", type=int, metavar="N", help="N games at once by the batch-scaling rule"
    )
    p.add_argument("--variant", default="", help="a name for the overrides (folder suffix)")
    p.add_argument("--out", default="runs/learning_curves")
    p.add_argument("--quick", action="store_true", help="quick presets, 4 points x 64 games")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--replot", nargs="+", metavar="DIR", help="only redraw these folders' figures")
    a, extra = p.parse_known_args(argv)
    a.overrides = parse_overrides(extra)  # --field=value, as for jaxgames train
    a.games = a.games or (QUICK_GAMES if a.quick else ex.variant_keys())
    if a.total_steps is not None:
        check_int("--total-steps", a.total_steps)
    check_int("--evals", a.evals)
    check_float("--budget-minutes", a.budget_minutes, 0.0, float("inf"))
    if a.quick:
        a.evals, a.eval_games = min(a.evals, 4), min(a.eval_games, 64)
    if a.seeds < 1 or a.eval_games < 1 or (a.opening_plies or 0) < 0 or a.accuracy < 0:
        p.error(
            "--seeds and --eval-games must be at least 1, --opening-plies and --accuracy at least 0"
        )
    if a.eval_games % 2:  # each opening is played once with each colour
        raise ValueError(f"--eval-games must be even (half per colour), got {a.eval_games}")
    return a


def main(argv=None) -> list[dict]:
    a = parse_args(argv)
    for d in a.replot or []:
        with open(os.path.join(d, "experiment.json")) as f:
            info = json.load(f)
        rows, game = ex.read_csv(f"{d}/curves.csv"), ex.parse_variant(info["game"])[0]
        plot_curves(
            rows, f"{info['algorithm'].upper()} on {info['game']}", f"{d}/learning_curves", game
        )
    if a.replot:
        return []
    for key in a.games:
        ex.make_variant(key)  # ValueError for an unknown game before anything runs
    for key in a.games:  # and for an override that one of the configs refuses, or an
        for algo in a.algos:  # opponent that does not play the game
            env = make_config(key, algo, a).make_env()
            for o in a.opponents or ():
                check_spec(o, env)
    ex.check_experiment_out(a.out)
    summaries = []
    for key in a.games:
        for algo in a.algos:
            summaries.append(run_one(key, algo, a))
            write_index(a.out)
    return summaries


if __name__ == "__main__":
    sys.exit(report_errors(main))
