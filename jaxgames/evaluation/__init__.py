"""Evaluation yardsticks: classic opponents, the arena, Elo/Bradley-Terry ratings.

    from jaxgames.evaluation import arena, perfect_policy, random_policy
    env = jaxgames.make("tic_tac_toe")
    result = arena(perfect_policy(env), random_policy(env), env, 4000, key)

Players named by strings (``"alphabeta:2"``, a run directory, ``"mcts:16:runs/x"``) are built
by :func:`jaxgames.specs.make_opponent`, one layer up.
"""

from jaxgames.evaluation.arena import ArenaResult, Record, arena, wilson_interval
from jaxgames.evaluation.elo import (
    Match,
    bradley_terry,
    plot_ratings,
    round_robin,
    write_ratings_csv,
)
from jaxgames.evaluation.opponents import (
    alphabeta_policy,
    greedy_policy,
    minimax_policy,
    perfect_policy,
    random_policy,
)

__all__ = [
    "ArenaResult",
    "Match",
    "Record",
    "alphabeta_policy",
    "arena",
    "bradley_terry",
    "greedy_policy",
    "minimax_policy",
    "perfect_policy",
    "plot_ratings",
    "random_policy",
    "round_robin",
    "wilson_interval",
    "write_ratings_csv",
]
