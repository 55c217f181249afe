"""Evaluation yardsticks: classic opponents and engines, match play, Elo ratings and ladders.

Modules, from the bottom up: ``elo`` (Wilson intervals, records, Bradley-Terry fits),
``openings`` (opening sets), ``match`` (the one game loop and its result type), ``ladder``
(rungs rated once, players rated against them), ``rating`` (``jaxgames rate``), ``reports``
(``jaxgames match`` and its reports); the opponents ``opponents``, ``uct``,
``reversi_engine``, ``animal_shogi_engine``.
Players named by strings (``"alphabeta:2"``, a run directory, ``"mcts:16:runs/x"``) are built
by :func:`jaxgames.specs.make_opponent`, one layer up.
"""

from jaxgames.evaluation.elo import (
    Match,
    Rating,
    Record,
    bradley_terry,
    plot_ratings,
    wilson_interval,
    write_ratings_csv,
)
from jaxgames.evaluation.ladder import Ladder, load_ladder
from jaxgames.evaluation.match import MatchResult, arena, evaluate_vs, play_match, round_robin
from jaxgames.evaluation.openings import openings
from jaxgames.evaluation.opponents import alphabeta_policy, greedy_policy, minimax_policy
from jaxgames.evaluation.rating import RatingReport, rate_policy
from jaxgames.evaluation.reports import run_match

__all__ = [
    "Ladder",
    "Match",
    "MatchResult",
    "Rating",
    "RatingReport",
    "Record",
    "alphabeta_policy",
    "arena",
    "bradley_terry",
    "evaluate_vs",
    "greedy_policy",
    "load_ladder",
    "minimax_policy",
    "openings",
    "play_match",
    "plot_ratings",
    "rate_policy",
    "round_robin",
    "run_match",
    "wilson_interval",
    "write_ratings_csv",
]
