"""Every figure and table of the results, one command: throughput, learning curves, the
strength table (+ Elo), the AlphaZero targets (the shipped agents and the learning curves'
tic-tac-toe AlphaZero), the reference articles and the tic-tac-toe baselines, in that order.

    PYTHONPATH=$PWD python experiments/reproduce.py            # full: about 2 hours on a 2-core CPU
    PYTHONPATH=$PWD python experiments/reproduce.py --quick    # every script's --quick mode
    PYTHONPATH=$PWD python experiments/reproduce.py --only learning_curves strength_table

Each step is the script's own ``main`` (same arguments as on its command line) writing its
usual ``runs/<experiment>/`` folder; the strength table rates the agents the learning curves
just trained (``runs/learning_curves/index.json``). A failing step is reported and the next
one still runs. Writes ``<out>/timings.json`` and ``<out>/timings.md`` (wall clock per step,
machine, jax version, exit status), so the "2 hours" claim can be checked on any machine.

``--publish DIR`` (default ``docs/results`` for a full run) then copies the figures and tables
the README embeds (runs/ is not tracked by git): learning curves, the strength table and its
figure, the Elo plots, the throughput plot, the reference-article report and the timings.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments.common import prepare_out, write_json  # noqa: E402
from jaxgames.cli import report_errors  # noqa: E402

#: (step, module, arguments of the full run); --quick appends "--quick" (and quick outputs)
STEPS = [
    (
        "throughput",
        "benchmark_throughput",
        [
            "--games",
            "reversi:8",
            "reversi:6",
            "animal_shogi",
            "tic_tac_toe",
            "--batch-sizes",
            "1",
            "16",
            "256",
            "1024",
            "4096",
            "16384",
            "--steps",
            "100",
            "--repeats",
            "2",
        ],
    ),
    ("learning_curves", "learning_curves", []),
    ("strength_table", "strength_table", ["--from", "runs/learning_curves"]),
    # the AlphaZero targets: the shipped agents, and tic-tac-toe's AlphaZero from learning_curves
    (
        "strength_targets",
        "strength_targets",
        ["--agent", "tic_tac_toe=runs/learning_curves/tic_tac_toe_alphazero/seed0"],
    ),
    ("reference_articles", "reference_articles", []),
    ("value_iteration", "value_iteration_tictactoe", []),
    ("tabular_q", "tabular_q_tictactoe", []),
]
STEP_NAMES = [s[0] for s in STEPS]


def arguments(step: str, argv: list[str], quick: bool) -> list[str]:
    """The step's argv; quick runs write to ``runs/quick/<experiment>`` so they never mix with
    (or overwrite) the full results."""
    if not quick:
        return list(argv)
    out = os.path.join("runs", "quick", step)
    if step == "throughput":
        return ["--quick", "--out", out]
    curves = os.path.join("runs", "quick", "learning_curves")
    if step == "strength_table":
        return ["--quick", "--from", curves, "--out", out]
    if step == "strength_targets":
        ttt = os.path.join(curves, "tic_tac_toe_alphazero", "seed0")
        return ["--quick", "--agent", f"tic_tac_toe={ttt}", "--out", out]
    return ["--quick", "--out", out]


def publish(dest: str, runs: str = "runs") -> list[str]:
    """Copy the README's figures and tables from ``runs`` into ``dest`` (flat names such as
    ``learning_curves_reversi6x6_ppo.png``). Missing inputs are skipped. Returns the copies."""
    wanted = [
        ("throughput/throughput.png", "throughput.png"),
        ("strength_table/table.md", "strength_table.md"),
        ("strength_table/strength.png", "strength.png"),
        ("strength_targets/table.md", "strength_targets.md"),
        ("reference_articles/report.md", "reference_articles.md"),
        ("reproduce/timings.md", "timings.md"),
        ("learning_curves/summary.md", "learning_curves_summary.md"),
        # not a reproduce step (a 33-minute study), published when it has been run
        ("ablation/reversi6_vs_random/ablation.md", "ablation_reversi6_vs_random.md"),
    ]
    wanted += [
        (os.path.relpath(f, runs), f"learning_curves_{os.path.basename(os.path.dirname(f))}.png")
        for f in sorted(
            glob.glob(os.path.join(runs, "learning_curves", "*", "learning_curves.png"))
        )
    ]
    wanted += [
        (os.path.relpath(f, runs), f"learning_curves_{os.path.basename(f)}")
        for f in sorted(glob.glob(os.path.join(runs, "learning_curves", "*_elo.png")))
    ]
    wanted += [
        (os.path.relpath(f, runs), os.path.basename(f))
        for f in sorted(glob.glob(os.path.join(runs, "strength_table", "elo_*.png")))
    ]
    os.makedirs(dest, exist_ok=True)
    copied = []
    for src, name in wanted:
        path = os.path.join(runs, src)
        if os.path.exists(path):
            shutil.copyfile(path, os.path.join(dest, name))
            copied.append(os.path.join(dest, name))
    print(f"published {len(copied)} files to {dest}/")
    return copied


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--quick", action="store_true", help="each script's --quick mode, outputs under runs/quick/"
    )
    p.add_argument(
        "--only", nargs="+", choices=STEP_NAMES, default=None, help="run only these steps"
    )
    p.add_argument(
        "--out",
        default=None,
        help="where timings go (default runs/reproduce or runs/quick/reproduce)",
    )
    p.add_argument(
        "--publish",
        default=None,
        metavar="DIR",
        help="copy the README's figures/tables there afterwards "
        "(default: docs/results for a full run of every step; 'none' to skip)",
    )
    a = p.parse_args(argv)
    out = a.out or os.path.join("runs", "quick" if a.quick else "", "reproduce")
    prepare_out(out, dict(script="reproduce.py", quick=a.quick, only=a.only))
    timings = []
    t_all = time.time()
    for step, module, full_args in STEPS:
        if a.only and step not in a.only:
            continue
        args = arguments(step, full_args, a.quick)
        print(f"\n######## {step}: python experiments/{module}.py {' '.join(args)}", flush=True)
        t0 = time.time()
        status = "ok"
        try:
            __import__(f"experiments.{module}", fromlist=["main"]).main(args)
        except (Exception, SystemExit) as e:  # keep going: one broken step must not hide the others
            status = f"failed: {type(e).__name__}: {e}"
            traceback.print_exc()
        timings.append(
            dict(
                step=step,
                command=f"python experiments/{module}.py {' '.join(args)}",
                seconds=round(time.time() - t0, 1),
                status=status,
            )
        )
        write_json(
            os.path.join(out, "timings.json"),
            dict(steps=timings, total_seconds=round(time.time() - t_all, 1)),
        )
    total = time.time() - t_all
    lines = [
        f"# Reproduction timings ({'quick' if a.quick else 'full'})",
        "",
        "| step | command | wall clock | status |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t['step']} | `{t['command']}` | {t['seconds'] / 60:.1f} min | {t['status']} |"
        for t in timings
    ]
    lines += ["", f"Total: {total / 60:.1f} min.", ""]
    with open(os.path.join(out, "timings.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    dest = a.publish or ("docs/results" if not a.quick and not a.only else "none")
    if dest != "none":
        publish(dest, "runs" if not a.quick else os.path.join("runs", "quick"))
    failed = [t["step"] for t in timings if t["status"] != "ok"]
    if failed:
        raise SystemExit(f"steps failed: {', '.join(failed)} (see above); timings in {out}/")
    return dict(steps=timings, total_seconds=total)


if __name__ == "__main__":
    sys.exit(report_errors(main))
