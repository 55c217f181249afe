"""``jaxgames accuracy A --against B``: the share of A's animal-shogi moves that keep the
position's game-theoretic value, per colour and game phase, with the blunders per game
(:mod:`jaxgames.evaluation.accuracy`; needs the table of ``jaxgames solve animal_shogi``)."""

from __future__ import annotations

import argparse

from jaxgames.cli.options import add_force_argument, check_output_file, write_json_file
from jaxgames.evaluation import animal_shogi_solver as solver
from jaxgames.evaluation.accuracy import format_accuracy, move_accuracy
from jaxgames.evaluation.reports import default_opening_plies
from jaxgames.games import make
from jaxgames.specs import make_opponent


def _accuracy(args: argparse.Namespace) -> int:
    if args.json:
        check_output_file(args.json, "--json", args.force)
    env = make("animal_shogi")
    try:
        table = solver.load_table()
    except solver.TableMissing as e:
        raise ValueError(str(e)) from None
    a, b = make_opponent(args.a, env), make_opponent(args.against, env)
    plies = default_opening_plies(env) if args.opening_plies is None else args.opening_plies
    out = move_accuracy(a, b, env, table, games=args.games, opening_plies=plies, seed=args.seed)
    out.update(a=args.a, against=args.against, opening_plies=plies)
    print(f"A = {args.a} against {args.against}, {plies} random opening plies, seed {args.seed}")
    print(format_accuracy(out))
    if args.json:
        write_json_file(args.json, out, "--json")
    return 0


def add_command(subparsers) -> None:
    """Register ``accuracy`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser(
        "accuracy",
        help="animal shogi: how often a player's moves keep the solved value",
        description="Play A against B from distinct random openings (both colours) and judge "
        "every move of A with the solved table: the share that keeps the position's value, "
        "blunders per game, per colour and game phase, with 95%% intervals.",
    )
    p.add_argument("a", help="player A: an opponent spec or a run directory")
    p.add_argument("--against", default="perfect", help="player B (default: perfect)")
    p.add_argument("--games", type=int, default=50, help="openings, each played twice (default 50)")
    p.add_argument(
        "--opening-plies", type=int, default=None, help="random plies (default: the ladder's)"
    )
    p.add_argument("--seed", type=int, default=0, help="openings and the games' random numbers")
    p.add_argument("--json", help="also write the result to this JSON file")
    add_force_argument(p, "--json file")
    p.set_defaults(func=_accuracy)
