"""XLA CPU compiler settings: compile time against run time of jaxgames' programs, side by side.

    python experiments/compile_flags.py --out runs/compile_flags
    python experiments/compile_flags.py --quick        # the steps program, default vs test-suite

Most tests run small programs once, so the test suite's time is XLA compile time (see
``tests/profile_report.py``); training runs one program for minutes, so there run time is what
counts. This script measures both for each setting:

- ``default``: XLA as installed;
- ``no-fusion-emitters``: ``--xla_cpu_use_fusion_emitters=false`` (XLA's older CPU code
  generator for fused element-wise loops instead of the MLIR fusion emitters);
- ``few-optimizations``: ``JAX_DISABLE_MOST_OPTIMIZATIONS=1`` (backend optimisation level 0);
- ``test-suite``: both (what ``tests/conftest.py`` sets).

Programs: ``ppo`` and ``alphazero`` are one training chunk of the quick preset on reversi 6x6
(one update), ``steps`` is 100 plies of 1024 random games of reversi 8x8 with auto-reset
(``jaxgames.training.experiment.random_plies``, as ``benchmark_throughput.py`` plays them).
XLA reads its flags once per process, so every setting runs in its own subprocess; in it each
program is lowered and compiled (timed: ``compile_s``), run once to warm up, then timed over
``--repeats`` calls (median: ``run_s``). Every setting is also compared with ``default`` on the
programs' outputs (``max_abs_diff`` over all output leaves: 0 = bit-identical, ~1e-7 = float
rounding).

The measured table: docs/workflow.md, "Running the tests".

Prints a table and writes ``<out>/compile_flags.csv`` and ``<out>/config.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from jaxgames.cli import ArgumentParser, report_errors

#: setting -> (extra XLA_FLAGS, extra environment)
SETTINGS = {
    "default": ("", {}),
    "no-fusion-emitters": ("--xla_cpu_use_fusion_emitters=false", {}),
    "few-optimizations": ("", {"JAX_DISABLE_MOST_OPTIMIZATIONS": "1"}),
    "test-suite": (
        "--xla_cpu_use_fusion_emitters=false",
        {"JAX_DISABLE_MOST_OPTIMIZATIONS": "1"},
    ),
}
PROGRAMS = ("ppo", "alphazero", "steps")


# ----------------------------------------------------------------------------- child side
def build(program: str):
    """(jitted function, its arguments) for one program."""
    import jax

    import jaxgames
    from jaxgames.agents.registry import algorithm_module

    if program == "steps":
        from jaxgames.training.experiment import random_plies

        run = random_plies(jaxgames.make("reversi", size=8), 1024, 100)
        return run, (jax.random.PRNGKey(0),)
    module = algorithm_module(program)
    config = module.default_config("reversi", {"size": 6}, quick=True)
    algo = module.make_algorithm(config.override({"updates_per_chunk": 1}))
    return jax.jit(algo.chunk), (algo.init(jax.random.PRNGKey(0)),)


def child(programs: list[str], repeats: int, outputs: str) -> None:
    import jax
    import numpy as np

    rows, leaves = [], {}
    for program in programs:
        fn, args = build(program)
        start = time.perf_counter()
        compiled = fn.lower(*args).compile()
        compile_s = time.perf_counter() - start
        out = jax.block_until_ready(compiled(*args))
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            jax.block_until_ready(compiled(*args))
            times.append(time.perf_counter() - start)
        rows.append(
            {
                "program": program,
                "compile_s": compile_s,
                "run_s": statistics.median(times),
                "xla_flags": os.environ.get("XLA_FLAGS", ""),
                "few_optimizations": os.environ.get("JAX_DISABLE_MOST_OPTIMIZATIONS") == "1",
            }
        )
        for i, leaf in enumerate(jax.tree_util.tree_leaves(out)):
            leaves[f"{program}/{i}"] = np.asarray(leaf)
    np.savez(outputs, **leaves)
    print(json.dumps(rows))


# ----------------------------------------------------------------------------- parent side
def run_setting(setting: str, programs: list[str], repeats: int, outputs: str) -> list[dict]:
    flags, extra = SETTINGS[setting]
    # the settings' own switches are dropped from the environment (the test suite sets both),
    # other XLA flags pass through
    env = {k: v for k, v in os.environ.items() if k != "JAX_DISABLE_MOST_OPTIMIZATIONS"}
    env.update(extra, JAXGAMES_COMPILE_CACHE="0")
    inherited = [f for f in os.environ.get("XLA_FLAGS", "").split() if "fusion_emitters" not in f]
    env["XLA_FLAGS"] = " ".join(inherited + flags.split())
    cmd = [sys.executable, os.path.abspath(__file__), "--child", outputs, "--repeats", str(repeats)]
    done = subprocess.run(
        cmd + ["--programs", *programs], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"setting {setting!r} failed: {last}")
    return [dict(r, setting=setting) for r in json.loads(done.stdout.strip().splitlines()[-1])]


def max_abs_diff(a, b, program: str) -> float:
    """Largest |a - b| over ``program``'s output leaves; a, b: loaded ``.npz`` outputs."""
    import numpy as np

    keys = [k for k in a.files if k.startswith(program + "/")]
    diffs = [
        float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64)), initial=0.0))
        for k in keys
    ]
    return max(diffs, default=0.0)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", nargs="+", choices=PROGRAMS, default=list(PROGRAMS))
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None)
    parser.add_argument("--quick", action="store_true", help="steps only, default vs test-suite")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.programs, args.repeats, args.child)
        return []
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.quick:
        args.programs, args.settings = ["steps"], ["default", "test-suite"]
    settings = ["default"] + [s for s in args.settings if s != "default"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = {s: os.path.join(tmp, f"{s}.npz") for s in settings}
        for s in settings:
            rows += run_setting(s, args.programs, args.repeats, paths[s])
        import numpy as np

        outputs = {s: np.load(path) for s, path in paths.items()}  # each file read once
        for r in rows:
            r["max_abs_diff"] = max_abs_diff(
                outputs["default"], outputs[r["setting"]], r["program"]
            )
    print(f"{'program':10} {'setting':20} {'compile s':>10} {'run s':>10} {'max |diff|':>11}")
    for r in sorted(
        rows, key=lambda r: (PROGRAMS.index(r["program"]), settings.index(r["setting"]))
    ):
        print(
            f"{r['program']:10} {r['setting']:20} {r['compile_s']:10.2f} {r['run_s']:10.4f}"
            f" {r['max_abs_diff']:11.3g}"
        )
    if args.out:
        from jaxgames.training.experiment import prepare_out, write_csv

        prepare_out(args.out, vars(args))
        write_csv(os.path.join(args.out, "compile_flags.csv"), rows)
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
