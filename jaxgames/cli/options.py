"""The game options every command takes, spelled one way: ``--game NAME``, ``--size N`` and
``--game-option NAME=VALUE`` (repeatable)."""

from __future__ import annotations

import argparse
from typing import Any

from jaxgames.core import Env
from jaxgames.games import make
from jaxgames.runs import run_env
from jaxgames.runs.outputs import check_output_path
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
        key = key.strip()
        if key in options:
            raise ValueError(f"--game-option {key} is given twice; give each option once")
        options[key] = parse_scalar(value.strip())
    if args.size is not None:
        if "size" in options:
            raise ValueError(
                f"--size {args.size} and --game-option size={options['size']!r} both give the "
                "board size; give it once"
            )
        options["size"] = args.size
    return options


def make_env(args: argparse.Namespace) -> Env:
    """The env named by ``--game`` with its options."""
    return make(args.game, **game_options(args))


def check_spec_texts(*specs: str | None) -> None:
    """``ValueError`` for a spec typed with leading or trailing spaces (``--a " random"``):
    the command would name the player one way and play another (the API strips them)."""
    for text in specs:
        if text is not None and text != text.strip():
            raise ValueError(f"opponent spec {text!r} has leading or trailing spaces; remove them")


def env_for(args: argparse.Namespace, specs: list[str]) -> Env:
    """``--game`` if given, else the game of the first trained agent among ``specs`` (each
    checked by :func:`check_spec_texts`)."""
    check_spec_texts(*specs)
    if args.game is not None:
        return make_env(args)
    for text in specs:
        run = agent_run(text)
        if run is not None:
            return run_env(run)
    raise ValueError("--game is required unless a player is a trained agent (a run directory)")


def check_output_file(
    path: str, flag: str, force: bool = False, inputs: tuple[str, ...] = ()
) -> None:
    """``ValueError`` unless ``path`` may be written as a file, checked before a command
    computes what it would write (:func:`jaxgames.runs.outputs.check_output_path`: never a
    run's own files or the input, an existing file only with ``force``)."""
    check_output_path(path, flag, force=force, inputs=inputs)


def add_force_argument(p: argparse.ArgumentParser, what: str = "output files") -> None:
    """``--force``: overwrite existing ``what`` (never a run's own files)."""
    p.add_argument(
        "--force", action="store_true", help=f"overwrite existing {what} (never a run's files)"
    )


def add_batch_argument(p: argparse.ArgumentParser) -> None:
    """``--batch``: games played at once (:data:`jaxgames.evaluation.match.BATCH` by default)."""
    from jaxgames.evaluation.match import BATCH

    p.add_argument(
        "--batch",
        type=int,
        default=None,
        help=f"games played at once (default {BATCH}); fewer take less memory, and the games "
        "are the same",
    )


def write_json_file(path: str, data: Any, flag: str) -> None:
    """Write ``data`` as JSON to ``path`` (``ValueError`` naming ``flag`` if that fails)."""
    import json

    try:
        with open(path, "w") as f:
            json.dump(data, f, indent=2)
    except OSError as e:
        raise ValueError(f"{flag} {path!r}: cannot write it ({e.strerror or e})") from None
