"""Reference articles revisited: our numbers beside the five small projects jaxgames grew from
(their numbers as reported; see the summaries in the project notes).

    # every part, article-sized budgets
    PYTHONPATH=$PWD python experiments/reference_articles.py
    # minutes
    PYTHONPATH=$PWD python experiments/reference_articles.py --quick
    PYTHONPATH=$PWD python experiments/reference_articles.py --parts othello6_dqn \\
        --othello-games 40000

Parts (each trains within its budget argument and ``--budget-minutes`` of training wall clock):

* ``tabular_q``        tabular Q-learning vs random on tic-tac-toe (Godot article: ~80% wins
                       after 10,000 games, plateau just under 90% at 20-30k) -- runs
                       ``experiments/tabular_q_tictactoe.py`` (``--ttt-games``).
* ``othello6_dqn``     6x6 othello, DQN self-play with the article's n-step 16, epsilon
                       1.0 -> 0.1 over 5,000 games, one network for both colours, pure
                       self-play as in the article (no training partners), 40,000 games
                       (``--othello-games``); the article: "wins some, loses some" vs a human.
                       Ours: greedy net vs random / greedy / alphabeta:2.
* ``shogi_winner_imitation``  animal shogi, winner imitation from random openings (the
                       article: 2^17 games; 98.7% legal moves from the raw net, 53% wins vs the
                       untrained net over 2^14 games). Ours: the same two numbers (sampling
                       policies, as in the article) + greedy net vs random / greedy / alphabeta:2.
* ``reversi8_ppo``     8x8 reversi, pure PPO self-play (Unity ML-Agents article: lost to its author,
                       a beginner, and barely beat the weakest level of a free app). Ours: greedy
                       net vs random / greedy / alphabeta:2 (``--reversi8-steps``).

Writes ``<out>/``: ``report.md`` (the side-by-side table and per-part details), ``results.csv``
(experiment, quantity, article, ours, note), ``config.json``, and one sub-folder per part
(curves.csv, summary.json and the seed run directories, as learning_curves.py writes them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from experiments.common import (  # noqa: E402
    add_overrides_argument,
    fmt_rate,
    make_config,
    parse_set_args,
    prepare_out,
    save_seed_runs,
    train_seeds,
    with_eval_points,
    write_csv,
    write_json,
)
from jaxgames.cli import report_errors  # noqa: E402

PARTS = ["tabular_q", "othello6_dqn", "shogi_winner_imitation", "reversi8_ppo"]
YARDSTICKS = ["random", "greedy", "alphabeta:2"]
#: the articles trained by pure self-play, so their parts here do too (our presets add training
#: partners for reversi; experiments/learning_curves.py shows those agents)
SELF_PLAY_ONLY = {"partners": {}}
#: average plies of a 6x6 othello game (to turn the article's game count into a ply budget)
OTHELLO6_PLIES = 32


def final_yardsticks(res, opponents) -> dict[str, dict]:
    """Final win/draw/loss counts (summed over seeds, both colours) per opponent from
    :func:`train_seeds` rows."""
    last = [r for r in res.rows if r["chunk"] == res.num_chunks]
    out = {}
    for o in opponents:
        sel = [r for r in last if r["opponent"] == o]
        out[o] = {
            k: int(sum(r[k] for r in sel))
            for k in ("win_all", "draw_all", "loss_all", "win_first", "win_second")
        }
        out[o]["games"] = out[o]["win_all"] + out[o]["draw_all"] + out[o]["loss_all"]
        out[o]["games_first"] = int(
            sum(r["win_first"] + r["draw_first"] + r["loss_first"] for r in sel)
        )
        out[o]["games_second"] = int(
            sum(r["win_second"] + r["draw_second"] + r["loss_second"] for r in sel)
        )
    return out


def yardstick_rows(exp: str, finals: dict, article: str) -> list[dict]:
    rows = []
    for o, f in finals.items():
        rows.append(
            dict(
                experiment=exp,
                quantity=f"greedy net vs {o}: win / loss (both colours)",
                article=article,
                ours=f"win {fmt_rate(f['win_all'], f['games'])}, "
                f"loss {f['loss_all'] / max(f['games'], 1):.1%}",
                note=f"as 1st {f['win_first'] / max(f['games_first'], 1):.1%}, "
                f"as 2nd {f['win_second'] / max(f['games_second'], 1):.1%}; {f['games']} games",
            )
        )
        article = ""  # the article's statement goes on the first row only
    return rows


def train_part(
    name: str,
    algo: str,
    game: str,
    options: dict,
    total_steps: int | None,
    a,
    out: str,
    overrides: dict | None = None,
):
    """Seed-vmapped training + yardstick evaluation for one part (written to ``out``)."""
    from jaxgames.specs import make_opponent

    cfg = make_config(algo, game, options, a.quick, {**(overrides or {}), **dict(a.overrides)})
    if total_steps:
        cfg = cfg.override({"total_steps": int(total_steps)})
    cfg = with_eval_points(algo, cfg, a.evals)
    env = cfg.make_env()
    opps = a.opponents or YARDSTICKS
    seeds = list(range(a.seed, a.seed + a.seeds))
    prepare_out(
        out,
        dict(
            script="reference_articles.py",
            part=name,
            algorithm=algo,
            seeds=seeds,
            opponents=opps,
            eval_games=a.eval_games,
            quick=a.quick,
            algorithm_config=cfg.to_dict(),
        ),
    )
    print(
        f"== {name}: {algo} on {game} {options or ''}, "
        f"{len(seeds)} seed(s) x {cfg.total_steps:,} steps"
    )
    res = train_seeds(
        algo,
        cfg,
        seeds,
        {o: make_opponent(o, env) for o in opps},
        a.eval_games,
        eval_at_start=False,
        time_budget_s=a.budget_minutes * 60 if a.budget_minutes else None,
    )
    write_csv(os.path.join(out, "curves.csv"), res.rows)
    run_dirs = save_seed_runs(res, out)
    finals = final_yardsticks(res, opps)
    info = dict(
        env_steps_per_seed=res.num_chunks * res.steps_per_chunk,
        compile_seconds=res.compile_seconds,
        train_seconds=res.train_seconds,
        eval_seconds=res.eval_seconds,
        run_dirs=run_dirs,
        final=finals,
        budget_stopped=bool(a.budget_minutes and res.train_seconds > a.budget_minutes * 60),
    )
    return res, cfg, env, finals, info


def part_tabular_q(a, out):
    from experiments import tabular_q_tictactoe

    games = a.ttt_games or (6000 if a.quick else 40_000)
    argv = [
        "--out",
        out,
        "--seed",
        str(a.seed),
        "--seeds",
        str(max(a.seeds, 2 if a.quick else 5)),
        "--games",
        str(games),
    ]
    if a.quick:  # tabular_q_tictactoe.py's own quick settings, but with our game budget
        argv += ["--points", "6", "--eval-games", "500", "--envs", "128"]
    tabular_q_tictactoe.main(argv)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)

    def cell(x):
        if not x:
            return "not reached (budget)"
        return (
            f"{x['greedy_win']:.1%} [{x['ci95'][0]:.1%}, {x['ci95'][1]:.1%}] "
            f"at {x['games']:,.0f} games"
        )

    rows = [
        dict(
            experiment="tabular Q, tic-tac-toe",
            quantity="win rate vs random after 10,000 games",
            article="~80%",
            ours=cell(s.get("at_10k")),
            note="greedy table, colours alternate; mean over seeds",
        ),
        dict(
            experiment="tabular Q, tic-tac-toe",
            quantity="plateau (20-30k games)",
            article="just under 90%",
            ours=cell(s.get("at_30k") or s.get("at_20k")),
            note="",
        ),
        dict(
            experiment="tabular Q, tic-tac-toe",
            quantity="final, as X / as O",
            article="-",
            ours=f"{s['final_x_win']:.1%} / {s['final_o_win']:.1%} ({cell(s.get('final'))})",
            note=f"run {s['run_s']:.1f}s + compile {s['compile_s']:.1f}s (all seeds at once); "
            "a perfect player gets ~96.8% / ~78.1%",
        ),
    ]
    return rows, dict(summary=s)


def part_othello6_dqn(a, out):
    games = a.othello_games or (1500 if a.quick else 40_000)
    res, cfg, env, finals, info = train_part(
        "othello6_dqn",
        "dqn",
        "reversi",
        {"size": 6},
        games * OTHELLO6_PLIES,
        a,
        out,
        SELF_PLAY_ONLY,
    )
    played = (
        float(np.mean(res.metrics["games_total"][-1]))
        if "games_total" in res.metrics
        else float("nan")
    )
    info["selfplay_games_per_seed"] = played
    rows = [
        dict(
            experiment="6x6 othello DQN",
            quantity="self-play games",
            article="40,000",
            ours=f"{played:,.0f}",
            note=f"{info['env_steps_per_seed']:,} plies per seed, train {res.train_seconds:.0f}s "
            f"(+{res.compile_seconds:.0f}s compile), {len(res.seeds)} seed(s)",
        )
    ]
    rows += yardstick_rows("6x6 othello DQN", finals, "'wins some, loses some' vs a human")
    return rows, info


def part_shogi(a, out):
    from jaxgames.evaluation import arena

    games = a.shogi_games or (1024 if a.quick else 2**17)
    wi_cfg = make_config("winner_imitation", "animal_shogi", {}, a.quick)
    res, cfg, env, finals, info = train_part(
        "shogi_winner_imitation",
        "winner_imitation",
        "animal_shogi",
        {},
        games * wi_cfg.max_plies,
        a,
        out,
    )
    legal = res.metrics.get("legal_rate")
    legal_final = float(np.mean(legal[-1])) if legal is not None else float("nan")
    legal_first = float(np.mean(legal[0])) if legal is not None else float("nan")
    # the article's second number: the trained net against the untrained one, both sampling
    n_vs = a.vs_init_games or (512 if a.quick else 2**14)
    algo_agent = res.state  # leading axis: seeds
    from jaxgames.agents import algorithm_module

    agent = algorithm_module("winner_imitation").make_algorithm(cfg).agent
    wins = draws = total = 0
    for j in range(len(res.seeds)):
        params = jax.tree_util.tree_map(lambda x: x[j], algo_agent.params)
        init_params = jax.tree_util.tree_map(lambda x: x[j], algo_agent.init_params)
        r = arena(
            agent.policy(params, greedy=False),
            agent.policy(init_params, greedy=False),
            env,
            n_vs,
            jax.random.PRNGKey(77 + j),
        )
        wins, draws, total = wins + r.overall.wins, draws + r.overall.draws, total + r.overall.games
    played = res.num_chunks * cfg.updates_per_chunk * cfg.num_envs
    info.update(
        legal_rate_final=legal_final,
        legal_rate_first_chunk=legal_first,
        vs_init=dict(wins=wins, draws=draws, games=total),
        selfplay_games_per_seed=played,
    )
    rows = [
        dict(
            experiment="animal shogi winner imitation",
            quantity="self-play games",
            article="2^17 = 131,072",
            ours=f"{played:,}",
            note=f"train {res.train_seconds:.0f}s (+{res.compile_seconds:.0f}s compile)",
        ),
        dict(
            experiment="animal shogi winner imitation",
            quantity="raw net plays a legal move",
            article="98.7%",
            ours=f"{legal_final:.1%}",
            note=f"argmax of the unmasked policy on self-play positions; "
            f"{legal_first:.1%} in the first chunk",
        ),
        dict(
            experiment="animal shogi winner imitation",
            quantity="wins vs the untrained net (sampling)",
            article="53% (2^14 games)",
            ours=fmt_rate(wins, total),
            note=f"{total} games, both colours; draws {draws / max(total, 1):.1%}",
        ),
    ]
    rows += yardstick_rows("animal shogi winner imitation", finals, "-")
    return rows, info


def part_reversi8(a, out):
    steps = a.reversi8_steps or (100_000 if a.quick else None)
    res, cfg, env, finals, info = train_part(
        "reversi8_ppo", "ppo", "reversi", {"size": 8}, steps, a, out, SELF_PLAY_ONLY
    )
    rows = [
        dict(
            experiment="8x8 reversi PPO",
            quantity="self-play plies",
            article="(not stated)",
            ours=f"{info['env_steps_per_seed']:,}",
            note=f"train {res.train_seconds:.0f}s (+{res.compile_seconds:.0f}s "
            f"compile), {len(res.seeds)} seed(s)",
        )
    ]
    rows += yardstick_rows(
        "8x8 reversi PPO", finals, "lost to a beginner; barely beat the weakest app level"
    )
    return rows, info


RUNNERS = {
    "tabular_q": part_tabular_q,
    "othello6_dqn": part_othello6_dqn,
    "shogi_winner_imitation": part_shogi,
    "reversi8_ppo": part_reversi8,
}


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", nargs="+", default=PARTS, choices=PARTS)
    p.add_argument("--seeds", type=int, default=1, help="seeds per part (trained at once)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--ttt-games", type=int, default=None, help="tabular Q games per seed (default 40,000)"
    )
    p.add_argument(
        "--othello-games", type=int, default=None, help="6x6 DQN self-play games (default 40,000)"
    )
    p.add_argument(
        "--shogi-games", type=int, default=None, help="winner-imitation games (default 2^17)"
    )
    p.add_argument(
        "--vs-init-games", type=int, default=None, help="games vs the untrained net (default 2^14)"
    )
    p.add_argument(
        "--reversi8-steps",
        type=int,
        default=None,
        help="8x8 PPO plies (default: PPO's reversi default)",
    )
    p.add_argument("--evals", type=int, default=4, help="evaluation points during each training")
    p.add_argument(
        "--eval-games", type=int, default=1000, help="games per opponent and seed (half per colour)"
    )
    p.add_argument(
        "--opponents", nargs="+", default=None, help="override the yardsticks (tests only)"
    )
    p.add_argument(
        "--budget-minutes",
        type=float,
        default=15.0,
        help="training wall-clock cap per part (0: none)",
    )
    add_overrides_argument(
        p, "config overrides for every trained part (not tabular_q), e.g. net.hidden=8"
    )
    p.add_argument("--out", default="runs/reference_articles")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    a.overrides = parse_set_args(p, a.overrides)
    if a.quick:
        a.eval_games, a.evals = min(a.eval_games, 100), min(a.evals, 2)
    prepare_out(a.out, dict(script="reference_articles.py", **vars(a)))
    rows, details, times = [], {}, {}
    for part in a.parts:
        t0 = time.time()
        r, info = RUNNERS[part](a, os.path.join(a.out, part))
        times[part] = time.time() - t0
        info["seconds"] = times[part]
        rows += r
        details[part] = info
        write_csv(os.path.join(a.out, "results.csv"), rows)
        write_json(os.path.join(a.out, "details.json"), details)
    lines = [
        "# Reference articles revisited",
        "",
        f"Mode: {'quick (smoke-test budgets: NOT the articles budgets)' if a.quick else 'full'}; "
        f"{a.seeds} seed(s) per part; yardstick evaluations: {a.eval_games} games per seed "
        "and opponent (half per colour), greedy nets. Their numbers as reported; ours from "
        "this run.",
        "",
        "| experiment | quantity | article | jaxgames | note |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['experiment']} | {r['quantity']} | {r['article']} | {r['ours']} | {r['note']} |"
        for r in rows
    ]
    lines += [
        "",
        "Wall clock per part (training + compile + evaluation): "
        + ", ".join(f"{k} {v:.0f}s" for k, v in times.items()),
        "",
    ]
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {a.out}/report.md, results.csv, details.json")
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
