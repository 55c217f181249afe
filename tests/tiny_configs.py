"""The tiny tic-tac-toe PPO config that the run-level tests share (driver, loggers): batch 8 x 4
= 32 plies, 2 updates per chunk, 256 steps -> 4 chunks; one config, so a test process compiles
its chunk once."""

from jaxgames.agents import ppo

TINY_PPO = ppo.PPOConfig(
    game="tic_tac_toe",
    network="mlp",
    net={"hidden": 16, "layers": 1},
    num_envs=8,
    num_steps=4,
    num_minibatches=2,
    update_epochs=2,
    updates_per_chunk=2,
    total_steps=256,
    eval_games=8,
    keep_checkpoints=2,
)
