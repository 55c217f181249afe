"""``jaxgames eval``: play two policies against each other and print W/D/L with 95% CIs.

    jaxgames eval --game reversi --size 8 --a runs/X --b alphabeta:2 --games 4000
    jaxgames eval --a runs/ttt-ppo --b perfect            # the game is read from the run

Policies are opponent specs (``random``, ``greedy``, ``alphabeta:D``, ``minimax:D``,
``perfect``) or run directories. ``--json FILE`` also writes the result as JSON.
"""

from __future__ import annotations

import argparse
import json
import os


def _game_of(args: argparse.Namespace):
    import jaxgames
    from jaxgames.cli import _game_options

    if args.game is not None:
        return jaxgames.make(args.game, **_game_options(args))
    for spec in (args.a, args.b):
        if os.path.isdir(spec):
            from jaxgames.training.driver import read_run_config

            _, config = read_run_config(spec)
            return jaxgames.make(config.game, **dict(config.game_options or {}))
    raise ValueError("--game is required unless --a or --b is a run directory")


def _eval(args: argparse.Namespace) -> int:
    import jax

    from jaxgames.evaluation import arena, make_opponent

    env = _game_of(args)
    a, b = make_opponent(args.a, env), make_opponent(args.b, env)
    result = arena(
        a, b, env, args.games, jax.random.PRNGKey(args.seed), opening_plies=args.opening_plies
    )
    print(
        f"{env!r}: A = {args.a}, B = {args.b}, {args.games} games, {args.opening_plies} random opening plies"
    )
    print(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "game": env.name,
                    "options": env.config,
                    "a": args.a,
                    "b": args.b,
                    **result.to_dict(),
                },
                f,
                indent=2,
            )
        print(f"wrote {args.json}")
    return 0


def add_eval_command(subparsers) -> None:
    """Register ``eval`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser("eval", help="play policy A against policy B (W/D/L with 95%% CIs)")
    p.add_argument(
        "--game", help="game name (default: the game of a run directory given as --a/--b)"
    )
    p.add_argument("--size", type=int, help="board size (reversi)")
    p.add_argument(
        "--game-option", action="append", metavar="NAME=VALUE", help="other game options"
    )
    p.add_argument("--a", required=True, help="policy A: a run directory or an opponent spec")
    p.add_argument("--b", default="random", help="policy B (default: random)")
    p.add_argument(
        "--games",
        type=int,
        default=1000,
        help="games in total, half with each colour (default 1000)",
    )
    p.add_argument(
        "--opening-plies", type=int, default=0, help="random plies before the policies take over"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the result to this JSON file")
    p.set_defaults(func=_eval)
