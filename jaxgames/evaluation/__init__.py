"""Evaluation yardsticks: classic opponents, the arena, Elo/Bradley-Terry ratings.

    from jaxgames.evaluation import alphabeta_policy, arena
    env = jaxgames.make("tic_tac_toe")
    result = arena(alphabeta_policy(env, 4), jaxgames.random_policy, env, 4000, key)

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
    "plot_ratings",
    "round_robin",
    "wilson_interval",
    "write_ratings_csv",
]
