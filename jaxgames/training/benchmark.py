"""Training throughput: environment steps per second including learning.

    python -m jaxgames.training.benchmark ppo --game reversi --size 6 --network=cnn
    python -m jaxgames.training.benchmark ppo --game tic_tac_toe --num-envs=512
    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        python -m jaxgames.training.benchmark ppo --game reversi --size 6 --devices 4

Builds the algorithm with its per-game defaults (plus ``--field=value`` overrides), compiles
one chunk, then times ``--repeats`` chunks (best and median) on whatever device JAX uses.
No evaluation, logging or checkpoints: this is the speed of the jitted update itself.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax

from jaxgames import distributed
from jaxgames.agents.config import parse_overrides
from jaxgames.agents.presets import default_config
from jaxgames.agents.registry import ALGORITHMS, algorithm_module
from jaxgames.specs import make_partners


def benchmark(algorithm: str, config, repeats: int = 3, devices=None) -> dict:
    """Time ``repeats`` jitted chunks -> dict(steps_per_chunk, compile_s, best/median steps_per_s),
    the games split over ``devices`` (``None``: all; see :func:`jaxgames.distributed.make_mesh`)."""
    partners = make_partners(config.partners, config.make_env())
    algo = algorithm_module(algorithm).make_algorithm(config, partners)
    mesh = distributed.make_mesh(devices)
    init, chunk, _ = distributed.sharded_train_fns(algo, mesh)
    state = init(jax.random.PRNGKey(config.seed))
    t0 = time.perf_counter()
    state, m = chunk(state)
    jax.block_until_ready(m)
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        state, m = chunk(state)
        jax.block_until_ready((state, m))
        times.append(time.perf_counter() - t0)
    return {
        "devices": distributed.mesh_size(mesh),
        "steps_per_chunk": algo.steps_per_chunk,
        "compile_and_first_chunk_s": compile_s,
        "best_steps_per_s": algo.steps_per_chunk / min(times),
        "median_steps_per_s": algo.steps_per_chunk / statistics.median(times),
    }


def main(argv=None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("algorithm", choices=sorted(ALGORITHMS))
    p.add_argument("--game", default="tic_tac_toe")
    p.add_argument("--size", type=int, default=None)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--devices", default="all", help="devices to split the games over (default all)")
    args, extra = p.parse_known_args(argv)
    options = {} if args.size is None else {"size": args.size}
    config = default_config(args.algorithm, args.game, options).override(parse_overrides(extra))
    res = benchmark(args.algorithm, config, args.repeats, args.devices)
    print(
        f"{args.algorithm} {args.game} {options or ''} network={config.network} {config.net or ''} "
        f"num_envs={config.num_envs} on {jax.devices()[0].platform}:"
    )
    for k, v in res.items():
        print(f"  {k}: {v:,.1f}" if isinstance(v, float) else f"  {k}: {v}")


if __name__ == "__main__":
    main()
