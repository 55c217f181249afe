"""Fingerprint of one fixed-seed training chunk per algorithm: a hash of the parameters after
the chunk and its first metrics. Run it on two commits to check that a refactor left the
training results bit-identical (same machine, same jax, the same cores: XLA:CPU's sums
follow its thread count, docs/guarantees.md; pin both runs with ``taskset -c``).

    python experiments/chunk_fingerprint.py
    python experiments/chunk_fingerprint.py --quick    # the tic-tac-toe cases only

Each case is an algorithm's quick preset on a game, shrunk to a tiny chunk (PPO and DQN on
reversi 6x6 train with the preset's partners: random, greedy, alphabeta:2).
"""

from __future__ import annotations

import hashlib
import sys

import jax
import numpy as np

from jaxgames.agents.presets import default_config
from jaxgames.agents.registry import algorithm_module
from jaxgames.cli import ArgumentParser, report_errors
from jaxgames.specs import make_partners

CASES = [
    (
        "ppo",
        "reversi",
        {"size": 6},
        {"num_envs": 16, "num_steps": 8, "updates_per_chunk": 2, "total_steps": 1000},
    ),
    (
        "dqn",
        "tic_tac_toe",
        {},
        {
            "num_envs": 16,
            "updates_per_chunk": 20,
            "total_steps": 2000,
            "learning_starts": 64,
            "batch_size": 32,
        },
    ),
    (
        "alphazero",
        "tic_tac_toe",
        {},
        {"num_envs": 8, "num_steps": 4, "updates_per_chunk": 2, "total_steps": 200},
    ),
    (
        "alphazero",
        "reversi",
        {"size": 6},
        {"num_envs": 16, "num_steps": 4, "updates_per_chunk": 2, "total_steps": 256},
    ),
    (
        "alphazero",
        "animal_shogi",
        {},
        {"num_envs": 16, "num_steps": 4, "updates_per_chunk": 2, "total_steps": 256},
    ),
    (
        "dqn",
        "reversi",
        {"size": 6},
        {"num_envs": 16, "updates_per_chunk": 20, "total_steps": 2000, "learning_starts": 64},
    ),
    (
        "winner_imitation",
        "tic_tac_toe",
        {},
        {"num_envs": 16, "updates_per_chunk": 2, "total_steps": 1000},
    ),
]


def fingerprint(tree) -> str:
    h = hashlib.sha256()
    for leaf in jax.tree_util.tree_leaves(tree):
        h.update(np.asarray(leaf).tobytes())
    return h.hexdigest()[:16]


def main(argv=None) -> list[str]:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="the tic-tac-toe cases only")
    a = p.parse_args(argv)
    lines = []
    for name, game, options, overrides in CASES:
        if a.quick and game != "tic_tac_toe":
            continue
        config = default_config(name, game, options, quick=True).override(overrides)
        partners = make_partners(config.partners, config.make_env())
        algo = algorithm_module(name).make_algorithm(config, partners)
        state = jax.jit(algo.init)(jax.random.PRNGKey(config.seed))
        state, metrics = jax.jit(algo.chunk)(state)
        first = {k: round(float(v), 6) for k, v in sorted(metrics.items())[:3]}
        lines.append(
            f"{name} {game} {dict(config.partners)} {fingerprint(algo.params(state))} {first}"
        )
        print(lines[-1], flush=True)
    return lines


if __name__ == "__main__":
    sys.exit(report_errors(main))
