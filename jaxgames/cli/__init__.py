"""Command line: ``jaxgames <command> ...`` (or ``python -m jaxgames.cli <command> ...``).

    jaxgames train ppo --game tic_tac_toe --quick
    jaxgames eval --game reversi --size 8 --a runs/X --b alphabeta:2 --games 4000
    jaxgames rate runs/X                       # Elo on the game's ladder of engines
    jaxgames play --game reversi --size 8 --agent runs/X
    jaxgames replay game.txt

One module per command in this package, each with ``add_command(subparsers)`` (adds its
sub-parser and sets ``func=handler``, ``handler(args) -> int`` exit code); adding a command is
one line in :data:`COMMANDS`. Game options are spelled the same everywhere
(:mod:`jaxgames.cli.options`). Training algorithms come from
:data:`jaxgames.agents.registry.ALGORITHMS` automatically.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from jaxgames.cli import eval as eval_command
from jaxgames.cli import play, rate, train
from jaxgames.compile_cache import enable_compile_cache

#: command modules, in the order ``--help`` lists them (``play`` adds ``play`` and ``replay``)
COMMANDS = (train, eval_command, rate, play)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxgames", description="Board games in JAX and agents trained on device."
    )
    parser.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="do not use the persistent XLA compilation cache (default: on, under "
        "~/.cache/jaxgames/xla; also JAXGAMES_COMPILE_CACHE=0)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (2 for bad arguments/config, 130 if interrupted)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # --no-compile-cache is a global flag, accepted after the command too
    no_cache = "--no-compile-cache" in argv
    args, extra = parser.parse_known_args([a for a in argv if a != "--no-compile-cache"])
    args.overrides = extra
    if extra and args.command != "train":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    enable_compile_cache(enabled=not no_cache)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(
            "\ninterrupted; rerun the same command to resume from the last checkpoint",
            file=sys.stderr,
        )
        return 130
    except ValueError as e:  # includes CheckpointError and RunNotFoundError
        print(f"error: {e}", file=sys.stderr)
        return 2
