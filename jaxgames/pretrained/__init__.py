"""Pretrained agents shipped with the package, exported agents and their model cards.

Each agent is a folder ``jaxgames/pretrained/<name>/`` in the exported format of
:mod:`jaxgames.runs` (``config.json``, ``params.msgpack``) plus its model card, ``card.json``
and the same facts for people in ``card.md``: algorithm, network, the config of every training
stage (the commands are derived from it), env steps, wall clock and, measured by
``experiments/refresh_pretrained.py``, the record against random and the ladder rating, each
with its command. The spec ``pretrained:<name>`` names these agents wherever a player is.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import re
import shlex
import shutil
from typing import Any

import jax
import numpy as np

from jaxgames.agents import presets
from jaxgames.agents.common import NetworkPolicy
from jaxgames.agents.registry import algorithm_module
from jaxgames.core import (
    DEFAULT_RULES_VERSION,
    PLAIN_FEATURES,
    Env,
    Policy,
    check_rules_version,
    random_policy,
)
from jaxgames.evaluation.elo import Rating
from jaxgames.evaluation.match import arena
from jaxgames.games import env_class
from jaxgames.pretrained.portable import (
    EXPORT_FILE,
    META_FILE,
    check_portable_available,
    export_portable,
)
from jaxgames.runs import (
    CARD_FILE,
    CARD_MD_FILE,
    CONFIG_FILE,
    CREATED_FORMAT,
    PARAMS_FILE,
    LoadedAgent,
    is_exported,
    load_agent,
    read_run_config,
    save_params,
)
from jaxgames.runs.metrics import MetricsLog

#: how a card names each algorithm
_ALGORITHM_NAMES = {
    "ppo": "PPO",
    "dqn": "DQN",
    "alphazero": "Gumbel AlphaZero",
    "winner_imitation": "Winner-imitation",
}
#: the folder of the shipped agents (package data)
PRETRAINED_DIR = os.path.dirname(os.path.abspath(__file__))
#: games per colour and seed of the card's record against random
VS_RANDOM_GAMES = 200
VS_RANDOM_SEED = 0


# ----------------------------------------------------------------------------- shipped agents
def pretrained_names() -> list[str]:
    """Names of the agents shipped in this package (sorted): the folders holding parameters."""
    return sorted(
        d for d in os.listdir(PRETRAINED_DIR) if is_exported(os.path.join(PRETRAINED_DIR, d))
    )


def pretrained_dir(name: str) -> str:
    """The folder of the shipped agent ``name``; ``ValueError`` listing the shipped ones."""
    names = pretrained_names()
    if not isinstance(name, str) or name not in names:
        raise ValueError(
            f"unknown pretrained agent {name!r}; shipped: {', '.join(names) or 'none'}"
        )
    return os.path.join(PRETRAINED_DIR, name)


@functools.lru_cache(maxsize=None)
def load_pretrained_agent(name: str) -> LoadedAgent:
    """The shipped agent ``name`` (network, params, env, config); read once per process."""
    return load_agent(pretrained_dir(name))


def load_pretrained(
    name: str, greedy: bool = True, average_symmetries: bool = False
) -> NetworkPolicy:
    """The policy of the shipped agent ``name``, as :func:`jaxgames.runs.load_policy`; the
    same object on every call, so a jitted arena compiles once."""
    return _pretrained_policy(name, bool(greedy), bool(average_symmetries))


@functools.lru_cache(maxsize=None)
def _pretrained_policy(name: str, greedy: bool, average_symmetries: bool) -> NetworkPolicy:
    return load_pretrained_agent(name).policy(greedy, average_symmetries)


load_pretrained.cache_clear = _pretrained_policy.cache_clear  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- training facts
def train_command(algorithm: str, config: Any) -> str:
    """The ``jaxgames train`` command whose config is ``config``: the game's preset (or its
    ``--quick`` preset, whichever is closer) plus ``--field=value`` for every other field."""
    game, options = config.game, dict(config.game_options)
    target = config.to_dict()
    best: tuple[int, bool, list[str]] | None = None
    for quick in (False, True):
        preset = presets.default_config(algorithm, game, options, quick=quick).to_dict()
        changed = [
            k for k in target if k not in ("game", "game_options") and target[k] != preset[k]
        ]
        if "network" in changed and "net" not in changed:  # a new network resets net
            changed.append("net")
        if best is None or len(changed) < best[0]:
            best = (len(changed), quick, changed)
    _, quick, changed = best
    words = ["jaxgames", "train", algorithm, "--game", game]
    for k, v in sorted(options.items()):
        words += ["--size", str(v)] if k == "size" else ["--game-option", f"{k}={v}"]
    words += ["--quick"] if quick else []
    for k in sorted(changed, key=lambda k: (k != "network", k)):  # network before net
        v = target[k]
        if k == "seed":
            words += ["--seed", str(v)]
        elif k == "total_steps":
            words += ["--total-steps", str(v)]
        else:
            # a dict as JSON (also a Python literal, which the CLI reads): double quotes
            # inside keep the shell quoting of the whole word plain
            words.append(
                f"--{k.replace('_', '-')}={json.dumps(v)}"
                if isinstance(v, dict)
                else f"--{k.replace('_', '-')}={v}"
            )
    return shlex.join(words)


def stage_command(stage: dict[str, Any]) -> str | None:
    """The ``jaxgames train`` command of a card's training stage, derived from its whole config
    against today's presets, so a later preset change never makes it wrong (else the stored
    ``command``, or ``None``)."""
    if "config" not in stage:
        return stage.get("command")
    algorithm = stage["algorithm"]
    return train_command(algorithm, algorithm_module(algorithm).Config.from_dict(stage["config"]))


def _parse_time(text: Any) -> float | None:
    try:
        return datetime.datetime.strptime(text, CREATED_FORMAT).timestamp()
    except (TypeError, ValueError):
        return None


def _format_time(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(CREATED_FORMAT)


def _run_name(run_dir: str) -> str:
    """The run's folder name (the last three parts for an experiment's ``seed<k>`` folder)."""
    parts = os.path.normpath(os.path.abspath(run_dir)).split(os.sep)
    if re.fullmatch(r"seed\d+", parts[-1]):
        return "/".join(parts[-3:])
    return parts[-1]


def training_facts(run_dir: str, chunk: int) -> dict[str, Any]:
    """A run's training up to checkpoint ``chunk``: algorithm, config, env steps, wall clock
    (from ``config.json``'s creation to that chunk's record, pauses included) and
    ``train_seconds`` (the chunks' own compute)."""
    with open(os.path.join(run_dir, CONFIG_FILE), encoding="utf-8") as f:
        record = json.load(f)
    algorithm, config = read_run_config(run_dir)
    records = [r for r in MetricsLog(run_dir).records() if r["chunk"] <= chunk]
    last = records[-1] if records else {}
    start = _parse_time(record.get("created"))
    end = last.get("time")
    facts = dict(
        algorithm=algorithm,
        config=config.to_dict(),  # the command is derived from it when a card is rendered
        chunk=chunk,
        env_steps=last.get("env_steps"),
        wall_clock_seconds=None if start is None or end is None else round(end - start, 1),
        train_seconds=round(sum(r.get("chunk_seconds", 0.0) for r in records), 1),
        created=record.get("created"),
        machine=record.get("machine"),
        finished=None if end is None else _format_time(end),
        source_run=_run_name(run_dir),
    )
    if config.init_from:
        facts["started_from"] = dict(spec=config.init_from, **_agent_training(config.init_from))
    return facts


def _agent_facts(folder: str, chunk: int | None = None) -> dict[str, Any]:
    """The training facts of an exported agent's card (``{}`` without one), or of a run up to
    checkpoint ``chunk`` (default: its newest record)."""
    if is_exported(folder):
        if not os.path.exists(os.path.join(folder, CARD_FILE)):
            return {}
        card = read_card(folder)
        # the digest pins which parameters a later run started from: a folder (or a
        # pretrained:<name>) may hold another agent by the time the card is read
        training, params = card.get("training", {}), card.get("params")
        digest = params.get("sha256") if isinstance(params, dict) else None
        if not isinstance(training, dict) or not isinstance(digest, str):
            raise ValueError(
                f"{os.path.join(folder, CARD_FILE)} is damaged: it needs a 'training' object "
                "and the parameters' 'sha256' under 'params'"
            )
        return dict(training, params_sha256=digest)
    if chunk is None:
        chunks = [r["chunk"] for r in MetricsLog(folder).records()]
        if not chunks:
            return {}
        chunk = max(chunks)
    return training_facts(folder, chunk)


def _agent_training(spec: str) -> dict[str, Any]:
    """The training facts of the agent a run started from (a run folder or
    ``pretrained:<name>``), as they are now; ``{}`` if there is nothing to read."""
    shipped = spec.startswith("pretrained:")
    try:
        return _agent_facts(pretrained_dir(spec.partition(":")[2]) if shipped else spec)
    except (OSError, ValueError, KeyError, TypeError):  # moved or damaged: the spec says it
        return {}


# ----------------------------------------------------------------------------- export
def export_agent(
    run_dir: str,
    out_dir: str,
    *,
    name: str | None = None,
    overwrite: bool = False,
    portable: bool = False,
) -> dict[str, Any]:
    """Export the agent of ``run_dir`` to ``out_dir`` (``config.json``, ``params.msgpack``, a
    card without measurements) and return the card; ``ValueError`` if ``out_dir`` is
    ``run_dir`` or holds anything but an exported agent to ``overwrite``. ``portable``: also
    the network as a :mod:`jax.export` artefact (:mod:`jaxgames.pretrained.portable`), named on
    the card as ``portable``."""
    loaded = load_agent(run_dir)  # errors name a missing run / checkpoint first
    if portable:
        check_portable_available()
    if os.path.realpath(out_dir) == os.path.realpath(run_dir):
        raise ValueError(f"cannot export {run_dir!r} onto itself; give another folder")
    if os.path.exists(out_dir):
        if not os.path.isdir(out_dir):
            raise ValueError(f"export folder {out_dir!r} exists and is not a directory")
        if os.listdir(out_dir) and not overwrite:
            raise ValueError(
                f"export folder {out_dir!r} is not empty; choose a new folder (or --force to "
                "replace an exported agent there)"
            )
        if os.listdir(out_dir) and not is_exported(out_dir):
            raise ValueError(
                f"export folder {out_dir!r} holds something other than an exported agent; "
                "refusing to replace it"
            )
    training = _agent_facts(run_dir, loaded.chunk)  # an export's travel with its card
    os.makedirs(out_dir, exist_ok=True)
    # a replaced export's artefact and card are not this agent's (kept, a failed portable
    # export below would leave the old card beside the new parameters)
    for stale in (EXPORT_FILE, META_FILE, CARD_FILE, CARD_MD_FILE):
        if os.path.exists(os.path.join(out_dir, stale)):
            os.remove(os.path.join(out_dir, stale))
    shutil.copyfile(os.path.join(run_dir, CONFIG_FILE), os.path.join(out_dir, CONFIG_FILE))
    digest = save_params(loaded.params, out_dir)
    config = loaded.config.to_dict()
    card = dict(
        name=name or os.path.basename(os.path.normpath(out_dir)),
        game=loaded.env.name,
        game_options=dict(loaded.env.config),
        rules_version=_run_rules_version(run_dir),
        algorithm=loaded.algorithm,
        network=dict(
            network=config.get("network"),
            net=config.get("net"),
            features=config.get("features", PLAIN_FEATURES),
            parameters=int(sum(np.size(x) for x in jax.tree_util.tree_leaves(loaded.params))),
        ),
        config=config,
        training=training,
        params=dict(
            file=PARAMS_FILE,
            bytes=os.path.getsize(os.path.join(out_dir, PARAMS_FILE)),
            sha256=digest,
        ),
        exported=datetime.date.today().isoformat(),
        spec=None,
        measurements={},
        reproduce=None,
    )
    if portable:
        meta = export_portable(loaded, out_dir)
        card["portable"] = {k: meta[k] for k in ("file", "bytes", "sha256", "platforms")}
    write_card(out_dir, card)
    return card


def _run_rules_version(run_dir: str) -> int:
    """The rules version the run was trained under (its ``config.json``; none: version 1)."""
    with open(os.path.join(run_dir, CONFIG_FILE), encoding="utf-8") as f:
        recorded = json.load(f).get("rules_version")
    return DEFAULT_RULES_VERSION if recorded is None else recorded


# ----------------------------------------------------------------------------- measurements
def measure_vs_random(
    policy: Policy,
    env: Env,
    games_per_colour: int = VS_RANDOM_GAMES,
    seed: int = VS_RANDOM_SEED,
) -> dict[str, Any]:
    """W/D/L of ``policy`` against random play per colour: the games of ``jaxgames eval --a
    <agent> --b random --games 2*games_per_colour --opening-plies 0 --seed seed``."""
    result = arena(policy, random_policy, env, 2 * games_per_colour, jax.random.PRNGKey(seed))
    return dict(
        games_per_colour=games_per_colour,
        seed=seed,
        as_first=_wdl_dict(result.as_first),
        as_second=_wdl_dict(result.as_second),
    )


def _wdl_dict(r: Any) -> dict[str, int]:
    return dict(wins=r.wins, draws=r.draws, losses=r.losses)


# ----------------------------------------------------------------------------- cards
def read_card(folder: str) -> dict[str, Any]:
    """The ``card.json`` of an exported agent; ``ValueError`` naming the problem."""
    path = os.path.join(folder, CARD_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            card = json.load(f)
    except OSError as e:
        raise ValueError(f"{path} cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise ValueError(f"{path} is corrupt ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(card, dict):
        raise ValueError(f"{path} is corrupt: expected an object")
    try:
        current = env_class(card.get("game")).rules_version
    except ValueError:
        return card  # an unknown game is reported by whoever builds its env
    check_rules_version(f"model card {path}", card["game"], card.get("rules_version"), current)
    return card


def write_card(folder: str, card: dict[str, Any]) -> None:
    """Write ``card`` as ``card.json`` and its Markdown rendering as ``card.md``."""
    with open(os.path.join(folder, CARD_FILE), "w", encoding="utf-8") as f:
        json.dump(card, f, indent=2)
        f.write("\n")
    with open(os.path.join(folder, CARD_MD_FILE), "w", encoding="utf-8") as f:
        f.write(render_card(card))


def _wdl(r: dict[str, int]) -> str:
    """``"W/D/L"`` of a record with wins, draws and losses."""
    return f"{r['wins']}/{r['draws']}/{r['losses']}"


def shipped_table() -> str:
    """The Markdown table of the shipped agents (docs/pretrained.md), one row per card."""
    rows = [
        "| name | algorithm | env steps (all stages) | vs random, first / second (W/D/L) | "
        "ladder Elo [95% CI] | card |",
        "|---|---|---|---|---|---|",
    ]
    for name in pretrained_names():
        card = read_card(os.path.join(PRETRAINED_DIR, name))
        net, m = card["network"], card.get("measurements") or {}
        layers, hidden = net["net"].get("layers"), net["net"].get("hidden")
        shape = f" {layers}x{hidden}" if layers and hidden else ""
        shape += _features_note(net)
        vr = m.get("vs_random")
        record = f"{_wdl(vr['as_first'])} / {_wdl(vr['as_second'])}" if vr else "-"
        rating = (m.get("ladder") or {}).get("rating")
        rows.append(
            f"| `{name}` | {_ALGORITHM_NAMES.get(card['algorithm'], card['algorithm'])}, "
            f"{net['network'].upper()}{shape} | {_steps_in_all(card['training'])} | "
            f"{record} | {'-' if rating is None else Rating.from_json(rating)} | "
            f"[card](../jaxgames/pretrained/{name}/card.md) |"
        )
    return "\n".join(rows)


def _steps_in_all(training: dict[str, Any]) -> str:
    """Env steps summed over the chain of runs, ``"total (oldest + ... + last)"``; the last run's
    alone if an earlier one's are unknown, ``"-"`` if its own are."""
    chain = [stage.get("env_steps") for stage in _training_stages(training)]
    if chain[0] is None:
        return "-"
    if len(chain) == 1 or None in chain:
        return f"{chain[0]:,}"
    parts = " + ".join(f"{x:,}" for x in reversed(chain))
    return f"{sum(chain):,} ({parts})"


def _features_note(net: dict[str, Any]) -> str:
    """`` reading the 'mobility' features`` for a network that does, else ""."""
    features = net.get("features", PLAIN_FEATURES)
    return "" if features == PLAIN_FEATURES else f" reading the {features!r} features"


def _wdl_row(label: str, r: dict[str, int]) -> str:
    n = r["wins"] + r["draws"] + r["losses"]
    return f"| {label} | {r['wins']} | {r['draws']} | {r['losses']} | {r['wins'] / n:.1%} |"


def _seconds(x: float | None) -> str:
    return "unknown" if x is None else f"{x:,.0f} s"


def _training_stages(training: dict[str, Any]) -> list[dict[str, Any]]:
    """A card's training facts and those of the runs it started from, nearest first."""
    stages = []
    while training:
        stages.append(training)
        training = training.get("started_from")
    return stages


def _on_machine(training: dict[str, Any]) -> str:
    """`` on <machine>`` for a stage whose run recorded where it trained, else nothing."""
    return f" on {training['machine']}" if training.get("machine") else ""


def _started_from_rows(training: dict[str, Any]) -> list[str]:
    """Card rows for the chain of agents a run started from (``init_from``), nearest first."""
    rows = []
    for start in _training_stages(training)[1:]:
        steps = start.get("env_steps")
        rows.append(
            f"| started from | `{start['spec']}` as it was then: `{stage_command(start)}`, "
            f"{'unknown' if steps is None else f'{steps:,}'} env steps, "
            f"{_seconds(start.get('train_seconds'))} in training chunks{_on_machine(start)} "
            f"(run `{start.get('source_run')}`"
            + (
                f"; parameters sha256 `{start['params_sha256'][:16]}...`"
                if "params_sha256" in start
                else ""
            )
            + ") |"
        )
    return rows


def render_card(card: dict[str, Any]) -> str:
    """The Markdown model card of ``card`` (the facts of ``card.json``, for people)."""
    t, net = card.get("training", {}), card["network"]
    options = ", ".join(f"{k}={v}" for k, v in card["game_options"].items())
    steps = "unknown" if t.get("env_steps") is None else f"{t['env_steps']:,}"
    spec = card.get("spec")
    if spec and spec.startswith("pretrained:"):
        how = (
            f"load it with `jaxgames.load_pretrained({spec.partition(':')[2]!r})` or "
            f"name it `{spec}` wherever a player is named"
        )
    else:
        how = "give its folder wherever a player is named, or load it with `load_policy(folder)`"
    lines = [
        f"# Model card: {card['name']}",
        "",
        f"{_ALGORITHM_NAMES.get(card['algorithm'], card['algorithm'])} agent for {card['game']}"
        + (f" ({options})" if options else "")
        + f"; {how}.",
        "",
        "| | |",
        "|---|---|",
        f"| algorithm | {card['algorithm']} |",
        f"| network | {net['network']} {net['net']}{_features_note(net)}, "
        f"{net['parameters']:,} parameters |",
        f"| training command | `{stage_command(t)}` |",
        f"| env steps | {steps} (checkpoint {t.get('chunk')}) |",
        f"| wall clock | {_seconds(t.get('wall_clock_seconds'))} from start to that checkpoint "
        f"({_seconds(t.get('train_seconds'))} in training chunks) |",
        f"| trained | {t.get('created')} to {t.get('finished') or 'unknown'}{_on_machine(t)} "
        f"(run `{t.get('source_run')}`) |",
        *_started_from_rows(t),
        f"| parameters | `{card['params']['file']}`, {card['params']['bytes']:,} bytes, "
        f"sha256 `{card['params']['sha256'][:16]}...` |",
        f"| exported | {card['exported']} |",
    ]
    if card.get("portable"):
        pt = card["portable"]
        lines.insert(
            -1,
            f"| portable | `{pt['file']}` (jax.export, {', '.join(pt['platforms'])}), "
            f"{pt['bytes']:,} bytes, sha256 `{pt['sha256'][:16]}...` |",
        )
    m = card.get("measurements") or {}
    if m:
        lines += ["", f"Measured {m['date']} on {m['machine']}."]
    vr = m.get("vs_random")
    if vr:
        lines += [
            "",
            f"## Against random ({vr['games_per_colour']} games per colour, seed {vr['seed']})",
            "",
            f"`{vr['command']}`",
            "",
            "| agent plays | W | D | L | win rate |",
            "|---|---|---|---|---|",
            _wdl_row("first", vr["as_first"]),
            _wdl_row("second", vr["as_second"]),
        ]
    lad = m.get("ladder")
    if lad:
        lines += ["", "## Ladder rating", "", f"`{lad['command']}`", ""]
        if lad.get("rating") is None:
            lines.append(lad.get("note", "not rated"))
        else:
            lines += [
                f"Elo **{Rating.from_json(lad['rating'])}** (95% bootstrap interval, random = 0; "
                f"{lad['games_per_rung']} games per rung from {lad['n_openings']} openings x 2 "
                "colours)"
                + (
                    f"; not played (training partners): {', '.join(lad['skipped_partners'])}"
                    if lad.get("skipped_partners")
                    else ""
                ),
                "",
                "| rung | rung Elo | W/D/L first | W/D/L second | score |",
                "|---|---|---|---|---|",
            ]
            for row in lad["rungs"]:
                lines.append(
                    f"| {row['rung']} | {Rating.from_json(row['rung_rating'])} | "
                    f"{_wdl(row['as_first'])} | {_wdl(row['as_second'])} | "
                    f"{row['overall']['score']:.1%} |"
                )
    lines += ["", "## Config", "", "```json", json.dumps(card["config"], indent=2), "```", ""]
    if card.get("reproduce"):
        lines += ["## Reproduce", "", f"`{card['reproduce']}`", ""]
    return "\n".join(lines)
