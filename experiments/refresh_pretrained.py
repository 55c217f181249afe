"""Rebuild the pretrained agents shipped in ``jaxgames/pretrained/`` and their model cards.

    python experiments/refresh_pretrained.py --run reversi8=runs/ppo_reversi8 --run ...
    python experiments/refresh_pretrained.py --measure-only tic_tac_toe reversi8
    python experiments/refresh_pretrained.py --measure-only     # every shipped agent
    python experiments/refresh_pretrained.py --render-only      # card.md + docs table only
    python experiments/refresh_pretrained.py --quick            # measure copies, change nothing

``--run NAME=RUN_DIR`` exports the run's newest checkpoint to ``jaxgames/pretrained/NAME/``
(``jaxgames export``: config.json, params.msgpack, card skeleton with each training stage's
config, env steps and wall clock read from the run) and then measures it; ``--measure-only``
measures agents already shipped. The measurements rewrite the card (``card.json`` and ``card.md``):

- against random, ``--games-per-colour`` games as each colour with ``--seed``: exactly the
  games of ``jaxgames eval --a pretrained:NAME --b random --games 2N --opening-plies 0 --seed
  S`` (and of ``tests/test_pretrained.py``, which checks that the card's numbers are
  reproduced);
- where the game has a ladder, the rating of ``jaxgames rate pretrained:NAME --seed S`` (run
  through that command: Elo with its 95% interval, W/D/L per rung and colour; the agent's
  training partners are not played).

A rung of the ladder that cannot play on this machine (``perfect`` on animal shogi before
``jaxgames solve animal_shogi``) stops the script before anything is written: a card rated
on part of the ladder would not be comparable.

``--render-only`` measures nothing: it rewrites every ``card.md`` from its ``card.json`` and the
docs table, as needed after a preset change (``card.md`` derives each stage's training command
from the stage's config against today's presets; ``tests/test_pretrained.py`` says when a
card is stale).

``--quick`` measures copies of the shipped agents in a temporary folder (50 games per colour,
no ladder) and changes nothing: a smoke test.

The training facts (wall clock included) are the run's own, read from its files with the
machine the run recorded; the measurements are made here, and the card names this machine.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import time

from jaxgames import cli
from jaxgames.evaluation.ladder import game_key, ladder_path, load_ladder
from jaxgames.pretrained import (
    PRETRAINED_DIR,
    VS_RANDOM_GAMES,
    VS_RANDOM_SEED,
    export_agent,
    measure_vs_random,
    pretrained_names,
    read_card,
    shipped_table,
    write_card,
)
from jaxgames.provenance import machine_description
from jaxgames.runs import is_exported, load_agent, run_env
from jaxgames.specs import playable_rungs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NAME = re.compile(r"[a-z][a-z0-9_]*")
DOCS = os.path.join(ROOT, "docs", "pretrained.md")
# docs/pretrained.md's table of the shipped agents lies between these lines (rewritten here)
TABLE_START, TABLE_END = "<!-- shipped table: start -->", "<!-- shipped table: end -->"


def split_docs(text: str) -> tuple[str, str, str]:
    """docs/pretrained.md's ``text`` as (before the table, the shipped-agents table between
    the marker lines, from the end marker on); ``ValueError`` if the markers are missing."""
    head, start, rest = text.partition(TABLE_START)
    table, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise ValueError(f"docs/pretrained.md lacks the lines {TABLE_START} ... {TABLE_END}")
    return head, table.strip(), end + tail


def write_docs_table(path: str = DOCS) -> None:
    """Rewrite the shipped-agents table of ``path`` from the cards."""
    with open(path, encoding="utf-8") as f:
        head, _, tail = split_docs(f.read())
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{head}{TABLE_START}\n{shipped_table()}\n{tail}")


def parse_runs(items: list[str]) -> dict[str, str]:
    """``["reversi8=runs/x", ...]`` -> ``{"reversi8": "runs/x"}``; ``ValueError`` if malformed."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, run = item.partition("=")
        if not eq or not NAME.fullmatch(name) or not run:
            raise ValueError(
                f"--run {item!r} must look like NAME=RUN_DIR with NAME in lower case letters, "
                "digits and '_', e.g. reversi8=runs/ppo_reversi8"
            )
        if name in out:
            raise ValueError(f"--run names {name!r} twice")
        out[name] = run
    return out


def rate(spec: str, seed: int, games_per_rung: int | None) -> dict:
    """The JSON report of ``jaxgames rate SPEC --seed SEED`` (run through the command)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rate.json")
        args = ["rate", spec, "--seed", str(seed), "--json", out]
        args += [] if games_per_rung is None else ["--games-per-rung", str(games_per_rung)]
        if cli.main(args) != 0:
            raise RuntimeError(f"jaxgames {' '.join(args[:-2])} failed (see above)")
        with open(out) as f:
            return json.load(f)


def check_ladder_playable(name: str, folder: str) -> None:
    """``ValueError`` if a rung of the ladder of the agent in ``folder`` cannot play on this
    machine (``perfect`` on animal shogi before ``jaxgames solve animal_shogi``): a card rated
    without it would not be comparable with the ladder's other ratings."""
    env = run_env(folder)
    if not os.path.exists(ladder_path(game_key(env))):
        return
    _, missing = playable_rungs(load_ladder(game_key(env)).specs, env)
    for rung, why in missing.items():
        raise ValueError(
            f"{name}: the ladder's rung {rung!r} cannot play here, so its rating would not "
            f"be the ladder's ({why}); nothing was changed"
        )


def measure(name: str, dest: str, args: argparse.Namespace) -> dict:
    """Measure the agent in ``dest/name`` and rewrite its card; returns the card."""
    folder = os.path.join(dest, name)
    # the commands on the card name the shipped agent; elsewhere (a test's folder) its path
    spec = f"pretrained:{name}" if os.path.samefile(dest, PRETRAINED_DIR) else folder
    loaded = load_agent(folder)
    t0 = time.perf_counter()
    vs_random = measure_vs_random(loaded.policy(), loaded.env, args.games_per_colour, args.seed)
    vs_random["command"] = (
        f"jaxgames eval --a {spec} --b random --games {2 * args.games_per_colour} "
        f"--opening-plies 0 --seed {args.seed}"
    )
    print(f"{name} vs random: {vs_random['as_first']} first, {vs_random['as_second']} second")
    key = game_key(loaded.env)
    rate_command = f"jaxgames rate {spec} --seed {args.seed}" + (
        "" if args.games_per_rung is None else f" --games-per-rung {args.games_per_rung}"
    )
    if args.no_ladder:
        ladder = dict(command=rate_command, rating=None, note="not rated (--no-ladder)")
    elif not os.path.exists(ladder_path(key)):
        ladder = dict(
            command=rate_command,
            rating=None,
            note=f"not rated: no ladder for {key} ships yet (experiments/build_ladder.py)",
        )
    else:
        ladder = {"command": rate_command, **rate(spec, args.seed, args.games_per_rung)}
    card = read_card(folder)
    card["spec"] = f"pretrained:{name}"
    card["measurements"] = dict(
        date=datetime.date.today().isoformat(),
        machine=machine_description(),
        seconds=round(time.perf_counter() - t0, 1),
        vs_random=vs_random,
        ladder=ladder,
    )
    options = [
        f" --games-per-colour {args.games_per_colour}" * (args.games_per_colour != VS_RANDOM_GAMES),
        f" --seed {args.seed}" * (args.seed != VS_RANDOM_SEED),
        f" --games-per-rung {args.games_per_rung}" * (args.games_per_rung is not None),
        " --no-ladder" * args.no_ladder,
    ]
    options = "".join(options)
    card["reproduce"] = f"python experiments/refresh_pretrained.py --measure-only {name}{options}"
    write_card(folder, card)
    return card


def main(argv: list[str] | None = None) -> int:
    p = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", default=[], metavar="NAME=RUN_DIR")
    p.add_argument(
        "--measure-only",
        nargs="*",
        metavar="NAME",
        help="re-measure shipped agents (all if no name is given)",
    )
    p.add_argument(
        "--render-only",
        action="store_true",
        help="rewrite every card.md from its card.json and the docs table; measure nothing",
    )
    p.add_argument("--games-per-colour", type=int, default=VS_RANDOM_GAMES)
    p.add_argument("--seed", type=int, default=VS_RANDOM_SEED)
    p.add_argument("--games-per-rung", type=int, default=None, help="default: the ladder's")
    p.add_argument("--no-ladder", action="store_true", help="skip the ladder rating")
    p.add_argument("--dest", default=PRETRAINED_DIR, help=argparse.SUPPRESS)  # tests
    p.add_argument("--quick", action="store_true", help="measure copies; change nothing")
    args = p.parse_args(argv)
    if args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(args.dest, tmp, dirs_exist_ok=True)
            quick = ["--measure-only", *(args.measure_only or []), "--dest", tmp, "--no-ladder"]
            return main([*quick, "--games-per-colour", str(min(args.games_per_colour, 50))])
    try:
        runs = parse_runs(args.run)
        if sum([args.measure_only is not None, bool(runs), args.render_only]) > 1:
            raise ValueError(
                "give one of --run NAME=RUN_DIR ..., --measure-only [NAME ...], --render-only"
            )
        if args.measure_only is None and not runs and not args.render_only:
            raise ValueError(
                "nothing to do: give --run NAME=RUN_DIR, --measure-only or --render-only"
            )
        if args.games_per_colour < 1:
            raise ValueError(f"--games-per-colour must be >= 1, got {args.games_per_colour}")
        shipped = sorted(
            d for d in os.listdir(args.dest) if is_exported(os.path.join(args.dest, d))
        )
        names = list(runs) or args.measure_only or shipped
        unknown = [n for n in names if n not in runs and n not in shipped]
        if unknown:
            raise ValueError(f"not shipped: {', '.join(unknown)}; shipped: {', '.join(shipped)}")
        if not args.no_ladder:  # before anything is written
            for name in names:
                check_ladder_playable(name, runs.get(name) or os.path.join(args.dest, name))
        for name, run_dir in runs.items():
            export_agent(run_dir, os.path.join(args.dest, name), name=name, overwrite=True)
            print(f"exported {run_dir} -> {os.path.join(args.dest, name)}")
        for name in names:  # --render-only: every shipped agent, its card as it is
            folder = os.path.join(args.dest, name)
            if args.render_only:
                write_card(folder, read_card(folder))
            else:
                measure(name, args.dest, args)
            print(f"wrote {folder}/card.md")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if os.path.samefile(args.dest, PRETRAINED_DIR):
        size = sum(
            os.path.getsize(os.path.join(dp, f))
            for dp, _, files in os.walk(PRETRAINED_DIR)
            for f in files
            if not f.endswith(".pyc")
        )
        print(f"shipped: {', '.join(pretrained_names())} ({size / 1e6:.2f} MB in all)")
        write_docs_table()
        print(f"wrote the table of {os.path.relpath(DOCS, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(cli.report_errors(main))
