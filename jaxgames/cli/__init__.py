"""Command line: ``jaxgames <command> ...`` (or ``python -m jaxgames.cli <command> ...``).

    jaxgames train ppo --game tic_tac_toe --quick
    jaxgames eval --game reversi --size 8 --a runs/X --b alphabeta:2 --games 4000
    jaxgames match runs/X engine:2 --report lengths  # from varied openings, both colours
    jaxgames rate runs/X                       # Elo on the game's ladder of engines
    jaxgames play --game reversi --size 8 --agent runs/X
    jaxgames replay game.txt
    jaxgames export runs/X shared/X         # the agent as portable files
    jaxgames engine --protocol nboard runs/X   # an NBoard engine on stdin/stdout
    jaxgames render game.txt --animate game.svg  # the whole game as an animated SVG

One module per command, each with ``add_command(subparsers)`` setting ``func(args) -> int``
(the exit code); adding a command is one line in :data:`COMMANDS`. Errors and warnings are one
line on stderr (``error: ...`` exits with 2). The command modules (and JAX) are imported inside
:func:`main` with Ctrl-C held back, so an early Ctrl-C ends cleanly (130) instead of
interrupting an extension module's import.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import select
import sys
import warnings
from typing import Any, Callable, NoReturn, Sequence

from jaxgames.compile_cache import enable_compile_cache
from jaxgames.signals import interrupts_held

#: command modules in ``--help`` order (``play`` adds ``play`` and ``replay``)
COMMANDS = (
    "train",
    "eval",
    "match",
    "rate",
    "play",
    "render",
    "export",
    "solve",
    "accuracy",
    "engine",
)


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are the project's one ``error:`` line (exit 2),
    naming the fault and where the help is, in place of argparse's usage block; its
    sub-command parsers are of this class too. The ``experiments/`` scripts use it."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {' '.join(message.split())} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="jaxgames", description="Board games in JAX and agents trained on device."
    )
    parser.add_argument(
        "--no-compile-cache",
        action="store_true",
        help="do not use the persistent XLA compilation cache (default: on, under "
        "~/.cache/jaxgames/xla; also JAXGAMES_COMPILE_CACHE=0)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_command(sub)
    return parser


def _one_line_warning(message: Any, category: type, *args: Any, **kwargs: Any) -> str:
    return f"warning: {' '.join(str(message).split())}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (2 for bad arguments/config, 130 if interrupted)."""
    with interrupts_held() as interrupted:
        parser = build_parser()  # imports the commands: JAX, Flax, ...
    if interrupted:
        print("\ninterrupted", file=sys.stderr)
        return 130
    argv = list(sys.argv[1:] if argv is None else argv)
    # --no-compile-cache is a global flag, accepted after the command too
    no_cache = "--no-compile-cache" in argv
    args, extra = parser.parse_known_args([a for a in argv if a != "--no-compile-cache"])
    args.overrides = extra
    if extra and args.command != "train":
        parser.exit(
            2,
            f"error: unrecognized arguments: {' '.join(extra)} "
            f"(see {parser.prog} {args.command} --help)\n",
        )
    if isinstance(sys.stdin, io.TextIOWrapper):  # an undecodable byte (a Latin-1 name in a
        sys.stdin.reconfigure(errors="replace")  # GUI's game) is a character, not an exit

    def run() -> Any:
        enable_compile_cache(enabled=not no_cache)  # inside: its warning is one line too
        return args.func(args)

    resume = "; rerun the same command to resume from the last checkpoint"
    return report_errors(run, f"interrupted{resume if args.command == 'train' else ''}")


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (``poll`` reports an error on
    it); if so it is pointed at the null device, so that the exit's flush does not fail
    again."""
    try:
        fd = sys.stdout.fileno()
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        if not any(events & select.POLLERR for _, events in poll.poll(0)):
            return False
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
        return True
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no file descriptor
        return False


def report_errors(run: Callable[[], Any], interrupted: str = "interrupted") -> int:
    """``run()`` as a program (commands, ``experiments/`` scripts): its exit code (an int it
    returns, else 0); bad input (``ValueError``) and out of memory are one ``error:`` line
    (exit 2), a file system error one line naming the path (exit 2), as are an external
    player's failure and a solver that cannot be built, warnings one line each,
    Ctrl-C ``interrupted`` (130)."""
    format_warning = warnings.formatwarning
    warnings.formatwarning = _one_line_warning
    try:
        result = run()
        return result if isinstance(result, int) else 0
    except KeyboardInterrupt:
        print(f"\n{interrupted}", file=sys.stderr)
        return 130
    except ValueError as e:  # includes CheckpointError, RunNotFoundError, RunLockedError
        from jaxgames.terminal import one_line

        print(f"error: {one_line(e)}", file=sys.stderr)
        return 2
    except BrokenPipeError as e:
        if _stdout_closed():  # the reader went away (``| head``): nothing left to say
            return 0
        print(f"error: {filesystem_error(e)}", file=sys.stderr)
        return 2
    except OSError as e:  # a missing, unreadable or unwritable path: named, never a traceback
        print(f"error: {filesystem_error(e)}", file=sys.stderr)
        return 2
    except Exception as e:  # out of memory: a size no check could foresee (batch x network)
        from jaxgames.core import external_error
        from jaxgames.evaluation.native import SolverUnavailable

        external = external_error(e)  # an engine program's failure inside a JAX callback
        if external is not None:
            print(f"error: {external}", file=sys.stderr)
            return 2
        if isinstance(e, SolverUnavailable):  # no C compiler, a failed build
            from jaxgames.terminal import one_line

            print(f"error: {one_line(e)}", file=sys.stderr)
            return 2
        if not _out_of_memory(e):
            raise
        print(
            f"error: out of memory ({_first_line(e)}); use fewer games (--num-envs, --games) "
            "or a smaller network",
            file=sys.stderr,
        )
        return 2
    finally:
        warnings.formatwarning = format_warning


def filesystem_error(error: OSError) -> str:
    """One line for a file system error, naming its path(s): ``'runs/R/x': Permission
    denied``."""
    names = [repr(str(f)) for f in (error.filename, error.filename2) if f is not None]
    why = error.strerror or _first_line(error)
    if not names:
        return f"file system error: {why}"
    return f"{' -> '.join(names)}: {why}"


def _out_of_memory(error: BaseException) -> bool:
    """``error`` is the host or an XLA device running out of memory."""
    if isinstance(error, MemoryError):
        return True
    text = str(error)
    return type(error).__name__ in ("JaxRuntimeError", "XlaRuntimeError") and (
        "RESOURCE_EXHAUSTED" in text or "Out of memory" in text
    )


def _first_line(error: BaseException, limit: int = 200) -> str:
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return text if len(text) <= limit else text[:limit] + "..."
