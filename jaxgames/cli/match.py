"""``jaxgames match A B``: two players from the same openings, both colours, with reports.

    jaxgames match engine:2 greedy --game reversi --size 6 --games 200
    jaxgames match pretrained:animal_shogi engine:4 --report lengths
    jaxgames match mcts:64:pretrained:reversi6 engine:4 --report exact:14 --json out.json

Players are opponent specs (:mod:`jaxgames.specs`); ``--game`` may be left out when one is a
trained agent. The protocol, the intervals and the reports are those of
:func:`jaxgames.evaluation.reports.run_match` (docs/match.md).
"""

from __future__ import annotations

import argparse

from jaxgames.cli.options import (
    add_batch_argument,
    add_force_argument,
    add_game_arguments,
    check_output_file,
    env_for,
    write_json_file,
)
from jaxgames.evaluation.match import check_games
from jaxgames.evaluation.reports import REPORTS, format_match, parse_reports, run_match
from jaxgames.specs import make_opponent
from jaxgames.validation import check_int, check_seed


def _match(args: argparse.Namespace) -> int:
    check_games(args.games, None, "--games", games_each=2)
    if args.batch is not None:
        check_int("--batch", args.batch)
    if args.opening_plies is not None:
        check_int("--opening-plies", args.opening_plies, minimum=0)
    if args.max_plies is not None:
        check_int("--max-plies", args.max_plies)
    check_seed("--seed", args.seed)
    if args.json:
        check_output_file(args.json, "--json", args.force)
    env = env_for(args, [args.a, args.b])
    reports = parse_reports(args.report or [], env)
    a, b = make_opponent(args.a, env), make_opponent(args.b, env)
    out = run_match(
        a, b, env, games=args.games, opening_plies=args.opening_plies, seed=args.seed,
        reports=reports, max_plies=args.max_plies, batch=args.batch,
    )  # fmt: skip
    print(f"{env!r}: A = {args.a}, B = {args.b}")
    print(format_match(out))
    if args.json:
        write_json_file(args.json, {"a": args.a, "b": args.b, **out}, "--json")
        print(f"wrote {args.json}")
    return 0


def add_command(subparsers) -> None:
    """Register ``match`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser(
        "match", help="A against B from the same openings, both colours (W/D/L, reports)"
    )
    p.add_argument("a", help="player A: an opponent spec or a run directory")
    p.add_argument("b", help="player B")
    add_game_arguments(p, default=None)
    p.add_argument(
        "--games", type=int, default=100, help="openings, each played twice (default 100)"
    )
    p.add_argument(
        "--opening-plies",
        type=int,
        default=None,
        help="random plies of each opening (default: the plies of the game's ladder, 4 on "
        "reversi and animal shogi; 0 on tic-tac-toe)",
    )
    p.add_argument("--seed", type=int, default=0, help="openings and the games' random numbers")
    p.add_argument(
        "--report",
        action="append",
        metavar="REPORT",
        help=f"also report (repeatable): {', '.join(REPORTS)}",
    )
    p.add_argument("--max-plies", type=int, default=None, help="cap on plies after the opening")
    add_batch_argument(p)
    p.add_argument("--json", help="also write the result to this JSON file")
    add_force_argument(p, "--json file")
    p.set_defaults(func=_match)
