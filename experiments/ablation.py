"""Ablations: one (game, algorithm) trained under several config variants, same seeds, same
yardstick, one table.

    PYTHONPATH=$PWD python experiments/ablation.py            # the study below (33 min)
    PYTHONPATH=$PWD python experiments/ablation.py --variants preset ent_0.1
    PYTHONPATH=$PWD python experiments/ablation.py --quick    # seconds per variant

The built-in study (``STUDIES["reversi6_vs_random"]``) asks why the reversi 6x6 agents stop near
98% against *random* while beating greedy and alphabeta:2 almost always: does more training,
a bigger network, a larger random-partner share, a different entropy bonus, dropping the
greedy/alphabeta:2 partners or more DQN gradient steps move the win rate against random? Every
variant is a learning-curves run (:func:`experiments.learning_curves.run_one`) with its ``--set``
overrides, evaluated with the same greedy-policy arena (``--eval-games`` per seed, half per
colour).

Writes ``<out>/<variant>/`` (each a learning-curves folder: curves.csv, summary.json, figures)
and ``<out>/ablation.md`` + ``ablation.csv``: per variant the final win / draw / loss rates per
colour against each opponent and the training time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments import learning_curves  # noqa: E402
from experiments.common import add_overrides_argument, read_csv, write_csv  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402

PARTNERS_RANDOM_QUARTER = "partners={'random': 0.25, 'greedy': 0.25, 'alphabeta:2': 0.25}"

#: study name -> (game, env steps per seed, {variant: (algorithm, [KEY=VALUE overrides])});
#: a ``total_steps=N`` override trains that variant longer than the study's default
STUDIES: dict[str, tuple[str, int, dict[str, tuple[str, list[str]]]]] = {
    "reversi6_vs_random": (
        "reversi:6",
        3_000_000,
        {
            "ppo_preset": ("ppo", []),
            "ppo_6M_steps": ("ppo", ["total_steps=6000000"]),
            "ppo_random_share_0.25": ("ppo", [PARTNERS_RANDOM_QUARTER]),
            "ppo_random_share_0.25_hidden_512": (
                "ppo",
                [PARTNERS_RANDOM_QUARTER, "net={'hidden': 512, 'layers': 3}"],
            ),
            "ppo_random_share_0.25_ent_0.005": ("ppo", [PARTNERS_RANDOM_QUARTER, "ent_coef=0.005"]),
            "ppo_random_share_0.25_ent_0.1": ("ppo", [PARTNERS_RANDOM_QUARTER, "ent_coef=0.1"]),
            "ppo_ent_0.1": ("ppo", ["ent_coef=0.1"]),
            # the three single changes that reached 98% in one run, together (the 6x6 PPO learning
            # curves use this configuration: learning_curves.FULL_OVERRIDES)
            "ppo_6M_random_share_0.25_ent_0.1": (
                "ppo",
                ["total_steps=6000000", PARTNERS_RANDOM_QUARTER, "ent_coef=0.1"],
            ),
            # do the greedy / alphabeta:2 partners cost robustness against random?
            "ppo_partners_random_only_0.5": ("ppo", ["partners={'random': 0.5}"]),
            "dqn_preset": ("dqn", []),
            "dqn_2_gradient_steps": ("dqn", ["gradient_steps=2"]),
        },
    ),
}


def parse_args(argv=None):
    """Command-line arguments, with the chosen study's game, variants and step count attached."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--study", default="reversi6_vs_random", choices=sorted(STUDIES))
    p.add_argument(
        "--variants",
        nargs="+",
        default=None,
        help="a subset of the study's variants (default: all)",
    )
    p.add_argument("--seeds", type=int, default=1, help="seeds per variant (trained in one vmap)")
    p.add_argument("--seed", type=int, default=0, help="first seed")
    p.add_argument("--evals", type=int, default=3, help="evaluation points during training")
    p.add_argument(
        "--eval-games", type=int, default=2000, help="games per opponent and seed (half per colour)"
    )
    p.add_argument("--opponents", nargs="+", default=["random"])
    add_overrides_argument(
        p,
        "config overrides added to every variant (after its own), e.g. net.hidden=64",
        dest="common_overrides",
    )
    p.add_argument("--out", default=None, help="default runs/ablation/<study>")
    p.add_argument(
        "--quick", action="store_true", help="the algorithms' quick presets, 20k steps, 64 games"
    )
    a = p.parse_args(argv)
    game, steps, variants = STUDIES[a.study]
    unknown = sorted(set(a.variants or []) - set(variants))
    if unknown:
        p.error(f"unknown variant(s) {unknown} of study {a.study!r}; valid: {sorted(variants)}")
    a.game = game
    a.variant_sets = {v: variants[v] for v in (a.variants or variants)}
    a.steps = 20_000 if a.quick else steps
    if a.quick:
        a.eval_games, a.evals = min(a.eval_games, 64), min(a.evals, 2)
    a.out = a.out or os.path.join("runs", "ablation", a.study)
    return a


def run_variant(a, variant: str, algo: str, overrides: list[str]) -> dict:
    """One learning-curves run of ``variant`` into ``<out>/<variant>/``; its summary dict."""
    argv = [
        "--games",
        a.game,
        "--algos",
        algo,
        "--seeds",
        str(a.seeds),
        "--seed",
        str(a.seed),
        "--evals",
        str(a.evals),
        "--eval-games",
        str(a.eval_games),
        "--total-steps",
        str(a.steps),
        "--budget-minutes",
        "0",
        "--no-save-runs",
        "--out",
        os.path.join(a.out, variant),
        "--opponents",
        *a.opponents,
    ]
    argv += ["--quick"] if a.quick else []
    extra = [*overrides, *a.common_overrides]
    argv += ["--set", *extra] if extra else []
    lc = learning_curves.parse_args(argv)
    overridden = dict(lc.overrides)
    if "total_steps" in overridden:  # a variant may train longer than the study's default
        steps = int(overridden.pop("total_steps"))
        lc.total_steps = a.steps if a.quick else steps
        lc.overrides = list(overridden.items())
    return learning_curves.run_one(a.game, lc.algos[0], lc)


def final_rows(a, variant: str, overrides: list[str], summary: dict) -> list[dict]:
    """Per opponent: the final evaluation's W/D/L rates per colour (summed over seeds)."""
    rows = read_csv(
        os.path.join(a.out, variant, f"{summary['label']}_{summary['algorithm']}", "curves.csv")
    )
    last = max(int(r["chunk"]) for r in rows)
    out = []
    for opp in a.opponents:
        sel = [r for r in rows if int(r["chunk"]) == last and r["opponent"] == opp]
        row = dict(
            variant=variant,
            algorithm=summary["algorithm"],
            overrides="; ".join(overrides) or "-",
            opponent=opp,
            env_steps=summary["env_steps_per_seed"],
            seeds=len(summary["seeds"]),
            train_minutes=round(summary["train_seconds"] / 60, 2),
        )
        for side in ("first", "second"):
            games = sum(
                int(r[f"win_{side}"]) + int(r[f"draw_{side}"]) + int(r[f"loss_{side}"]) for r in sel
            )
            for what in ("win", "draw", "loss"):
                row[f"{what}_rate_{side}"] = sum(int(r[f"{what}_{side}"]) for r in sel) / max(
                    games, 1
                )
            row[f"games_{side}"] = games
        out.append(row)
    return out


_INT_FIELDS = ("env_steps", "seeds", "games_first", "games_second")


def earlier_rows(a) -> list[dict]:
    """Rows of ``<out>/ablation.csv`` from earlier invocations, except the variants about to be
    rerun (so ``--variants X`` adds or refreshes X's rows and keeps the others)."""
    path = os.path.join(a.out, "ablation.csv")
    if not os.path.exists(path):
        return []
    rows = []
    for r in read_csv(path):
        if r["variant"] in a.variant_sets:
            continue
        rows.append(
            {
                k: int(v)
                if k in _INT_FIELDS
                else float(v)
                if k.endswith("rate_first") or k.endswith("rate_second") or k == "train_minutes"
                else v
                for k, v in r.items()
            }
        )
    return rows


def ordered(a, rows: list[dict]) -> list[dict]:
    """Rows in the study's variant order (unknown variants last), opponents in the given order."""
    order = list(STUDIES[a.study][2])
    return sorted(
        rows, key=lambda r: order.index(r["variant"]) if r["variant"] in order else len(order)
    )


def write_table(a, rows: list[dict]) -> str:
    """``<out>/ablation.md``: one markdown row per (variant, opponent) of ``rows``. Returns its
    path."""
    lines = [
        f"# Ablation {a.study}: {a.game}, greedy policy, final evaluation of each variant",
        "",
        "| variant | algorithm | overrides | opponent | env steps | seeds | games per colour | "
        "win as 1st | win as 2nd | loss (both) | training |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        loss = (
            r["loss_rate_first"] * r["games_first"] + r["loss_rate_second"] * r["games_second"]
        ) / max(r["games_first"] + r["games_second"], 1)
        lines.append(
            f"| {r['variant']} | {r['algorithm']} | `{r['overrides']}` | {r['opponent']} | "
            f"{r['env_steps']:,} | {r['seeds']} | {r['games_first']} | {r['win_rate_first']:.1%} | "
            f"{r['win_rate_second']:.1%} | {loss:.1%} | {r['train_minutes']:.1f} min |"
        )
    path = os.path.join(a.out, "ablation.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main(argv=None) -> list[dict]:
    """Run the study's (chosen) variants in order; returns the rows of this invocation (dicts).
    The table keeps the rows of variants run earlier into the same ``--out``."""
    a = parse_args(argv)
    t0, kept, rows = time.time(), earlier_rows(a), []
    for variant, (algo, overrides) in a.variant_sets.items():
        summary = run_variant(a, variant, algo, overrides)
        rows += final_rows(a, variant, overrides, summary)
        table = ordered(a, kept + rows)
        write_csv(os.path.join(a.out, "ablation.csv"), table)
        path = write_table(
            a, table
        )  # rewritten after every variant: an interrupted study keeps its rows
    print(open(path).read())
    print(f"wrote {path} and ablation.csv ({time.time() - t0:.0f}s)")
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
