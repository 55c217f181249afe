"""``jaxgames engine --protocol nboard SPEC``: any player as an engine that othello GUIs and
programs run (the NBoard protocol on stdin and stdout, :mod:`jaxgames.nboard`)::

    jaxgames engine --protocol nboard mcts:64:pretrained:reversi8
    jaxgames match nboard:'jaxgames engine --protocol nboard greedy' engine:2 --game reversi

Only protocol lines go to stdout; warnings (an illegal move or GGF from the GUI, a board size
the player cannot play) are one line each on stderr, and the position stays as it was.
"""

from __future__ import annotations

import argparse
import sys

from jaxgames.core import Env
from jaxgames.games import make
from jaxgames.nboard import serve
from jaxgames.runs import run_env
from jaxgames.specs import agent_run, check_spec, make_opponent
from jaxgames.validation import check_seed

PROTOCOLS = ("nboard",)


def _engine(args: argparse.Namespace) -> int:
    if args.protocol not in PROTOCOLS:
        raise ValueError(f"--protocol {args.protocol!r}: jaxgames speaks {', '.join(PROTOCOLS)}")
    check_seed("--seed", args.seed)
    run = agent_run(args.spec)  # ValueError for an unknown pretrained name
    if run is not None and run_env(run).name != "reversi":
        raise ValueError(
            f"{args.spec!r} plays {run_env(run).name}; NBoard engines play reversi (othello)"
        )
    check_spec(args.spec, run_env(run) if run is not None else make("reversi", size=8))

    def make_policy(env: Env):
        return make_opponent(args.spec, env)

    lines = iter(sys.stdin.readline, "")  # each line as soon as it arrives (a pipe)
    return serve(make_policy, f"jaxgames {args.spec}", lines, sys.stdout, seed=args.seed)


def add_command(subparsers) -> None:
    """Register ``engine`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser(
        "engine",
        help="run a player as an engine speaking a protocol on stdin/stdout (NBoard)",
        description="Run a player as an NBoard engine (reversi; the board size comes from the "
        "GUI's 'set game', 8x8 until then). See docs/nboard.md.",
    )
    p.add_argument("--protocol", default="nboard", help="the protocol (default: nboard)")
    p.add_argument("spec", metavar="SPEC", help="the player: any spec (jaxgames eval --help)")
    p.add_argument("--seed", type=int, default=0, help="seed of the player's randomness")
    p.set_defaults(func=_engine)
