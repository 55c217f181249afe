"""Every figure and table of the results in one command: environment throughput, the learning
curves, the reference articles and the tic-tac-toe baselines, in that order.

    python experiments/reproduce.py            # full: every script's full run
    python experiments/reproduce.py --quick    # every script's --quick mode, under runs/quick/
    python experiments/reproduce.py --only learning_curves reference_articles

Each step runs a script in its own process (``python experiments/<script> ...``, the same
arguments as on its command line) writing its usual ``runs/<experiment>/`` folder. A failing
step is reported and the next one still runs. Writes ``<out>/timings.json`` and
``<out>/timings.md`` (wall clock per step, machine, jax version, exit status).

``--publish DIR`` (default ``docs/results`` for a full run of every step) then copies what the
docs link to (runs/ is not tracked by git): the learning-curve and Elo figures, the throughput
figure and the reference-article report.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import time

from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.runs.outputs import check_output_path
from jaxgames.training.experiment import prepare_out, write_json

#: where the scripts are
HERE = os.path.dirname(os.path.abspath(__file__))
#: (step, script, arguments of the full run); --quick runs ``--quick --out runs/quick/<step>``
STEPS = [
    (
        "throughput",
        "benchmark_throughput.py",
        [
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
    ("learning_curves", "learning_curves.py", []),
    ("reference_articles", "reference_articles.py", []),
    ("value_iteration", "value_iteration_tictactoe.py", []),
    ("tabular_q", "tabular_q_tictactoe.py", []),
]


def publish(dest: str, runs: str = "runs") -> list[str]:
    """Copy what the docs link to from ``runs`` into ``dest`` (flat names such as
    ``learning_curves_reversi6_ppo.png``); missing inputs are skipped. Returns the copies."""
    wanted = [
        ("throughput/throughput.png", "throughput.png"),
        ("reference_articles/report.md", "reference_articles.md"),
        ("ablation/summary.md", "ablation_reversi6_vs_random.md"),  # not a step: when it was run
    ]
    for path in sorted(
        glob.glob(os.path.join(runs, "learning_curves", "*", "learning_curves.png"))
    ):
        run = os.path.basename(os.path.dirname(path))
        wanted.append((os.path.relpath(path, runs), f"learning_curves_{run}.png"))
    for path in sorted(glob.glob(os.path.join(runs, "learning_curves", "*_elo.png"))):
        wanted.append((os.path.relpath(path, runs), f"learning_curves_{os.path.basename(path)}"))
    os.makedirs(dest, exist_ok=True)
    copied = []
    for src, name in wanted:
        if os.path.exists(os.path.join(runs, src)):
            shutil.copyfile(os.path.join(runs, src), os.path.join(dest, name))
            copied.append(os.path.join(dest, name))
    print(f"published {len(copied)} files to {dest}/")
    return copied


def main(argv=None) -> dict:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="each script's --quick mode")
    p.add_argument("--only", nargs="+", choices=[s[0] for s in STEPS], help="only these steps")
    p.add_argument("--out", help="where timings go (default runs/reproduce, runs/quick/reproduce)")
    p.add_argument(
        "--publish",
        metavar="DIR",
        help="default: docs/results for a full run of every step; 'none' to skip",
    )
    a = p.parse_args(argv)
    root = os.path.join("runs", "quick") if a.quick else "runs"
    out = a.out or os.path.join(root, "reproduce")
    dest = a.publish or ("docs/results" if not a.quick and not a.only else "none")
    if dest != "none":  # a folder the copies can go to, checked before hours of runs
        check_output_path(dest, "--publish", folder=True)
    prepare_out(out, dict(script="reproduce.py", quick=a.quick, only=a.only))
    timings, t_all = [], time.time()
    for step, script, full_args in STEPS:
        if a.only and step not in a.only:
            continue
        args = ["--quick", "--out", os.path.join(root, step)] if a.quick else full_args
        command = [sys.executable, os.path.join(HERE, script), *args]
        shown = f"python experiments/{script} {' '.join(args)}".strip()
        print(f"\n######## {step}: {shown}", flush=True)
        t0 = time.time()
        code = subprocess.run(command).returncode
        status = "ok" if code == 0 else f"failed: exit code {code}"
        timings.append(
            dict(step=step, command=shown, seconds=round(time.time() - t0, 1), status=status)
        )
        total = round(time.time() - t_all, 1)
        write_json(os.path.join(out, "timings.json"), dict(steps=timings, total_seconds=total))
    lines = [
        f"# Reproduction timings ({'quick' if a.quick else 'full'})",
        "",
        "| step | command | wall clock | status |",
        "|---|---|---|---|",
        *(
            f"| {t['step']} | `{t['command']}` | {t['seconds'] / 60:.1f} min | {t['status']} |"
            for t in timings
        ),
        "",
        f"Total: {(time.time() - t_all) / 60:.1f} min.",
    ]
    with open(os.path.join(out, "timings.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if dest != "none":
        publish(dest, root)
    failed = [t["step"] for t in timings if t["status"] != "ok"]
    if failed:
        raise SystemExit(f"steps failed: {', '.join(failed)} (see above); timings in {out}/")
    return dict(steps=timings, total_seconds=time.time() - t_all)


if __name__ == "__main__":
    sys.exit(report_errors(main))
