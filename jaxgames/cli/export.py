"""``jaxgames export RUN_DIR OUT_DIR [--portable]``: a trained agent as files to share (its
parameters alone, ``config.json`` and a model card skeleton,
:func:`jaxgames.pretrained.export_agent`); every loader takes the folder like a run.
``--portable`` adds the network as a :mod:`jax.export` artefact that runs with plain JAX
(:mod:`jaxgames.pretrained.portable`)."""

from __future__ import annotations

import argparse
import os

from jaxgames.pretrained import export_agent
from jaxgames.runs.outputs import check_output_path


def _export(args: argparse.Namespace) -> int:
    if args.name is not None and (not args.name.strip() or args.name != args.name.strip()):
        raise ValueError(
            f"invalid --name={args.name!r}: must be a name without leading or trailing spaces "
            "(leave it out for OUT_DIR's name)"
        )
    # creatable, not inside a run (RUN/checkpoints/99), not the run itself; an existing folder
    # is export_agent's to judge (only an exported agent is replaced, with --force)
    check_output_path(
        args.out_dir, "OUT_DIR", folder=True, inputs=(args.run_dir,), agent_folder=True
    )
    card = export_agent(
        args.run_dir, args.out_dir, name=args.name, overwrite=args.force, portable=args.portable
    )
    size = sum(os.path.getsize(os.path.join(args.out_dir, f)) for f in os.listdir(args.out_dir))
    t = card["training"]
    print(
        f"exported {card['algorithm']} on {card['game']} (checkpoint {t.get('chunk')}, "
        f"{t.get('env_steps')} env steps) to {args.out_dir} ({size:,} bytes)"
    )
    print(f"use it with: jaxgames eval --a {args.out_dir} --b random")
    if args.portable:
        path = os.path.join(args.out_dir, card["portable"]["file"])
        print(f"without jaxgames: jax.export.deserialize(open({path!r}, 'rb').read()).call(...)")
    return 0


def add_command(subparsers) -> None:
    """Register ``export`` on the ``jaxgames`` command line."""
    p = subparsers.add_parser(
        "export", help="write a run's agent as portable files (parameters, config, card)"
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a training run (or an exported agent)")
    p.add_argument("out_dir", metavar="OUT_DIR", help="folder to write (new or empty)")
    p.add_argument("--name", default=None, help="the agent's name on its card (default: OUT_DIR)")
    p.add_argument(
        "--force", action="store_true", help="replace an exported agent already in OUT_DIR"
    )
    p.add_argument(
        "--portable",
        action="store_true",
        help="also write the network as a jax.export artefact (policy.jaxexport, "
        "policy.json) that runs with plain JAX, without jaxgames; see docs/portable.md",
    )
    p.set_defaults(func=_export)
