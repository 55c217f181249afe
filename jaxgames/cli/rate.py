"""``jaxgames rate SPEC``: place any player on its game's ladder of fixed opponents.

Plays every rung from the ladder's openings (each with both colours), fits the player's Elo
with a 95% bootstrap interval (random = 0) and prints W/D/L per rung and colour. A trained
agent does not play its own training partners (``--include-partners`` keeps them): the
ladder measures strength on held-out opponents.
"""

from __future__ import annotations

import argparse
import functools

import jax

from jaxgames.cli.options import (
    add_force_argument,
    add_game_arguments,
    check_output_file,
    env_for,
    write_json_file,
)
from jaxgames.evaluation.ladder import game_key, load_ladder
from jaxgames.evaluation.rating import rate_policy
from jaxgames.runs import read_run_config
from jaxgames.specs import agent_run, make_opponent, playable_rungs
from jaxgames.validation import check_int, check_seed


def held_out_rungs(spec: str, rungs: list[str]) -> tuple[list[str], list[str]]:
    """(rungs to play, rungs skipped because the agent of ``spec`` trained against them)."""
    run = agent_run(spec)
    partners = set(read_run_config(run)[1].partners) if run is not None else set()
    return [r for r in rungs if r not in partners], [r for r in rungs if r in partners]


def _rate(args: argparse.Namespace) -> int:
    check_seed("--seed", args.seed)
    if args.games_per_rung is not None:
        check_int("--games-per-rung", args.games_per_rung, minimum=2)
    if args.json:
        check_output_file(args.json, "--json", args.force)
    env = env_for(args, [args.spec])
    name = args.ladder or game_key(env)
    try:
        ladder = load_ladder(name)
    except FileNotFoundError as e:
        raise ValueError(str(e)) from None
    except OSError as e:  # a directory, no permission
        raise ValueError(f"ladder {name!r} cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise ValueError(f"ladder {name!r} is not a valid ladder ({e})") from None
    rungs = ladder.specs if args.rungs is None else [r.strip() for r in args.rungs.split(",")]
    unknown = [r for r in rungs if r not in ladder.specs]
    if unknown:
        raise ValueError(f"not rungs of this ladder: {unknown}; rungs: {', '.join(ladder.specs)}")
    skipped: list[str] = []
    if not args.include_partners:
        rungs, skipped = held_out_rungs(args.spec, rungs)
    if skipped:
        print(f"not played (training partners of {args.spec}): {', '.join(skipped)}")
    rungs, missing = playable_rungs(rungs, env)
    for rung, why in missing.items():
        print(f"not played: {rung} ({why})")
    if not rungs:
        raise ValueError("no rung left to play (all are training partners of this agent)")
    policy = make_opponent(args.spec, env)
    key, make_rung = jax.random.PRNGKey(args.seed), functools.partial(make_opponent, env=env)
    named = dict(name=args.spec, rungs=rungs, log=print)
    report = rate_policy(policy, env, ladder, make_rung, args.games_per_rung, key, **named)
    print(report)
    if args.json:
        write_json_file(
            args.json,
            {**report.to_json(), "skipped_partners": skipped, "skipped_missing": missing},
            "--json",
        )
        print(f"wrote {args.json}")
    return 0


def add_command(subparsers) -> None:
    """Register ``rate`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser("rate", help="Elo of any player on its game's ladder (95%% CI)")
    p.add_argument("spec", help="the player: a run directory or any opponent spec")
    add_game_arguments(p, default=None)
    p.add_argument(
        "--games-per-rung",
        type=int,
        default=None,
        help="even; default: the ladder's games per pairing (fewer is faster, wider CI)",
    )
    p.add_argument("--rungs", default=None, help="comma-separated subset of the ladder's rungs")
    p.add_argument("--ladder", default=None, help="a ladder JSON file (default: the game's)")
    include_help = "also play the rungs the agent trained against"
    p.add_argument("--include-partners", action="store_true", help=include_help)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the report to this JSON file")
    add_force_argument(p, "--json file")
    p.set_defaults(func=_rate)
