"""Every algorithm x game preset, as data: the config ``jaxgames train ALGO --game GAME`` runs.

    config = default_config("alphazero", "reversi", {"size": 6}, quick=True, num_envs=64)

:data:`PRESETS` maps algorithm -> game -> config field -> value; a field left out keeps its
config class's default, a callable value is computed from the game options. :data:`QUICK`
holds each algorithm's short demo run (``--quick``), applied over the game's preset.
Each choice says why in one line and links the measurements behind it (docs/presets.md).
"""

from __future__ import annotations

from typing import Any, Mapping

from jaxgames.agents.registry import algorithm_module

# a share of the games against each classic search player, which punishes the blunders that
# self-play between equals rarely exposes, and against random play: docs/presets.md#classic-partners
CLASSIC_PARTNERS: dict[str, float] = {"random": 0.125, "greedy": 0.25, "alphabeta:2": 0.25}


def _reversi_max_plies(options: Mapping[str, Any]) -> int:
    """A reversi game lasts at most size * size plies plus passes."""
    return int(options.get("size", 8)) ** 2 + 8


# one line per group of fields; a choice with a reason has its own line and says why, linking
# the measurements (docs/presets.md#<algorithm>-on-<game>)
# fmt: off
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "ppo": {
        "tic_tac_toe": dict(
            network="mlp", net={"hidden": 128, "layers": 3}, num_envs=256, num_steps=16,
            total_steps=2_000_000, learning_rate=1e-3, num_minibatches=4, update_epochs=4,
            gamma=1.0, gae_lambda=0.9, updates_per_chunk=50, eval_games=500,
            # keeps the self-play opponent fallible, so the agent keeps learning to punish
            # mistakes instead of settling for draws: docs/presets.md#ppo-on-tic-tac-toe
            ent_coef=0.2,
        ),
        "reversi": dict(
            # an MLP rather than the article's CNN: docs/presets.md#ppo-on-reversi
            network="mlp", net={"hidden": 256, "layers": 3},
            num_envs=128, num_steps=32, total_steps=4_000_000, learning_rate=1e-3,
            num_minibatches=4, update_epochs=4, ent_coef=0.03, gamma=1.0, gae_lambda=0.95,
            updates_per_chunk=25, eval_games=256,
            # partners punish the blunders that self-play between equals misses:
            # docs/presets.md#ppo-on-reversi
            partners=CLASSIC_PARTNERS,
        ),
        "animal_shogi": dict(
            network="mlp", net={"hidden": 128, "layers": 6},  # the animal-shogi article's MLP
            num_envs=128, num_steps=32, total_steps=5_000_000, learning_rate=5e-4,
            gae_lambda=0.95, updates_per_chunk=20, eval_games=256,
            # games can loop: a win sooner is worth more: docs/presets.md#ppo-on-animal-shogi
            gamma=0.99,
            partners=CLASSIC_PARTNERS,  # as for reversi: docs/presets.md#ppo-on-animal-shogi
        ),
    },
    "dqn": {
        "tic_tac_toe": dict(
            network="mlp", net={"hidden": 128, "layers": 2}, num_envs=64, rollout_steps=1,
            total_steps=1_000_000, learning_rate=1e-3, anneal_lr=True, max_grad_norm=10.0,
            batch_size=128, gradient_steps=1, buffer_size=50_000, learning_starts=2_000,
            gamma=0.99, eps_decay=5_000, target_period=200, updates_per_chunk=500,
            eval_games=1000,
            # n = 1 keeps the targets independent of the exploration, so a high final epsilon
            # covers the odd positions a random opponent reaches: docs/presets.md#dqn-on-tic-tac-toe
            n_step=1, eps_end=0.3,
        ),
        "reversi": dict(
            # an MLP instead of the article's CNN: docs/presets.md#dqn-on-reversi
            network="mlp", net={"hidden": 256, "layers": 3},
            num_envs=128, rollout_steps=1, total_steps=4_000_000, learning_rate=5e-4,
            anneal_lr=True, max_grad_norm=10.0, batch_size=256, gradient_steps=1,
            buffer_size=200_000, learning_starts=10_000, gamma=0.99, target_period=250,
            updates_per_chunk=1000, eval_games=500, partners=CLASSIC_PARTNERS,
            n_step=16, eps_decay=5_000, eps_end=0.1,  # the article's returns and exploration
        ),
        "animal_shogi": dict(
            network="mlp", net={"hidden": 128, "layers": 6}, num_envs=128,
            total_steps=5_000_000, learning_rate=5e-4, max_grad_norm=10.0, batch_size=256,
            buffer_size=200_000, learning_starts=10_000, gamma=0.99, n_step=8,
            eps_decay=5_000, target_period=250, updates_per_chunk=200, eval_games=256,
            partners=CLASSIC_PARTNERS,
            # the learning rate decays linearly to 0: docs/presets.md#dqn-on-animal-shogi
            anneal_lr=True,
        ),
    },
    # the PPO presets' MLPs: every ply costs num_simulations + 1 network calls; a replay window
    # of a few updates' searched positions
    "alphazero": {
        "tic_tac_toe": dict(
            network="mlp", net={"hidden": 128, "layers": 3}, num_envs=32, num_steps=16,
            total_steps=500_000, learning_rate=1e-3, num_simulations=16, updates_per_chunk=25,
            eval_games=500,
            # self-play between near-equals rarely shows the positions a weak opponent leaves
            partners={"random": 0.25},
            # keeps moves the prior has written off within reach of the search:
            # docs/presets.md#alphazero-on-tic-tac-toe
            root_noise=0.25,
        ),
        "reversi": dict(  # one preset for every board size
            network="mlp",
            # sized for the short default run: docs/presets.md#alphazero-on-reversi
            net={"hidden": 256, "layers": 3},
            # mobility planes, what classical othello evaluations weigh:
            # docs/presets.md#alphazero-on-reversi
            features="mobility",
            num_envs=128, num_steps=16, total_steps=1_000_000, learning_rate=1e-3,
            augment=True, updates_per_chunk=25, eval_games=256,
            # Gumbel search improves the policy with few simulations (Danihelka et al. 2022):
            # docs/presets.md#alphazero-on-reversi
            num_simulations=8,
            # 4 updates of play: docs/presets.md#alphazero-on-reversi
            replay_size=8_192,
            # pure self-play, as in AlphaZero (Silver et al. 2018):
            # docs/presets.md#alphazero-on-reversi
            partners={},
            # Dirichlet root noise (Silver et al. 2017) keeps moves the prior has written off
            # within the search's reach: docs/presets.md#alphazero-on-reversi
            root_noise=0.25,
        ),
        "animal_shogi": dict(
            network="mlp",
            # sized for the short default run: docs/presets.md#alphazero-on-animal-shogi
            net={"hidden": 128, "layers": 6},
            # attack planes, what a classical evaluation weighs:
            # docs/presets.md#alphazero-on-animal-shogi
            features="attacks",
            num_envs=128, num_steps=16, total_steps=1_000_000, learning_rate=5e-4,
            num_simulations=8, updates_per_chunk=25, eval_games=256,
            replay_size=32_768,  # 16 updates of play
            augment=True,  # the left-right mirror
            # pure self-play, as in AlphaZero: docs/presets.md#alphazero-on-animal-shogi
            partners={},
            root_noise=0.25,  # as for reversi: docs/presets.md#alphazero-on-animal-shogi
            # a win sooner is worth more than shuffling pieces to a repetition:
            # docs/presets.md#alphazero-on-animal-shogi
            gamma=0.99,
        ),
    },
    "winner_imitation": {
        "tic_tac_toe": dict(
            network="mlp", net={"hidden": 64, "layers": 2}, num_envs=256, max_plies=9,
            opening_plies=2, total_steps=2_000_000, learning_rate=1e-3, update_epochs=2,
            updates_per_chunk=50, eval_games=500,
        ),
        "reversi": dict(
            network="mlp", net={"hidden": 256, "layers": 3},  # as for DQN
            num_envs=256, max_plies=_reversi_max_plies, opening_plies=4, total_steps=5_000_000,
            learning_rate=1e-3, update_epochs=2, updates_per_chunk=20, eval_games=256,
        ),
        "animal_shogi": dict(
            # the article's MLP and random openings
            network="mlp", net={"hidden": 128, "layers": 6}, opening_plies=4,
            num_envs=256, max_plies=200, total_steps=10_000_000, learning_rate=5e-4,
            update_epochs=2, updates_per_chunk=10, eval_games=256,
        ),
    },
}
# fmt: on

#: ``--quick``: a short demo run of each algorithm (docs/presets.md#quick-presets)
QUICK: dict[str, dict[str, Any]] = {
    "ppo": dict(total_steps=200_000, updates_per_chunk=10, eval_games=200),
    "dqn": dict(total_steps=100_000, eval_games=100),
    "alphazero": dict(total_steps=40_000, updates_per_chunk=5, eval_games=100),
    "winner_imitation": dict(total_steps=200_000, eval_games=100, eval_vs_init_games=64),
}


def default_config(
    algorithm: str,
    game: str = "tic_tac_toe",
    game_options: Mapping[str, Any] | None = None,
    *,
    quick: bool = False,
    scale_envs: int | None = None,
    **overrides: Any,
) -> Any:
    """The config of ``algorithm`` for ``game``: its preset, then its :data:`QUICK` values
    (if ``quick``), then ``scale_envs`` games at once by the batch-scaling rule
    (:meth:`~jaxgames.agents.config.TrainConfig.scaled_to`: replay, minibatches and learning
    rate follow the games), then ``overrides`` (field=value), each winning over the previous.
    ``ValueError`` naming the valid algorithms, or the first bad field."""
    config_class = algorithm_module(algorithm).Config
    options = dict(game_options or {})
    values: dict[str, Any] = dict(PRESETS[algorithm].get(game, {}))
    if quick:
        values.update(QUICK[algorithm])
    resolved = {k: v(options) if callable(v) else v for k, v in values.items()}
    config = config_class(game=game, game_options=options, **resolved)
    if scale_envs is not None:
        config = config.scaled_to(scale_envs)
    return config.override(overrides)  # a field named wrong is a ValueError naming it
