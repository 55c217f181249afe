"""``jaxgames play`` and ``jaxgames replay``: argument parsing for the terminal session of
:mod:`jaxgames.terminal`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO

from jaxgames import records, render, transcripts
from jaxgames.cli.options import add_game_arguments, check_spec_texts, make_env
from jaxgames.games import shared_env
from jaxgames.runs.outputs import check_output_path
from jaxgames.specs import record_opponent
from jaxgames.terminal import COLORS, TerminalGame, one_line, replay_session
from jaxgames.validation import check_seed
from jaxgames.web import BoardServer, WebGame, agent_spec, serve


def run_play(
    args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """``play`` (``--web``: the browser board); bad arguments print one line and return 2."""
    try:
        check_seed("--seed", args.seed)
        check_spec_texts(args.agent, args.hint)
        if args.color is not None and args.color.strip().lower() not in COLORS:
            raise ValueError(f"unknown colour {args.color!r}; use one of {', '.join(COLORS)}")
        start, moves, found = None, None, None
        if args.load:
            record = transcripts.load(args.load)
            env, states = records.replay(record)
            # a record from the standard position stays one (no start: line when saved again)
            start = None if record.start is None else states[0]
            moves = record.moves
            found = record_opponent(record.players, env)  # its agent and its person's side
        else:
            env = make_env(args)
        agent_text = args.agent or (found[0] if found else "random")
        side = COLORS[args.color.strip().lower()] if args.color else found[1] if found else 0
        if args.web:
            env = shared_env(env.name, **env.config)  # one env: compiled calls are shared
            agent = agent_spec(agent_text, args.simulations)
            first = WebGame(
                env,
                agent,
                side,
                hint=args.hint,
                seed=args.seed,
                start=start,
                moves=moves or (),
            )
            server = BoardServer(first, args.port, hint=args.hint)
        else:
            if args.simulations:
                raise ValueError("--simulations is for --web; in the terminal use mcts:N:<agent>")
            shown = dict(legal=args.legal, numbers=args.numbers, hint=args.hint, seed=args.seed)
            game = TerminalGame(env, agent_text, side, stdin=stdin, stdout=stdout, **shown)
    except (ValueError, OSError) as e:
        print(f"error: {one_line(e)}", file=sys.stderr)
        return 2
    if args.web:
        out = stdout or sys.stdout
        return serve(server, lambda s: print(s, file=out, flush=True), open_browser=args.open)
    return game.run(start, moves)


def run_replay(
    args: argparse.Namespace, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """``replay``; a bad record prints ``FILE:LINE: why`` and returns 2."""
    try:
        if args.svg is not None:
            check_svg_folder(args.svg, args.file, args.force)
        record = transcripts.load(args.file)  # any format: jaxgames record, GGF, move string
        env, states = records.replay(record)
        shown = dict(legal=args.legal, numbers=args.numbers, flip=args.flip)
        if args.svg is not None:
            os.makedirs(args.svg, exist_ok=True)
            for i, st in enumerate(states):
                with open(os.path.join(args.svg, f"move_{i:03d}.svg"), "w") as f:
                    f.write(render.svg(st, env, history=record.moves[:i], **shown))
    except (ValueError, OSError) as e:
        print(f"error: {one_line(e)}", file=sys.stderr)
        return 2
    return replay_session(record, env, states, stdin=stdin, stdout=stdout, auto=args.auto, **shown)


def check_svg_folder(folder: str, record: str, force: bool) -> None:
    """``ValueError`` unless ``replay --svg`` may write ``folder``: creatable, not a run's, and
    not holding files already unless ``force`` (:func:`check_output_path`)."""
    check_output_path(folder, "--svg", folder=True, inputs=(record,))
    if os.path.isdir(folder) and os.listdir(folder) and not force:
        raise ValueError(f"--svg {folder!r} is not empty; add --force to write into it")


def add_command(subparsers: Any) -> None:
    """Add ``play`` and ``replay`` (each sets ``func(args) -> int``)."""
    p = subparsers.add_parser(
        "play",
        help="play a game in the terminal or a web browser against an agent or a human",
        description="Play a game in the terminal (or with --web in a web browser) against an "
        "agent (or another human).",
    )
    add_game_arguments(p)
    p.add_argument(
        "--agent",
        default=None,
        help="opponent: any opponent spec (random, greedy, alphabeta:D, perfect, a run "
        "directory, mcts:N:<run directory>, ...) or human (default: random; with --load, "
        "the record's agent)",
    )
    p.add_argument(
        "--color",
        "--colour",
        dest="color",
        default=None,
        help="your side: first/black/x/sente or second/white/o/gote (default: first; with "
        "--load, the record's person's side)",
    )
    p.add_argument(
        "--hint", default=None, metavar="SPEC", help="policy asked by 'hint' (default: the agent)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the agent's random choices (default: 0)"
    )
    p.add_argument("--legal", action="store_true", help="start with legal-move marks on")
    p.add_argument("--numbers", action="store_true", help="start with move numbers on")
    p.add_argument(
        "--load",
        metavar="FILE",
        default=None,
        help="continue the game saved in FILE (its game and options replace "
        "--game/--size/--game-option)",
    )
    p.add_argument(
        "--web",
        action="store_true",
        help="play in a web browser instead: serve the board on 127.0.0.1 and print its address",
    )
    p.add_argument(
        "--port",
        type=int,
        default=8765,
        help="with --web: the port to serve on (default: 8765; 0: any free port)",
    )
    p.add_argument(
        "--open", action="store_true", help="with --web: open the page in the default browser"
    )
    p.add_argument(
        "--simulations",
        type=int,
        default=0,
        metavar="N",
        help="with --web: the agent searches N simulations per move (mcts:N:<agent>, uct:N; "
        "default 0: the agent as given); the page changes it for each new game",
    )
    p.set_defaults(func=run_play)
    r = subparsers.add_parser("replay", help="step through a saved game record")
    r.add_argument(
        "file", help="a game record (saved with 'save FILE' in play), a GGF file or a move string"
    )
    r.add_argument("--auto", action="store_true", help="print every position without waiting")
    r.add_argument("--legal", action="store_true", help="mark legal moves")
    r.add_argument("--numbers", action="store_true", help="show move numbers on the pieces")
    r.add_argument("--flip", action="store_true", help="show the board turned round")
    r.add_argument(
        "--svg", metavar="DIR", default=None, help="also write each position as DIR/move_NNN.svg"
    )
    r.add_argument("--force", action="store_true", help="--svg: write into a folder with files")
    r.set_defaults(func=run_replay)
