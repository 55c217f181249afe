"""``jaxgames eval --a SPEC --b SPEC``: play two players (opponent specs, :mod:`jaxgames.specs`)
against each other and print W/D/L with 95% CIs (the game is read from a run if not given).

Game k as first and game k as second player open with the same ``--opening-plies`` random
plies (by default as ``match``: the plies of the game's ladder, 0 on tic-tac-toe; deterministic
players then meet varied games). Every game is fingerprinted move for move: the output says how many
are distinct, and the intervals count each distinct game once (a game repeated is not an
independent sample; a single game repeated gets no interval).
"""

from __future__ import annotations

import argparse

import jax
import numpy as np

from jaxgames.cli.options import (
    add_batch_argument,
    add_force_argument,
    add_game_arguments,
    check_output_file,
    env_for,
    write_json_file,
)
from jaxgames.evaluation.match import arena, check_games
from jaxgames.evaluation.reports import default_opening_plies
from jaxgames.specs import make_opponent
from jaxgames.validation import check_int, check_seed


def _eval(args: argparse.Namespace) -> int:
    check_games(args.games, None, "--games")
    if args.batch is not None:
        check_int("--batch", args.batch)
    if args.opening_plies is not None:
        check_int("--opening-plies", args.opening_plies, minimum=0)
    check_seed("--seed", args.seed)
    if args.json:
        check_output_file(args.json, "--json", args.force)
    env = env_for(args, [args.a, args.b])
    plies = default_opening_plies(env) if args.opening_plies is None else args.opening_plies
    longest = env.max_game_length
    if longest is not None and plies >= longest:
        raise ValueError(
            f"invalid --opening-plies={plies}: must be less than a game's length "
            f"(a game of {env!r} lasts at most {longest} plies), or the players never move"
        )
    a, b = make_opponent(args.a, env), make_opponent(args.b, env)
    key = jax.random.PRNGKey(args.seed)
    result = arena(
        a, b, env, args.games, key, opening_plies=plies, fingerprint=True, batch=args.batch
    )
    if plies and bool(np.all(result.plies <= plies)):
        raise ValueError(
            f"invalid --opening-plies={plies}: every one of the {args.games} games ended "
            "during the random opening, so the players never moved; use fewer"
        )
    overall = result.overall
    print(
        f"{env!r}: A = {args.a}, B = {args.b}, {overall.games} games "
        f"({overall.samples} distinct), {plies} random opening plies"
    )
    print(result)
    if overall.repeats:
        print(
            f"note: only {overall.samples} of the {overall.games} games are distinct; the "
            "others repeat one of them move for move (deterministic players from the same "
            "start or the same random opening), so the intervals count each distinct game once"
            + ("; --opening-plies N varies the games" if not plies else "")
        )
    if args.json:
        data = {"game": env.name, "options": env.config, "a": args.a, "b": args.b}
        data["opening_plies"] = plies
        write_json_file(args.json, {**data, **result.to_dict()}, "--json")
        print(f"wrote {args.json}")
    return 0


def add_command(subparsers) -> None:
    """Register ``eval`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser("eval", help="play policy A against policy B (W/D/L with 95%% CIs)")
    add_game_arguments(p, default=None)
    p.add_argument("--a", required=True, help="policy A: a run directory or an opponent spec")
    p.add_argument("--b", default="random", help="policy B (default: random)")
    games_help = "games in total, half with each colour (default 1000)"
    p.add_argument("--games", type=int, default=1000, help=games_help)
    p.add_argument(
        "--opening-plies",
        type=int,
        default=None,
        help="random plies before the policies take over (default, as match: the plies of "
        "the game's ladder, 4 on reversi and animal shogi; 0 on tic-tac-toe)",
    )
    p.add_argument("--seed", type=int, default=0)
    add_batch_argument(p)
    p.add_argument("--json", help="also write the result to this JSON file")
    add_force_argument(p, "--json file")
    p.set_defaults(func=_eval)
