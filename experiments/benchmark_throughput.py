"""Environment throughput: random legal play with auto-reset, jaxgames vs pgx side by side.

For every game and batch size, ``--steps`` plies of ``batch`` games run inside ONE jitted
``lax.scan`` (policy -> ``step_autoreset`` -> next state). The first call (compile + run) is timed
separately from a second, measured call; the clock stops after ``block_until_ready``.
steps/s = batch * steps / measured seconds. pgx runs the same loop with the same policy through
``pgx.experimental.auto_reset`` when it has the game and is installed.

    PYTHONPATH=$PWD python experiments/benchmark_throughput.py \\
        --games reversi:8 reversi:6 animal_shogi tic_tac_toe \\
        --batch-sizes 1 4 16 64 256 1024 4096 16384 --steps 200 --out runs/throughput
    PYTHONPATH=$PWD python experiments/benchmark_throughput.py --quick   # < 1 minute

Writes ``<out>/throughput.csv`` (game, impl, batch, steps_per_s, compile_s, seconds, steps),
``<out>/throughput.png`` / ``.pdf`` (log-log steps/s vs batch) and ``<out>/config.json``, and
prints a table with the jaxgames/pgx ratio. Games that are not registered are skipped.

The policy is the same for both libraries and cheap on purpose (it is not what is measured):
each game draws one uint32 per step, hashes it with every action id (murmur3 finaliser) and
plays the legal action with the largest hash, i.e. a uniformly random legal action up to hash
quality. ``jaxgames.random_action`` (Gumbel over threefry bits) would cost more than the
reversi step itself.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from typing import Callable

import jax
import jax.numpy as jnp

import jaxgames

#: jaxgames game name -> (pgx env id, the jaxgames options it corresponds to)
PGX_EQUIVALENT = {
    "reversi": ("othello", {"size": 8}),
    "animal_shogi": ("animal_shogi", {}),
    "tic_tac_toe": ("tic_tac_toe", {}),
}
DEFAULT_GAMES = ["reversi:8", "reversi:6", "animal_shogi", "tic_tac_toe"]
DEFAULT_BATCHES = [1, 4, 16, 64, 256, 1024, 4096, 16384]
QUICK_BATCHES = [1, 64, 4096]


def hashed_legal_action(key: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """Random legal action per game. key: PRNG key; legal_action_mask: bool[B, A] -> int32[B].

    One random uint32 per game is mixed with each action id (murmur3 fmix32); the legal action
    with the largest mixed value wins (ties, ~2**-23, go to the larger id). With no legal action
    it returns action 0 (never happens under auto-reset).
    """
    batch, num_actions = legal_action_mask.shape
    id_bits = max(1, (num_actions - 1).bit_length())
    ids = jnp.arange(num_actions, dtype=jnp.uint32)
    x = jax.random.bits(key, (batch, 1), jnp.uint32) + ids * jnp.uint32(0x9E3779B9)
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x85EBCA6B)
    x = x ^ (x >> 13)
    x = x * jnp.uint32(0xC2B2AE35)
    x = x ^ (x >> 16)
    keyed = jnp.where(legal_action_mask, (x << id_bits) | ids, jnp.uint32(0))
    return (jnp.max(keyed, axis=-1) & jnp.uint32((1 << id_bits) - 1)).astype(jnp.int32)


def parse_game(spec: str) -> tuple[str, dict]:
    """``"reversi:6"`` -> ("reversi", {"size": 6}); ``"tic_tac_toe"`` -> ("tic_tac_toe", {})."""
    name, _, arg = spec.partition(":")
    return name, ({"size": int(arg)} if arg else {})


def jaxgames_rollout(env, batch: int, steps: int) -> Callable:
    """jit(key -> int32[] games finished) running ``steps`` plies of ``batch`` jaxgames games."""

    def run(key):
        key, k0 = jax.random.split(key)
        state = jax.vmap(env.init)(jax.random.split(k0, batch))
        step = jax.vmap(lambda s, a, k: jaxgames.step_autoreset(env, s, a, k))

        def body(carry, _):
            state, key = carry
            key, k_act, k_reset = jax.random.split(key, 3)
            action = hashed_legal_action(k_act, state.legal_action_mask)
            out = step(state, action, jax.random.split(k_reset, batch))
            return (out.state, key), jnp.sum(out.terminated | out.truncated, dtype=jnp.int32)

        _, done = jax.lax.scan(body, (state, key), None, length=steps)
        return done.sum()

    return jax.jit(run)


def pgx_rollout(env_id: str, batch: int, steps: int) -> Callable:
    """Same loop as :func:`jaxgames_rollout` for ``pgx.make(env_id)`` with pgx's auto_reset."""
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(env_id)

    def run(key):
        key, k0 = jax.random.split(key)
        state = jax.vmap(env.init)(jax.random.split(k0, batch))
        step = jax.vmap(auto_reset(env.step, env.init))

        def body(carry, _):
            state, key = carry
            key, k_act, k_reset = jax.random.split(key, 3)
            action = hashed_legal_action(k_act, state.legal_action_mask)
            state = step(state, action, jax.random.split(k_reset, batch))
            return (state, key), jnp.sum(state.terminated | state.truncated, dtype=jnp.int32)

        _, done = jax.lax.scan(body, (state, key), None, length=steps)
        return done.sum()

    return jax.jit(run)


def measure(fn: Callable, seed: int) -> tuple[float, float, int]:
    """(compile_s incl. the first run, measured run seconds, games finished in the measured run)."""
    t0 = time.perf_counter()
    jax.block_until_ready(fn(jax.random.PRNGKey(seed)))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    done = jax.block_until_ready(fn(jax.random.PRNGKey(seed + 1)))
    return compile_s, time.perf_counter() - t0, int(done)


def plot(rows: list[dict], out: str) -> None:
    """Log-log steps/s vs batch, one line per (game, impl); PNG + PDF under ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = sorted({(r["game"], r["impl"]) for r in rows})
    colors = {g: f"C{i}" for i, g in enumerate(sorted({g for g, _ in series}))}
    for game, impl in series:
        pts = sorted((r["batch"], r["steps_per_s"]) for r in rows if r["game"] == game and r["impl"] == impl)
        ax.plot(*zip(*pts), marker="o", color=colors[game], linestyle="-" if impl == "jaxgames" else "--",
                label=f"{game} ({impl})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("batch size (games in parallel)")
    ax.set_ylabel("steps / second")
    ax.set_title(f"Random play with auto-reset ({jax.default_backend()})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(os.path.join(out, f"throughput.{ext}"))
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict]:
    """Run the benchmark; returns the CSV rows (dicts)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", nargs="+", default=DEFAULT_GAMES, help="name or name:size, e.g. reversi:6")
    ap.add_argument("--batch-sizes", nargs="+", type=int, default=DEFAULT_BATCHES)
    ap.add_argument("--steps", type=int, default=200, help="plies per measured run (one lax.scan)")
    ap.add_argument("--out", default="runs/throughput")
    ap.add_argument("--no-pgx", action="store_true", help="skip pgx even if installed")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--quick", action="store_true", help=f"batches {QUICK_BATCHES}, 20 steps")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.quick:
        args.batch_sizes, args.steps = QUICK_BATCHES, 20

    try:
        import pgx  # noqa: F401

        have_pgx = not args.no_pgx
    except ImportError:
        have_pgx = False
        print("pgx is not installed: jaxgames only", file=sys.stderr)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump({**vars(args), "backend": jax.default_backend(), "devices": [str(d) for d in jax.devices()],
                   "jax": jax.__version__}, f, indent=2)

    rows: list[dict] = []
    for spec in args.games:
        name, options = parse_game(spec)
        if name not in jaxgames.registered_games():
            print(f"skipping {spec}: not registered (have {jaxgames.registered_games()})", file=sys.stderr)
            continue
        env = jaxgames.make(name, **options)
        label = name + (f"{options['size']}x{options['size']}" if "size" in options else "")
        pgx_id = None
        if have_pgx and name in PGX_EQUIVALENT:
            pid, pgx_options = PGX_EQUIVALENT[name]
            if env.config == {**env.config, **pgx_options}:
                pgx_id = pid
        for batch in args.batch_sizes:
            impls = [("jaxgames", lambda: jaxgames_rollout(env, batch, args.steps))]
            if pgx_id:
                impls.append(("pgx", lambda: pgx_rollout(pgx_id, batch, args.steps)))
            for impl, build in impls:
                compile_s, seconds, done = measure(build(), args.seed)
                row = dict(game=label, impl=impl, batch=batch, steps_per_s=batch * args.steps / seconds,
                           compile_s=compile_s, seconds=seconds, steps=args.steps, games_finished=done)
                rows.append(row)
                print(f"{label:>14} {impl:>8} batch {batch:>6}: {row['steps_per_s']:>14,.0f} steps/s "
                      f"(compile {compile_s:.1f}s, run {seconds:.3f}s, {done} games finished)", flush=True)

    with open(os.path.join(args.out, "throughput.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["game"])
        w.writeheader()
        w.writerows(rows)
    if rows and not args.no_plot:
        plot(rows, args.out)

    print(f"\n{'game':>14} {'batch':>6} {'jaxgames steps/s':>17} {'pgx steps/s':>14} {'ratio':>7}")
    for game in dict.fromkeys(r["game"] for r in rows):
        for batch in args.batch_sizes:
            jg = [r["steps_per_s"] for r in rows if (r["game"], r["impl"], r["batch"]) == (game, "jaxgames", batch)]
            px = [r["steps_per_s"] for r in rows if (r["game"], r["impl"], r["batch"]) == (game, "pgx", batch)]
            if jg:
                ratio = f"{jg[0] / px[0]:6.1f}x" if px else "      -"
                pxs = f"{px[0]:14,.0f}" if px else f"{'-':>14}"
                print(f"{game:>14} {batch:>6} {jg[0]:17,.0f} {pxs} {ratio}")
    print(f"\nwrote {args.out}/throughput.csv and throughput.png/.pdf")
    return rows


if __name__ == "__main__":
    main()
