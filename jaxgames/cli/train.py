"""``jaxgames train ALGORITHM``: train an agent into ``runs/<name>/`` (resumable).

jaxgames train ppo --game tic_tac_toe --quick
jaxgames train ppo --game reversi --size 6 --total-steps 3000000 --run-name rev6
jaxgames train ppo --game tic_tac_toe --learning-rate=1e-3 --net.hidden=32   # any config field
jaxgames train ppo --game reversi --devices 4      # split the games over 4 devices
jaxgames train ppo --game tic_tac_toe --logger jsonl,tensorboard   # also TensorBoard (or wandb)
jaxgames train ppo --game tic_tac_toe --seeds 0 1 2   # in one vmap: runs/<name>/seed<s>/ each
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from jaxgames import distributed
from jaxgames.agents.config import override_key, parse_overrides
from jaxgames.agents.presets import default_config
from jaxgames.agents.registry import ALGORITHMS
from jaxgames.cli import options
from jaxgames.runs.outputs import check_output_path, run_owning
from jaxgames.training.driver import run_training, seed_run_dir
from jaxgames.training.loggers import LOGGERS, parse_loggers
from jaxgames.validation import check_int


def default_run_name(
    algorithm: str, game: str, game_options: dict, seed: int | list[int], quick: bool
) -> str:
    """Deterministic name, so rerunning the same command resumes the same run (a list of
    seeds: ``...-seeds0-1-2``)."""
    opts = "".join(f"-{k}{v}" for k, v in sorted(game_options.items()))
    seeds = "s" + "-".join(map(str, seed)) if isinstance(seed, list) else str(seed)
    return f"{game}{opts}-{algorithm}-seed{seeds}{'-quick' if quick else ''}"


def check_run_name(name: str) -> str:
    """``name`` if it names a run inside ``--runs-dir`` (relative, not empty, no ``..``);
    ``ValueError`` otherwise."""
    parts = name.replace("\\", "/").split("/")
    if not name.strip() or os.path.isabs(name) or any(p in ("", ".", "..") for p in parts):
        raise ValueError(
            f"invalid --run-name={name!r}: must be a directory name inside --runs-dir, such as "
            "'ttt-ppo' (not empty, not absolute, no '.' or '..' parts); leave it out for the "
            "default name"
        )
    return name


def check_devices(text: str) -> str:
    """``--devices``: ``all`` or a count >= 1 (``ValueError`` otherwise; the count is checked
    against the devices present when the run starts)."""
    if text.strip().lower() == "all":
        return "all"
    if not (text.isascii() and text.strip().isdigit()) or int(text) < 1:
        raise ValueError(f"invalid --devices={text!r}: must be 'all' or a count >= 1")
    return text.strip()


def _fields_given(overrides: dict[str, str]) -> dict[str, str]:
    """The config field each override sets -> the override's key as typed
    (``game-options.size`` -> ``game_options``)."""
    return {override_key(k)[0]: k for k in overrides}


def train_config(args: argparse.Namespace) -> Any:
    """The config of a parsed ``train`` command line (preset, then every override)."""
    overrides = parse_overrides(args.overrides)
    spelt = _fields_given(overrides)
    for name in ("seed", "total_steps"):
        if getattr(args, name) is not None:
            if name in spelt:  # the flag would silently win
                k = spelt[name]
                raise ValueError(
                    f"--{k}={overrides[k]} and --{name.replace('_', '-')} {getattr(args, name)} "
                    f"both set {name}: give it once"
                )
            overrides[name] = getattr(args, name)
    if args.scale_envs is not None:
        check_int("--scale-envs", args.scale_envs)
    game_options = options.game_options(args)
    if "game_options" in spelt and game_options:
        raise ValueError(
            f"--{spelt['game_options']}={overrides[spelt['game_options']]} and --size / "
            "--game-option both give the game's options: give them one way"
        )
    config = default_config(
        args.algorithm, args.game, game_options, quick=args.quick, scale_envs=args.scale_envs
    )
    return config.override(overrides)


def run_directory(args: argparse.Namespace, config: Any) -> str:
    """The run's folder inside ``--runs-dir``: ``--run-name``, or :func:`default_run_name` of
    the game options trained (given as flags or as ``--game-options``). ``ValueError`` for a
    parent that cannot hold runs or a name that puts the run inside another run."""
    # the parent of the runs: not inside a run, creatable (checked once the config is valid)
    check_output_path(args.runs_dir, "--runs-dir", folder=True)
    if args.run_name is None:
        seed = config.seed if args.seeds is None else args.seeds
        name = default_run_name(args.algorithm, args.game, config.game_options, seed, args.quick)
    else:
        name = check_run_name(args.run_name)
    run_dir = os.path.join(args.runs_dir, name)
    owner = run_owning(os.path.realpath(os.path.dirname(run_dir)))
    if owner is not None:  # a run inside another run's folder would pass for its files
        raise ValueError(f"--run-name {name!r} puts the run inside the run {owner[0]!r}")
    return run_dir


def _train(args: argparse.Namespace) -> int:
    loggers = parse_loggers(args.logger)  # a missing library: one line naming the extra
    if args.distributed:
        distributed.initialize()
    devices = check_devices(args.devices)
    config = train_config(args)
    if args.seeds is not None and args.seed is not None:
        raise ValueError("give --seed or --seeds, not both")
    run_dir = run_directory(args, config)
    options_text = f"{config.game_options} " if config.game_options else ""
    print(f"training {args.algorithm} on {args.game} {options_text}-> {run_dir}", flush=True)
    summary = run_training(
        args.algorithm,
        config,
        run_dir,
        progress=not args.no_progress,
        devices=devices,
        loggers=loggers,
        seeds=args.seeds,
    )
    seeds = summary.seeds or [None]
    records = summary.records if summary.seeds else [summary.records]
    dirs = [run_dir if s is None else seed_run_dir(run_dir, s) for s in seeds]
    for seed, recs in zip(seeds, records):
        last = recs[-1] if recs else {}
        if "eval/win_first" in last:
            print(
                ("" if seed is None else f"seed {seed} ")
                + "vs random: as first player W/D/L {:.3f}/{:.3f}/{:.3f}, "
                "as second {:.3f}/{:.3f}/{:.3f}".format(
                    *(
                        last[f"eval/{o}_{s}"]
                        for s in ("first", "second")
                        for o in ("win", "draw", "loss")
                    )
                )
            )
    files = ("metrics.jsonl", "metrics.csv", "checkpoints", "learning_curve.png")
    written = [f for f in files if os.path.exists(os.path.join(dirs[0], f))]
    print(f"run written to {', '.join(dirs)} ({', '.join(written)})")
    print(f"load it with: jaxgames.load_policy({dirs[0]!r})")
    return 0


def add_command(subparsers) -> None:
    """``train <algorithm> [options] [--field=value ...]`` for every registered algorithm."""
    train = subparsers.add_parser("train", help="train an agent (writes runs/<name>/)")
    algos = train.add_subparsers(dest="algorithm", metavar="ALGORITHM", required=True)
    for algo in sorted(ALGORITHMS):
        p = algos.add_parser(
            algo,
            allow_abbrev=False,
            help=f"train {algo}",
            description=f"Train {algo}. Any config field can be overridden with --field=value "
            "(dashes or underscores; dict fields with --net.hidden=64).",
        )
        options.add_game_arguments(p)
        p.add_argument("--seed", type=int, default=None)
        p.add_argument(
            "--seeds",
            type=int,
            nargs="+",
            default=None,
            metavar="S",
            help="train these seeds at once (one vmap on one device) into <run>/seed<s>/",
        )
        p.add_argument(
            "--total-steps", type=int, default=None, help="environment steps to train for"
        )
        p.add_argument(
            "--run-name", default=None, help="run directory name (default from game/algorithm/seed)"
        )
        p.add_argument(
            "--runs-dir", default="runs", help="parent directory of runs (default runs/)"
        )
        p.add_argument("--quick", action="store_true", help="short demo preset")
        p.add_argument(
            "--scale-envs",
            type=int,
            default=None,
            metavar="N",
            help="N games at once, the preset's replay, minibatches and learning rate scaled "
            "with them (ppo, alphazero, dqn; docs/presets.md#more-games-at-once); --field=value "
            "overrides still win",
        )
        p.add_argument("--no-progress", action="store_true", help="no progress bar")
        p.add_argument(
            "--logger",
            default="jsonl",
            metavar="NAMES",
            help=f"comma-separated, of {', '.join(LOGGERS)} (default jsonl, always written; "
            "tensorboard/wandb need the 'loggers' extra; wandb runs offline unless WANDB_MODE "
            "says otherwise); not part of the run's config",
        )
        p.add_argument(
            "--devices",
            default="all",
            metavar="N|all",
            help="devices to split the games over (default all; num_envs must be a multiple)",
        )
        p.add_argument(
            "--distributed",
            action="store_true",
            help="multi-host: call jax.distributed.initialize() first (run the same command "
            "on every host)",
        )
        p.set_defaults(func=_train)
