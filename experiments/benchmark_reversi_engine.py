"""Per-move time of the reversi engine (jitted, after compile), batch 1 and batch B.

    PYTHONPATH=. python experiments/benchmark_reversi_engine.py --size 8 --depth 4 \\
        --endgame 10 --batch 256

Positions: games of the depth-1 engine against itself after 4 random plies, stopped at the
given numbers of empty squares (midgame ones, and the endgame at E and E + 1 empties: E + 1
is the last midgame search, E the first exact solve). For each: the mean and largest time of
one move at batch 1 over ``--single`` positions, and the time of one ``vmap`` call over
``--batch`` positions (the batch runs as long as its slowest search) with loop iterations.
Numbers depend on the CPU and its load: the machine this was written on has 2 cores shared
with other jobs (load average about 8 during this run). Measured with the command above
(jax 0.10.2, CPU; compile of the batch-1 policy 5.3 s)::

    empties  batch 1: mean / max per move   batch 256: per call (per position)   iterations
       52        2.7 ms /  6.7 ms                0.45 s (1.8 ms)                 171 / 330
       32        2.7 ms /  5.7 ms                0.62 s (2.4 ms)                 225 / 447
       18        1.1 ms /  1.8 ms                0.32 s (1.2 ms)                 114 / 243
       11        0.7 ms /  1.0 ms                0.18 s (0.7 ms)                  59 / 137
       10        4.7 ms / 11.4 ms                4.05 s (15.8 ms)               1890 / 8764

(iterations: mean / max over the batch; 10 empties is the first exact solve, 11 the last
depth-4 search.)
"""

from __future__ import annotations

import argparse
import functools
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxgames
from jaxgames.cli import report_errors
from jaxgames.core import random_action
from jaxgames.evaluation import reversi_engine as eng


@functools.lru_cache(maxsize=None)
def _self_play(env, n: int):
    """jit (key, empties) -> n states with ``empties`` empty squares (fewer where a game
    skipped that count; more where it ended first: its last position), from depth-1 engine
    self-play after 4 random plies."""
    policy = jax.vmap(eng.reversi_engine_policy(env, 1, 0))

    @jax.jit
    def play(key, empties):
        state = jax.vmap(env.init)(jax.random.split(key, n))
        cells = env.size * env.size

        def body(c):
            state, snap, got, t, key = c
            key, k1, k2 = jax.random.split(key, 3)
            filled = jax.vmap(lambda a, b: jnp.sum(jax.lax.population_count(a | b)))(
                state.mover, state.opponent
            )
            # keep the latest live state until the target is reached (a game may end first)
            live = ~got & ~state.terminated
            snap = jax.tree_util.tree_map(
                lambda s, x: jnp.where(live.reshape((-1,) + (1,) * (x.ndim - 1)), x, s),
                snap,
                state,
            )
            got = got | (live & (cells - filled <= empties)) | state.terminated
            rand = jax.vmap(random_action)(jax.random.split(k1, n), state.legal_action_mask)
            act = jnp.where(t < 4, rand, policy(jax.random.split(k2, n), state))
            return jax.vmap(env.step)(state, act), snap, got, t + 1, key

        c = (state, state, jnp.zeros(n, bool), 0, key)
        _, snap, got, _, _ = jax.lax.while_loop(lambda c: ~jnp.all(c[2]), body, c)
        return snap

    return play


def positions(env, n: int, empties: int, key: jax.Array):
    """n states with ``empties`` empty squares (see :func:`_self_play`, compiled once)."""
    return _self_play(env, n)(key, jnp.int32(empties))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--endgame", type=int, default=10)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--single", type=int, default=10, help="positions timed at batch 1")
    ap.add_argument("--empties", type=str, default="", help="comma list (default: a mix)")
    args = ap.parse_args(argv)
    env = jaxgames.make("reversi", size=args.size)
    cells, e = args.size * args.size, args.endgame
    empties = (
        [int(x) for x in args.empties.split(",")]
        if args.empties
        else [cells - 12, cells // 2, cells // 4 + 2, e + 1, e]
    )
    policy = eng.reversi_engine_policy(env, args.depth, e)
    one = jax.jit(policy)
    batch = jax.jit(
        jax.vmap(lambda k, s: eng.search(env, s, k, args.depth, e, full_root=False).nodes)
    )
    many = jax.jit(jax.vmap(policy))
    print(f"reversi {args.size}x{args.size}, engine depth {args.depth}, endgame {e} empties")
    t = time.time()
    jax.block_until_ready(one(jax.random.PRNGKey(0), env.init(jax.random.PRNGKey(0))))
    print(f"compile batch 1: {time.time() - t:.1f} s")
    for k, n_empty in enumerate(empties):
        states = positions(env, max(args.batch, args.single), n_empty, jax.random.PRNGKey(k))
        keys = jax.random.split(jax.random.PRNGKey(100 + k), args.batch)
        times = []
        for j in range(args.single):
            s = jax.tree_util.tree_map(lambda x: x[j], states)
            jax.block_until_ready(one(keys[j], s))  # compiled already; warm the caches
            t = time.time()
            jax.block_until_ready(one(keys[j], s))
            times.append(time.time() - t)
        sb = jax.tree_util.tree_map(lambda x: x[: args.batch], states)
        nodes = np.asarray(batch(keys, sb))
        jax.block_until_ready(many(keys, sb))  # compile
        t = time.time()
        jax.block_until_ready(many(keys, sb))
        tb = time.time() - t
        print(
            f"{n_empty:3d} empties: batch 1: mean {np.mean(times) * 1e3:7.1f} ms, "
            f"max {np.max(times) * 1e3:7.1f} ms | batch {args.batch}: {tb:7.2f} s "
            f"({tb / args.batch * 1e3:6.1f} ms/position), iterations mean "
            f"{nodes.mean():6.0f} max {nodes.max():6d}",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(report_errors(main))
