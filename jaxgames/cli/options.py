"""The game options every command takes, spelled one way: ``--game NAME``, ``--size N`` and
``--game-option NAME=VALUE`` (repeatable)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from jaxgames.core import Env
from jaxgames.games import make
from jaxgames.runs import run_env
from jaxgames.specs import agent_run
from jaxgames.validation import parse_scalar


def add_game_arguments(p: argparse.ArgumentParser, default: str | None = "tic_tac_toe") -> None:
    """``--game``, ``--size`` and ``--game-option`` on ``p`` (``default`` ``None``: the caller
    decides, e.g. from a run directory)."""
    game_help = f"game name (default: {default})" if default else "game name"
    p.add_argument("--game", default=default, help=game_help)
    p.add_argument("--size", type=int, default=None, help="board size (reversi)")
    p.add_argument(
        "--game-option",
        action="append",
        metavar="NAME=VALUE",
        help="another option of jaxgames.make (repeatable)",
    )


def game_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``jaxgames.make`` options of parsed ``args``; ``ValueError`` for a malformed one."""
    options: dict[str, Any] = {}
    for item in args.game_option or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--game-option {item!r} must look like NAME=VALUE, e.g. size=6")
        options[key.strip()] = parse_scalar(value.strip())
    if args.size is not None:
        options["size"] = args.size
    return options


def make_env(args: argparse.Namespace) -> Env:
    """The env named by ``--game`` with its options."""
    return make(args.game, **game_options(args))


def env_for(args: argparse.Namespace, specs: list[str]) -> Env:
    """``--game`` if given, else the game of the first trained agent among ``specs``."""
    if args.game is not None:
        return make_env(args)
    for text in specs:
        run = agent_run(text)
        if run is not None:
            return run_env(run)
    raise ValueError("--game is required unless a player is a trained agent (a run directory)")


def check_output_file(path: str, flag: str) -> None:
    """``ValueError`` unless ``path`` can be written as a file (checked before a command
    computes what it would write)."""
    if os.path.isdir(path):
        raise ValueError(f"{flag} {path!r} is a directory; give a file name, e.g. {path}/out.json")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{flag} {path!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{flag} {path!r}: folder {folder!r} is not writable")


def write_json_file(path: str, data: Any, flag: str) -> None:
    """Write ``data`` as JSON to ``path`` (``ValueError`` naming ``flag`` if that fails)."""
    import json

    try:
        with open(path, "w") as f:
            json.dump(data, f, indent=2)
    except OSError as e:
        raise ValueError(f"{flag} {path!r}: cannot write it ({e.strerror or e})") from None
