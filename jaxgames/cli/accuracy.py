"""``jaxgames accuracy A --against B``: the share of A's moves that keep the position's
game-theoretic value, per colour and game phase, with the blunders per game
(:mod:`jaxgames.evaluation.accuracy`). Animal shogi: needs the table of ``jaxgames solve
animal_shogi``; reversi (``--game reversi --size S --empties E``): the exact solver judges A's
moves from E empty squares and also gives the disc margin lost per move; tic-tac-toe: value
iteration judges every move."""

from __future__ import annotations

import argparse

from jaxgames.cli.options import add_force_argument, check_output_file, write_json_file
from jaxgames.evaluation import reversi_solver
from jaxgames.evaluation.accuracy import DEFAULT_EMPTIES, format_accuracy, move_accuracy
from jaxgames.evaluation.reports import default_opening_plies
from jaxgames.games import make
from jaxgames.specs import make_opponent, make_oracle


def _accuracy(args: argparse.Namespace) -> int:
    if args.json:
        check_output_file(args.json, "--json", args.force)
    if args.game != "reversi" and (args.size is not None or args.empties is not None):
        raise ValueError("--empties and --size are for --game reversi")
    if args.game == "reversi":
        size = 8 if args.size is None else args.size
        reversi_solver.check_size(size, "--size")
        env = make("reversi", size=size)
        if args.against is None:
            raise ValueError("--against is needed on reversi (an opponent spec, e.g. engine:2)")
        against = args.against
    else:
        env = make(args.game)
        against = "perfect" if args.against is None else args.against
    oracle = make_oracle(env, empties=args.empties)
    a, b = make_opponent(args.a, env), make_opponent(against, env)
    plies = default_opening_plies(env) if args.opening_plies is None else args.opening_plies
    out = move_accuracy(
        a, b, env, games=args.games, opening_plies=plies, seed=args.seed, oracle=oracle
    )
    out.update(a=args.a, against=against, opening_plies=plies, game=args.game)
    if args.game == "reversi":
        out.update(size=env.size, empties=oracle.empties)
    print(f"A = {args.a} against {against}, {plies} random opening plies, seed {args.seed}")
    print(format_accuracy(out))
    if args.json:
        write_json_file(args.json, out, "--json")
    return 0


def add_command(subparsers) -> None:
    """Register ``accuracy`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser(
        "accuracy",
        help="how often a player's moves keep the solved value (animal shogi, reversi endings, "
        "tic-tac-toe)",
        description="Play A against B from distinct random openings (both colours) and judge "
        "every move of A with the solved animal-shogi table, on reversi every placement "
        "from --empties empty squares with the exact solver, on tic-tac-toe every move with "
        "value iteration: the share that keeps the "
        "position's value, blunders per game, per colour and game phase, with 95% intervals "
        "(and on reversi the disc margin lost per move).",
    )
    p.add_argument("a", help="player A: an opponent spec or a run directory")
    p.add_argument("--against", default=None, help="player B (default: perfect; needed on reversi)")
    p.add_argument(
        "--game",
        choices=("animal_shogi", "reversi", "tic_tac_toe"),
        default="animal_shogi",
        help="the game (default animal_shogi)",
    )
    p.add_argument("--size", type=int, default=None, help="reversi board size (default 8)")
    p.add_argument(
        "--empties",
        type=int,
        default=None,
        help="reversi: judge moves from this many empty squares or fewer "
        f"(default {DEFAULT_EMPTIES[8]} on 8x8, {DEFAULT_EMPTIES[6]} on 6x6)",
    )
    p.add_argument("--games", type=int, default=50, help="openings, each played twice (default 50)")
    p.add_argument(
        "--opening-plies", type=int, default=None, help="random plies (default: the ladder's)"
    )
    p.add_argument("--seed", type=int, default=0, help="openings and the games' random numbers")
    p.add_argument("--json", help="also write the result to this JSON file")
    add_force_argument(p, "--json file")
    p.set_defaults(func=_accuracy)
