"""The tiny tic-tac-toe PPO config that the run-level tests share (driver, loggers): batch 8 x 4
= 32 plies, 2 updates per chunk, 256 steps -> 4 chunks; one config, so a test process compiles
its chunk once. ``TINY_TRAIN_ARGS``: the same kind of run as ``jaxgames train`` overrides (CLI,
export tests); :func:`train_args` parses a ``jaxgames train`` command line as the CLI does."""

import argparse

from jaxgames import cli
from jaxgames.agents import ppo

#: the fields every tiny rollout-learning config of the tests shares (PPO, AlphaZero): a
#: one-layer tic-tac-toe MLP, batch 8 x 4 = 32 plies, 2 x 2 minibatches, 2 updates per chunk
TINY_FIELDS = dict(
    game="tic_tac_toe",
    network="mlp",
    net={"hidden": 16, "layers": 1},
    num_envs=8,
    num_steps=4,
    num_minibatches=2,
    update_epochs=2,
    updates_per_chunk=2,
)

TINY_PPO = ppo.PPOConfig(**TINY_FIELDS, total_steps=256, eval_games=8, keep_checkpoints=2)

TINY_TRAIN_ARGS = [
    "--total-steps=128",
    "--num-envs=8",
    "--num-steps=4",
    "--num-minibatches=2",
    "--update-epochs=1",
    "--updates-per-chunk=2",
    "--eval-games=4",
    "--net.hidden=8",
    "--net.layers=1",
]


def train_args(argv: list[str]) -> argparse.Namespace:
    """``jaxgames train ...`` arguments (without ``jaxgames``) parsed as :func:`jaxgames.cli.main`
    parses them: the ``--field=value`` overrides in ``overrides``."""
    args, extra = cli.build_parser().parse_known_args(argv)
    args.overrides = extra
    return args
