"""``jaxgames render``: draw a saved game (a jaxgames record, a GGF file or a reversi move
string, :func:`jaxgames.transcripts.load`) as text, SVG, an animated SVG or a grid."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxgames import records, render, transcripts
from jaxgames.cli.options import add_force_argument, check_output_file
from jaxgames.terminal import one_line
from jaxgames.validation import MAX_INT, check_float, check_int

#: the longest --animate step (an hour a move: anything longer is a typo)
MAX_SECONDS = 3600.0


def run_render(args: argparse.Namespace) -> int:
    """``render``; a bad record or option prints one line and returns 2."""
    try:
        targets = [getattr(args, flag) for flag in ("animate", "svg", "grid")]
        for flag, path in zip(("animate", "svg", "grid"), targets):
            if path is not None:
                check_output_file(path, f"--{flag}", args.force, inputs=(args.file,))
        written_twice = {p for p in targets if p is not None and targets.count(p) > 1}
        if written_twice:
            raise ValueError(f"{sorted(written_twice)[0]!r} is given for two outputs; one each")
        check_int("--every", args.every, maximum=MAX_INT)
        check_float("--seconds", args.seconds, 0.0, MAX_SECONDS, low_open=True)
        record = transcripts.load(args.file)
        env, states = records.replay(record)
        n = len(record.moves)
        ply = n if args.move is None else args.move
        if not 0 <= ply <= n:
            raise ValueError(f"--move {ply} is outside the game's moves 0..{n}")
        shown = dict(history=record.moves[:ply], numbers=args.numbers, flip=args.flip)
        outputs = {
            "animate": lambda: render.svg_animation(
                states,
                env,
                record.moves,
                seconds=args.seconds,
                numbers=args.numbers,
                flip=args.flip,
            ),
            "svg": lambda: render.svg(states[ply], env, legal=args.legal, **shown),
            "grid": lambda: render.svg_game(
                states, env, record.moves, every=args.every, numbers=args.numbers
            ),
        }
        written = False
        for flag, draw in outputs.items():
            path = getattr(args, flag)
            if path is not None:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(draw())
                print(f"wrote {path}")
                written = True
        if not written:
            print(render.text(states[ply], env, legal=args.legal, **shown))
    except (ValueError, OSError) as e:
        print(f"error: {one_line(e)}", file=sys.stderr)
        return 2
    return 0


def add_command(subparsers: Any) -> None:
    """Add ``render`` (sets ``func(args) -> int``)."""
    p = subparsers.add_parser(
        "render",
        help="draw a saved game: text, SVG, an animated SVG or a grid of positions",
        description="Draw a saved game (jaxgames record, GGF or reversi move string). Without "
        "--animate/--svg/--grid, print the position as text.",
    )
    p.add_argument("file", help="a game record, a GGF file or a reversi move string file")
    p.add_argument("--animate", metavar="OUT", help="write the whole game as an animated SVG")
    p.add_argument("--svg", metavar="OUT", help="write one position as SVG (see --move)")
    p.add_argument("--grid", metavar="OUT", help="write a grid of positions as one SVG")
    p.add_argument(
        "--move", type=int, default=None, help="the position after this many moves (default: last)"
    )
    p.add_argument("--every", type=int, default=1, help="--grid: every N-th position (default 1)")
    p.add_argument(
        "--seconds", type=float, default=0.8, help="--animate: seconds per move (default 0.8)"
    )
    p.add_argument("--legal", action="store_true", help="mark legal moves")
    p.add_argument("--numbers", action="store_true", help="show move numbers on the pieces")
    p.add_argument("--flip", action="store_true", help="show the board turned round")
    add_force_argument(p)
    p.set_defaults(func=run_render)
