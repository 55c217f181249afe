"""``jaxgames export RUN_DIR OUT_DIR``: a trained agent as files to share.

    jaxgames export runs/r8-ppo shared/r8     # config.json + params.msgpack + card.json/card.md
    jaxgames eval --a shared/r8 --b random    # every loader takes the folder like a run

Writes the run's newest checkpoint's acting parameters alone (flax msgpack, no optimiser
state), the run's ``config.json`` and a model card skeleton (each training stage's config and
command, env steps, wall clock; see :mod:`jaxgames.pretrained`).
``experiments/refresh_pretrained.py`` adds the measurements to a card.
"""

from __future__ import annotations

import argparse
import os

from jaxgames.pretrained import export_agent


def _export(args: argparse.Namespace) -> int:
    card = export_agent(args.run_dir, args.out_dir, name=args.name, overwrite=args.force)
    size = sum(os.path.getsize(os.path.join(args.out_dir, f)) for f in os.listdir(args.out_dir))
    t = card["training"]
    print(
        f"exported {card['algorithm']} on {card['game']} (checkpoint {t.get('chunk')}, "
        f"{t.get('env_steps')} env steps) to {args.out_dir} ({size:,} bytes)"
    )
    print(f"use it with: jaxgames eval --a {args.out_dir} --b random")
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
    p.set_defaults(func=_export)
