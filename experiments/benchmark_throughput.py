"""Environment throughput: random legal play with auto-reset, jaxgames vs pgx side by side.

For every game and batch size, ``--steps`` plies of ``batch`` games run inside ONE jitted
``lax.scan`` (policy -> ``step_autoreset`` -> next state). The first call (compile + run) is timed
separately from a second, measured call; the clock stops after ``block_until_ready``.
steps/s = batch * steps / measured seconds. pgx runs the same loop with the same policy through
an auto-reset written like ``jaxgames.step_autoreset`` when it has the game and is installed.

    python experiments/benchmark_throughput.py --games reversi8 reversi6 animal_shogi \\
        tic_tac_toe --batch-sizes 1 4 16 64 256 1024 4096 16384 --steps 200 --out runs/throughput
    python experiments/benchmark_throughput.py --quick   # a small grid
    python experiments/benchmark_throughput.py --devices 1 2 4 --no-pgx \\
        --games reversi8 tic_tac_toe --batch-sizes 1024 16384 --out runs/throughput_devices

Writes ``<out>/throughput.csv`` (game, impl, batch, steps_per_s, compile_s, seconds, steps),
``<out>/throughput.png`` / ``.pdf`` (log-log steps/s vs batch) and ``<out>/config.json``, and
prints a table with the jaxgames/pgx ratio.

Devices axis (``--devices 1 2 4``): each count runs in its own subprocess with the batch of
games split over a ``jaxgames.distributed`` mesh of that many devices (the first n of
``jax.devices()``; on CPU the subprocess gets
``XLA_FLAGS=--xla_force_host_platform_device_count=n``, i.e. n CPU "devices" sharing the
machine's cores). The CSV gains a ``devices`` column, ``scaling.csv`` and the printed table give
scaling efficiency = steps/s(n) / (n * steps/s(1)) per game, impl and batch (1.0 = linear).

The policy and the auto-reset are the same for both libraries and cheap on purpose (they are
not what is measured): each game plays a uniformly random legal action, drawn from a
murmur3-mixed hash of (seed, step, game) and found with a running count over the mask;
finished games are replaced by ``init(key)`` with a select, exactly like
``jaxgames.step_autoreset``. ``jaxgames.random_action`` (Gumbel over threefry bits) or a
threefry key split per game and step would each cost more than a reversi step.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Callable

import jax
import jax.numpy as jnp

import jaxgames
from jaxgames import distributed
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.training import experiment as ex
from jaxgames.training.experiment import parse_variant, random_plies, random_rollout
from jaxgames.validation import check_int

#: jaxgames game name -> (pgx env id, the jaxgames options it corresponds to)
PGX_EQUIVALENT = {
    "reversi": ("othello", {"size": 8}),
    "animal_shogi": ("animal_shogi", {}),
    "tic_tac_toe": ("tic_tac_toe", {}),
}
DEFAULT_GAMES = ["reversi8", "reversi6", "animal_shogi", "tic_tac_toe"]
DEFAULT_BATCHES = [1, 4, 16, 64, 256, 1024, 4096, 16384]
QUICK_BATCHES = [64, 4096]


def jaxgames_rollout(env, batch: int, steps: int, mesh=None) -> Callable:
    """:func:`~jaxgames.training.experiment.random_plies`: a jaxgames env, ``step_autoreset``."""
    return random_plies(env, batch, steps, mesh)


def pgx_rollout(
    env_id: str, batch: int, steps: int, native_autoreset: bool = False, mesh=None
) -> Callable:
    """:func:`~jaxgames.training.experiment.random_rollout` for ``pgx.make(env_id)``. By default the
    auto-reset is written exactly like :func:`jaxgames.step_autoreset` (step, then select a
    fresh ``init(key)`` where done); ``native_autoreset`` uses ``pgx.experimental.auto_reset``
    instead (it also splits a key per game and step, and is slower)."""
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(env_id)
    native = auto_reset(env.step, env.init)

    def step(state, action, key):
        if native_autoreset:
            nxt = native(state, action, key)
            return nxt, nxt.terminated | nxt.truncated
        nxt = env.step(state, action)
        done = nxt.terminated | nxt.truncated
        fresh = env.init(key)
        return jax.tree_util.tree_map(lambda f, n: jnp.where(done, f, n), fresh, nxt), done

    return random_rollout(env.init, step, batch, steps, mesh)


def measure(fn: Callable, seed: int, repeats: int = 3) -> tuple[float, float, int]:
    """(compile_s incl. the first run, best measured run seconds over ``repeats`` runs with
    fresh seeds, games finished in that run). Best-of-N because other processes add noise."""
    t0 = time.perf_counter()
    jax.block_until_ready(fn(jax.random.PRNGKey(seed)))
    compile_s = time.perf_counter() - t0
    best, done = float("inf"), 0
    for r in range(repeats):
        t0 = time.perf_counter()
        out = jax.block_until_ready(fn(jax.random.PRNGKey(seed + 1 + r)))
        if time.perf_counter() - t0 < best:
            best, done = time.perf_counter() - t0, int(out)
    return compile_s, best, done


def plot(rows: list[dict], out: str) -> None:
    """Log-log steps/s vs batch, one line per (game, impl); PNG + PDF under ``out``."""
    fig, ax = ex.pyplot().subplots(figsize=(7, 4.5))
    series = sorted({(r["game"], r["impl"], r.get("devices", 1)) for r in rows})
    colors = {g: f"C{i}" for i, g in enumerate(sorted({g for g, _, _ in series}))}
    many = len({d for _, _, d in series}) > 1
    markers = "os^Dvx*"
    for game, impl, dev in series:
        pts = sorted(
            (r["batch"], r["steps_per_s"])
            for r in rows
            if (r["game"], r["impl"], r.get("devices", 1)) == (game, impl, dev)
        )
        ax.plot(
            *zip(*pts),
            marker=markers[dev % len(markers)] if many else "o",
            color=colors[game],
            linestyle="-" if impl == "jaxgames" else "--",
            label=f"{game} ({impl}{f', {dev} dev' if many else ''})",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size (games in parallel)")
    ax.set_ylabel("steps / second")
    ax.set_title(f"Random play with auto-reset ({jax.default_backend()})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    ex.save_figure(fig, os.path.join(out, "throughput"))


def main(argv: list[str] | None = None) -> list[dict]:
    """Run the benchmark; returns the CSV rows (dicts)."""
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--games",
        nargs="+",
        default=DEFAULT_GAMES,
        help="games by their variant keys, e.g. reversi6",
    )
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=DEFAULT_BATCHES)
    ap.add_argument("--steps", type=int, default=200, help="plies per measured run (one lax.scan)")
    ap.add_argument("--out", default="runs/throughput")
    ap.add_argument("--no-pgx", action="store_true", help="skip pgx even if installed")
    ap.add_argument(
        "--pgx-native-autoreset",
        action="store_true",
        help="use pgx.experimental.auto_reset for pgx "
        "(default: the same select-based reset as jaxgames)",
    )
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument(
        "--quick", action="store_true", help=f"batches {QUICK_BATCHES}, 50 steps, 2 repeats"
    )
    ap.add_argument(
        "--repeats", type=int, default=3, help="measured runs per point; the best is kept"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--devices",
        nargs="+",
        type=int,
        default=None,
        help="device counts to compare (one subprocess each; forced host devices on CPU), "
        "e.g. 1 2 4",
    )
    ap.add_argument("--child-devices", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    for b in args.batch_sizes:
        check_int("--batch-sizes", b)
    check_int("--steps", args.steps)
    check_int("--repeats", args.repeats)
    for n in args.devices or ():
        check_int("--devices", n)
    for label in args.games:  # a misspelt game is an error, not a skipped row
        parse_variant(label)
    ex.check_experiment_out(args.out)
    if args.quick:
        args.batch_sizes, args.steps, args.repeats = QUICK_BATCHES, 50, 2
    if args.devices and args.child_devices is None:
        return devices_sweep(args)
    mesh = None
    if args.child_devices is not None:
        mesh = distributed.make_mesh(args.child_devices)

    try:
        import pgx  # noqa: F401

        have_pgx = not args.no_pgx
    except ImportError:
        have_pgx = False
        print("pgx is not installed: jaxgames only", file=sys.stderr)

    ex.prepare_out(args.out, vars(args))

    rows: list[dict] = []
    for label in args.games:
        name, options = parse_variant(label)
        env = jaxgames.make(name, **options)
        pgx_id = None
        if have_pgx and name in PGX_EQUIVALENT:
            pid, pgx_options = PGX_EQUIVALENT[name]
            if env.config == {**env.config, **pgx_options}:
                pgx_id = pid
        n_dev = 1 if mesh is None else distributed.mesh_size(mesh)
        for batch in args.batch_sizes:
            if batch % n_dev:
                print(f"skipping batch {batch}: not a multiple of {n_dev} devices", file=sys.stderr)
                continue
            impls = [("jaxgames", lambda: jaxgames_rollout(env, batch, args.steps, mesh))]
            if pgx_id:
                impls.append(
                    (
                        "pgx",
                        lambda: pgx_rollout(
                            pgx_id, batch, args.steps, args.pgx_native_autoreset, mesh
                        ),
                    )
                )
            for impl, build in impls:
                compile_s, seconds, done = measure(build(), args.seed, args.repeats)
                row = dict(
                    game=label,
                    impl=impl,
                    batch=batch,
                    devices=n_dev,
                    steps_per_s=batch * args.steps / seconds,
                    compile_s=compile_s,
                    seconds=seconds,
                    steps=args.steps,
                    games_finished=done,
                )
                rows.append(row)
                print(
                    f"{label:>14} {impl:>8} batch {batch:>6} x{n_dev} dev: "
                    f"{row['steps_per_s']:>14,.0f} steps/s "
                    f"(compile {compile_s:.1f}s, run {seconds:.3f}s, {done} games finished)",
                    flush=True,
                )

    ex.write_csv(os.path.join(args.out, "throughput.csv"), rows)
    if rows and not args.no_plot:
        plot(rows, args.out)
    print(f"\n{'game':>14} {'batch':>6} {'jaxgames steps/s':>17} {'pgx steps/s':>14} {'ratio':>7}")
    for game in dict.fromkeys(r["game"] for r in rows):
        for batch in args.batch_sizes:
            jg = [
                r["steps_per_s"]
                for r in rows
                if (r["game"], r["impl"], r["batch"]) == (game, "jaxgames", batch)
            ]
            px = [
                r["steps_per_s"]
                for r in rows
                if (r["game"], r["impl"], r["batch"]) == (game, "pgx", batch)
            ]
            if jg:
                ratio = f"{jg[0] / px[0]:6.1f}x" if px else "      -"
                pxs = f"{px[0]:14,.0f}" if px else f"{'-':>14}"
                print(f"{game:>14} {batch:>6} {jg[0]:17,.0f} {pxs} {ratio}")
    print(f"\nwrote {args.out}/throughput.csv and throughput.png/.pdf")
    return rows


def scaling_rows(rows: list[dict]) -> list[dict]:
    """Per (game, impl, batch, devices n): steps/s and
    efficiency = steps/s(n) / (n * steps/s(1))."""
    base = {(r["game"], r["impl"], r["batch"]): r["steps_per_s"] for r in rows if r["devices"] == 1}
    out = []
    for r in rows:
        b = base.get((r["game"], r["impl"], r["batch"]))
        eff = r["steps_per_s"] / (r["devices"] * b) if b else float("nan")
        keep = {k: r[k] for k in ("game", "impl", "batch", "devices", "steps_per_s")}
        out.append(dict(keep, speedup=r["steps_per_s"] / b if b else float("nan"), efficiency=eff))
    return out


def devices_sweep(args: argparse.Namespace) -> list[dict]:
    """Run the benchmark once per device count in ``args.devices``, each in a subprocess
    (``--child-devices n``; XLA_FLAGS forces n host devices, which only matters on CPU), then
    merge the rows and report scaling efficiency. Returns the merged rows."""
    import subprocess

    os.makedirs(args.out, exist_ok=True)
    rows: list[dict] = []
    for n in args.devices:
        sub_out = os.path.join(args.out, f"devices{n}")
        cmd = [sys.executable, os.path.abspath(__file__), "--games", *args.games, "--batch-sizes",
               *map(str, args.batch_sizes), "--steps", str(args.steps), "--repeats",
               str(args.repeats), "--seed", str(args.seed), "--out", sub_out, "--no-plot",
               "--child-devices", str(n)]  # fmt: skip
        cmd += ["--no-pgx"] if args.no_pgx else []
        cmd += ["--pgx-native-autoreset"] if args.pgx_native_autoreset else []
        env = dict(os.environ)
        env["XLA_FLAGS"] = (
            env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={n}"
        ).strip()
        print(f"=== {n} device(s) ===", flush=True)
        proc = subprocess.run(cmd, env=env)
        if proc.returncode:
            print(f"{n} device(s) failed (exit {proc.returncode}); skipped", file=sys.stderr)
            continue
        for r in ex.read_csv(os.path.join(sub_out, "throughput.csv")):
            number = {k: float(v) if "." in v or "e" in v else int(v) for k, v in r.items()
                      if k not in ("game", "impl")}  # fmt: skip
            rows.append({**r, **number})
    ex.write_csv(os.path.join(args.out, "throughput.csv"), rows)
    scaling = scaling_rows(rows)
    ex.write_csv(os.path.join(args.out, "scaling.csv"), scaling)
    ex.prepare_out(args.out, vars(args))
    if rows and not args.no_plot:
        plot(rows, args.out)
    print(
        f"\n{'game':>14} {'impl':>8} {'batch':>6} {'devices':>7} {'steps/s':>14} "
        f"{'speedup':>8} {'efficiency':>10}"
    )
    for r in scaling:
        print(
            f"{r['game']:>14} {r['impl']:>8} {r['batch']:>6} {r['devices']:>7} "
            f"{r['steps_per_s']:14,.0f} {r['speedup']:7.2f}x {r['efficiency']:10.2f}"
        )
    print(
        f"\nwrote {args.out}/throughput.csv, scaling.csv "
        "(efficiency = steps/s(n) / (n * steps/s(1)))"
    )
    return rows


if __name__ == "__main__":
    sys.exit(report_errors(main))
