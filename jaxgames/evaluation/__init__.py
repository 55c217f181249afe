"""Evaluation yardsticks: classic opponents, the arena, Elo/Bradley-Terry ratings.

from jaxgames.evaluation import arena, make_opponent
env = jaxgames.make("tic_tac_toe")
result = arena(make_opponent("perfect", env), make_opponent("random", env), env, 4000, key)
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
    VALID_SPECS,
    alphabeta_policy,
    check_opponent_spec,
    greedy_policy,
    make_opponent,
    minimax_policy,
    perfect_policy,
    random_policy,
)

__all__ = [
    "VALID_SPECS",
    "ArenaResult",
    "Match",
    "Record",
    "alphabeta_policy",
    "arena",
    "bradley_terry",
    "check_opponent_spec",
    "greedy_policy",
    "make_opponent",
    "minimax_policy",
    "perfect_policy",
    "plot_ratings",
    "random_policy",
    "round_robin",
    "wilson_interval",
    "write_ratings_csv",
]
