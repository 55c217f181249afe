"""Reference articles revisited: our numbers beside the four small projects jaxgames grew from
(their numbers as reported; see the summaries in the project notes).

    python experiments/reference_articles.py            # every part, the articles' budgets
    python experiments/reference_articles.py --quick    # minutes
    python experiments/reference_articles.py --parts othello6_dqn --othello-games 40000

Parts (each trains within its budget argument and ``--budget-minutes`` of training wall clock,
through the library's run driver: ``<out>/<part>/seed<s>/`` are run directories; ``--field=value``
overrides the trained parts' configs):

* ``tabular_q``        tabular Q-learning vs random on tic-tac-toe (Godot article: ~80% wins
                       after 10,000 games, plateau just under 90% at 20-30k) -- runs
                       ``experiments/tabular_q_tictactoe.py`` in a subprocess (``--ttt-games``).
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

Writes ``<out>/``: ``report.md`` (the side-by-side table), ``results.csv`` (experiment, quantity,
article, ours, note), ``details.json``, ``config.json`` and one folder per part.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import jax
import numpy as np

from jaxgames.agents.config import parse_overrides
from jaxgames.agents.presets import default_config
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.evaluation.elo import wilson_interval
from jaxgames.evaluation.match import arena
from jaxgames.specs import check_spec, make_opponent
from jaxgames.training.driver import run_training
from jaxgames.training.experiment import (
    parse_variant,
    prepare_out,
    seed_evaluator,
    with_chunks,
    write_csv,
    write_json,
)
from jaxgames.validation import check_int, check_seed

PARTS = ["tabular_q", "othello6_dqn", "shogi_winner_imitation", "reversi8_ppo"]
YARDSTICKS = ["random", "greedy", "alphabeta:2"]
#: the articles trained by pure self-play, so their parts here do too (our presets add training
#: partners for reversi; experiments/learning_curves.py shows those agents)
SELF_PLAY_ONLY = {"partners": {}}
#: the trained parts: algorithm, game and their own overrides (the command's win)
TRAINED = {
    "othello6_dqn": ("dqn", "reversi6", SELF_PLAY_ONLY),
    "shogi_winner_imitation": ("winner_imitation", "animal_shogi", {}),
    "reversi8_ppo": ("ppo", "reversi8", SELF_PLAY_ONLY),
}
#: average plies of a 6x6 othello game (to turn the article's game count into a ply budget)
OTHELLO6_PLIES = 32


def fmt_rate(k: float, n: int) -> str:
    """``"97.3% [96.1%, 98.2%]"``: a rate with its 95% Wilson interval."""
    lo, hi = wilson_interval(k, n) if n else (float("nan"),) * 2
    return f"{k / max(n, 1):.1%} [{lo:.1%}, {hi:.1%}]"


def row(experiment: str, quantity: str, article: str, ours: str, note: str = "") -> dict:
    return dict(experiment=experiment, quantity=quantity, article=article, ours=ours, note=note)


def part_config(name: str, a, total_steps=None):
    """A trained part's config: its preset, its overrides, the command's, its budget."""
    algo, game, overrides = TRAINED[name]
    cfg = default_config(algo, *parse_variant(game), quick=a.quick)
    cfg = cfg.override({**overrides, **a.overrides})
    cfg = cfg.override({"total_steps": int(total_steps)} if total_steps else {})
    return with_chunks(algo, cfg, a.evals)


def train_part(name: str, total_steps, a, out: str):
    """One part's seeds trained in one vmap (``<out>/seed<s>/``, at most ``--budget-minutes``),
    then every seed's greedy network against the yardsticks: (run summary, the part's info
    with its W/D/L per yardstick and colour, summed over the seeds)."""
    algo = TRAINED[name][0]
    cfg = part_config(name, a, total_steps)
    env, seeds = cfg.make_env(), list(range(a.seed, a.seed + a.seeds))
    prepare_out(out, dict(part=name, seeds=seeds, config=cfg.to_dict()), "experiment.json")
    print(f"== {name}: {algo}, {len(seeds)} seed(s) x {cfg.total_steps:,} steps")
    trained = [0.0]  # the chunks' own seconds: compilation and evaluation are not training

    def over_budget(k, state, records):
        trained[0] += records[0].get("chunk_seconds", 0.0)
        return bool(a.budget_minutes) and trained[0] > 60 * a.budget_minutes

    run = run_training(algo, cfg, out, seeds=seeds, on_chunk=over_budget, progress=False)
    params = jax.vmap(run.algorithm.params)(run.state)
    keys = jax.numpy.stack([jax.random.PRNGKey(s) for s in seeds])
    final = {}
    for o in a.opponents or YARDSTICKS:
        evaluate = seed_evaluator(run.algorithm.agent, env, make_opponent(o, env), a.eval_games)
        results = evaluate(params, keys)
        final[o] = {
            side: {w: sum(getattr(getattr(r, side), w) for r in results) for w in WDL}
            for side in ("as_first", "as_second", "overall")
        }
    records = run.records[0]
    info = dict(
        env_steps_per_seed=records[-1]["env_steps"] if records else 0,
        train_seconds=sum(r["chunk_seconds"] for r in records),
        run_dirs=[f"{out}/seed{s}" for s in seeds],
        final=final,
        budget_stopped=not run.completed,
    )
    return run, info


WDL = ("wins", "draws", "losses", "games")


def yardstick_rows(experiment: str, final: dict, article: str) -> list[dict]:
    rows = []
    for o, f in final.items():
        a, first, second = f["overall"], f["as_first"], f["as_second"]
        rows.append(
            row(
                experiment,
                f"greedy net vs {o}: win / loss (both colours)",
                article,
                f"win {fmt_rate(a['wins'], a['games'])}, loss {a['losses'] / a['games']:.1%}",
                f"as 1st {first['wins'] / first['games']:.1%}, as 2nd "
                f"{second['wins'] / second['games']:.1%}; {a['games']} games",
            )
        )
        article = ""  # the article's statement goes on the first row only
    return rows


def trained(info: dict, seeds: int) -> str:
    return f"train {info['train_seconds']:.0f} s, {seeds} seed(s)"


def part_tabular_q(a, out):
    games = a.ttt_games if a.ttt_games is not None else (6000 if a.quick else 40_000)
    seeds = max(a.seeds, 2 if a.quick else 5)
    argv = ["--out", out, "--seed", str(a.seed), "--seeds", str(seeds), "--games", str(games)]
    if a.quick:  # tabular_q_tictactoe.py's own quick settings, with this game budget
        argv += ["--points", "6", "--eval-games", "500", "--envs", "128"]
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tabular_q_tictactoe.py")
    subprocess.run([sys.executable, script, *argv], check=True)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)

    def cell(x):
        if not x:
            return "not reached (budget)"
        lo, hi = x["ci95"]
        return f"{x['greedy_win']:.1%} [{lo:.1%}, {hi:.1%}] at {x['games']:,.0f} games"

    exp, note = "tabular Q, tic-tac-toe", "greedy table, colours alternate; mean over seeds"
    final = f"{s['final_x_win']:.1%} / {s['final_o_win']:.1%} ({cell(s.get('final'))})"
    clock = f"run {s['run_s']:.1f} s + compile {s['compile_s']:.1f} s (all seeds at once)"
    rows = [
        row(exp, "win rate vs random after 10,000 games", "~80%", cell(s.get("at_10k")), note),
        row(
            exp,
            "plateau (20-30k games)",
            "just under 90%",
            cell(s.get("at_30k") or s.get("at_20k")),
        ),
        row(exp, "final, as X / as O", "-", final, clock),
    ]
    return rows, dict(summary=s)


def part_othello6_dqn(a, out):
    games = a.othello_games or (1500 if a.quick else 40_000)
    steps = games * OTHELLO6_PLIES
    run, info = train_part("othello6_dqn", steps, a, out)
    played = [r[-1].get("train/games_total", float("nan")) for r in run.records if r]
    info["selfplay_games_per_seed"] = float(np.mean(played)) if played else float("nan")
    exp = "6x6 othello DQN"
    note = f"{info['env_steps_per_seed']:,} plies per seed, {trained(info, a.seeds)}"
    rows = [row(exp, "self-play games", "40,000", f"{info['selfplay_games_per_seed']:,.0f}", note)]
    return rows + yardstick_rows(exp, info["final"], "'wins some, loses some' vs a human"), info


def part_shogi(a, out):
    games = a.shogi_games or (1024 if a.quick else 2**17)
    plies = default_config("winner_imitation", "animal_shogi", quick=a.quick).max_plies
    run, info = train_part("shogi_winner_imitation", games * plies, a, out)
    legal = np.array([[r["train/legal_rate"] for r in recs] for recs in run.records])
    legal_first, legal_final = float(legal[:, 0].mean()), float(legal[:, -1].mean())
    # the article's second number: the trained net against the untrained one, both sampling
    n_vs = a.vs_init_games or (512 if a.quick else 2**14)
    agent, env = run.algorithm.agent, run.algorithm.env
    wins = draws = total = 0
    for j in range(len(run.seeds)):
        state = jax.tree_util.tree_map(lambda x: x[j], run.state)
        mine, untrained = (agent.policy(p, greedy=False) for p in (state.params, state.init_params))
        r = arena(mine, untrained, env, n_vs, jax.random.PRNGKey(77 + j)).overall
        wins, draws, total = wins + r.wins, draws + r.draws, total + r.games
    played = info["env_steps_per_seed"] // plies
    info.update(legal_rate_final=legal_final, legal_rate_first_chunk=legal_first)
    info.update(vs_init=dict(wins=wins, draws=draws, games=total), selfplay_games_per_seed=played)
    exp = "animal shogi winner imitation"
    legal_note = (
        f"argmax of the unmasked policy on self-play positions; first chunk {legal_first:.1%}"
    )
    rows = [
        row(exp, "self-play games", "2^17 = 131,072", f"{played:,}", trained(info, a.seeds)),
        row(exp, "raw net plays a legal move", "98.7%", f"{legal_final:.1%}", legal_note),
        row(exp, "wins vs the untrained net (sampling)", "53% (2^14 games)", fmt_rate(wins, total),
            f"{total} games, both colours; draws {draws / total:.1%}"),
    ]  # fmt: skip
    return rows + yardstick_rows(exp, info["final"], "-"), info


def part_reversi8(a, out):
    steps = a.reversi8_steps or (100_000 if a.quick else None)
    run, info = train_part("reversi8_ppo", steps, a, out)
    exp, plies = "8x8 reversi PPO", f"{info['env_steps_per_seed']:,}"
    rows = [row(exp, "self-play plies", "(not stated)", plies, trained(info, a.seeds))]
    article = "lost to a beginner; barely beat the weakest app level"
    return rows + yardstick_rows(exp, info["final"], article), info


RUNNERS = {
    "tabular_q": part_tabular_q,
    "othello6_dqn": part_othello6_dqn,
    "shogi_winner_imitation": part_shogi,
    "reversi8_ppo": part_reversi8,
}


def main(argv=None) -> list[dict]:
    p = ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", nargs="+", default=PARTS, choices=PARTS)
    p.add_argument("--seeds", type=int, default=1, help="seeds per part (trained at once)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ttt-games", type=int, help="tabular Q games per seed (default 40,000)")
    p.add_argument("--othello-games", type=int, help="6x6 DQN self-play games (default 40,000)")
    p.add_argument("--shogi-games", type=int, help="winner-imitation games (default 2^17)")
    p.add_argument("--vs-init-games", type=int, help="games vs the untrained net (default 2^14)")
    p.add_argument("--reversi8-steps", type=int, help="8x8 PPO plies (default: the preset's)")
    p.add_argument("--evals", type=int, default=4, help="chunks of each training")
    p.add_argument("--eval-games", type=int, default=1000, help="per yardstick and seed")
    p.add_argument("--opponents", nargs="+", help="other yardsticks (tests)")
    p.add_argument("--budget-minutes", type=float, default=15.0, help="per part (0: none)")
    p.add_argument("--out", default="runs/reference_articles")
    p.add_argument("--quick", action="store_true", help="small budgets (not the articles')")
    a, extra = p.parse_known_args(argv)
    a.overrides = parse_overrides(extra)  # --field=value for the trained parts
    check_int("--seeds", a.seeds)
    check_seed("--seed", a.seed)
    check_int("--evals", a.evals)
    check_int("--eval-games", a.eval_games)
    for flag in ("ttt_games", "othello_games", "shogi_games", "vs_init_games", "reversi8_steps"):
        if getattr(a, flag) is not None:
            check_int(f"--{flag.replace('_', '-')}", getattr(a, flag))
    if a.quick:
        a.eval_games, a.evals = min(a.eval_games, 100), min(a.evals, 2)
    for part in a.parts:  # an override a trained part refuses, or a yardstick that does not
        if part in TRAINED:  # play its game: before anything is written
            env = part_config(part, a).make_env()
            for o in a.opponents or ():
                check_spec(o, env)
    prepare_out(a.out, dict(script="reference_articles.py", **vars(a)))
    rows, details = [], {}
    for part in a.parts:
        t0 = time.time()
        r, details[part] = RUNNERS[part](a, os.path.join(a.out, part))
        details[part]["seconds"] = time.time() - t0
        rows += r
        write_csv(os.path.join(a.out, "results.csv"), rows)
        write_json(os.path.join(a.out, "details.json"), details)
    lines = [
        "# Reference articles revisited",
        "",
        f"Mode: {'quick (smoke-test budgets, NOT the articles budgets)' if a.quick else 'full'}; "
        f"{a.seeds} seed(s) per part; yardsticks: {a.eval_games} games per seed and opponent "
        "(half per colour), greedy nets. Their numbers as reported; ours from this run.",
        "",
        "| experiment | quantity | article | jaxgames | note |",
        "|---|---|---|---|---|",
        *(
            f"| {r['experiment']} | {r['quantity']} | {r['article']} | {r['ours']} | {r['note']} |"
            for r in rows
        ),
        "",
        "Wall clock per part (training, compilation, evaluation): "
        + ", ".join(f"{k} {v['seconds']:.0f} s" for k, v in details.items()),
    ]
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
