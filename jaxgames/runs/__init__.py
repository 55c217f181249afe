"""Run directories: the config a run was made with, and the agents it holds.

``runs/<name>/config.json`` holds ``{"algorithm", "config", "rules_version", "created",
"machine"}``, written when the run starts (:mod:`jaxgames.training.driver` has the rest of the
layout; ``rules_version``: :attr:`jaxgames.core.Env.rules_version`, loading warns when it
differs). Loading an agent reads only its own run: the algorithm is built with stand-in
partners, which give the train state the same structure. An **exported agent** (``jaxgames
export``, :mod:`jaxgames.pretrained`) is a folder with the run's ``config.json``, the
parameters alone in ``params.msgpack`` (portable: no orbax, no optimiser state) and a model
card; every loader here takes one wherever it takes a run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from typing import Any

import jax
import numpy as np
from flax import serialization

from jaxgames.agents.common import Agent, NetworkPolicy
from jaxgames.agents.config import RetiredFieldError
from jaxgames.agents.registry import algorithm_module
from jaxgames.core import Env, check_rules_version
from jaxgames.games import env_class
from jaxgames.provenance import machine_description
from jaxgames.runs.checkpoint import CheckpointError, CheckpointStore
from jaxgames.runs.lock import LOCK_FILE

CONFIG_FILE = "config.json"
#: how config.json records when its run was created ("created"; model cards read it back)
CREATED_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
#: an exported agent's parameters (flax msgpack); its model card (JSON and Markdown)
PARAMS_FILE = "params.msgpack"
CARD_FILE = "card.json"
CARD_MD_FILE = "card.md"


class RunNotFoundError(FileNotFoundError, ValueError):
    """A run directory or its ``config.json`` is missing (caught as either base)."""


def config_record(algorithm: str, config: Any) -> dict[str, Any]:
    """What ``config.json`` holds (and what a rerun must match; ``rules_version``, the game's
    :attr:`~jaxgames.core.Env.rules_version`, only warns when it differs)."""
    rules = env_class(config.game).rules_version
    return {"algorithm": algorithm, "config": config.to_dict(), "rules_version": rules}


def _check_rules(run_dir: str, data: dict[str, Any]) -> None:
    """Warn when the run was made under other rules of its game than this code plays (a file
    without ``rules_version`` predates versions: version 1)."""
    game = data["config"].get("game")
    try:
        current = env_class(game).rules_version
    except ValueError:
        return  # an unknown game is reported by whoever builds its env
    what = f"{'exported agent' if is_exported(run_dir) else 'run'} {run_dir!r}"
    check_rules_version(what, game, data.get("rules_version"), current)


def _read_record(run_dir: str) -> tuple[str, dict[str, Any]]:
    """(path of config.json, its parsed content); errors as :func:`read_run_config`."""
    if not os.path.isdir(run_dir):
        hint = ""
        name = str(run_dir).removeprefix("pretrained:")
        if name != str(run_dir):  # a player spec, not a folder
            hint = (
                f"; a shipped agent is jaxgames.load_pretrained({name!r}) (any spec: "
                "jaxgames.specs.make_opponent)"
            )
        raise RunNotFoundError(f"run directory {run_dir!r} does not exist{hint}")
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.exists(path):
        seeds = sorted(
            d for d in os.listdir(run_dir) if re.fullmatch(r"seed\d+", d)
            and os.path.exists(os.path.join(run_dir, d, CONFIG_FILE))
        )  # fmt: skip
        hint = f"; it holds the runs of seeds: {', '.join(seeds)} (load one)" if seeds else ""
        raise RunNotFoundError(
            f"{run_dir!r} is not a training run: it has no {CONFIG_FILE}{hint}"
        )
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise ValueError(f"{path} cannot be read ({e.strerror or e})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is corrupt ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        found = json.dumps(data)
        found = found if len(found) <= 60 else found[:60] + "..."
        raise ValueError(
            f"{path} is corrupt: expected an object with 'algorithm' and 'config' (an object), "
            f"found {found}"
        )
    if not isinstance(data.get("algorithm"), str):
        raise ValueError(f"{path} is corrupt: 'algorithm' must be a name such as 'ppo'")
    return path, data


def read_run_config(run_dir: str) -> tuple[str, Any]:
    """(algorithm name, config) of a run: :class:`RunNotFoundError` if it or its
    ``config.json`` is missing, ``ValueError`` if that is unreadable or invalid."""
    _, data = _read_record(run_dir)
    _check_rules(run_dir, data)
    name = data["algorithm"]
    return name, algorithm_module(name).Config.from_dict(data["config"])


def run_env(run_dir: str) -> Env:
    """The game the run in ``run_dir`` was trained on (reads only its ``config.json``)."""
    return read_run_config(run_dir)[1].make_env()


def _check_creatable(run_dir: str) -> None:
    """``ValueError`` if the missing ``run_dir`` cannot be created (its nearest existing
    ancestor is a file or not writable)."""
    parent = os.path.dirname(os.path.abspath(run_dir))
    while not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise ValueError(
            f"cannot create run directory {run_dir!r}: {parent!r} is a file, not a directory "
            "(check --runs-dir)"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot create run directory {run_dir!r}: {parent!r} is not writable")


def is_config_draft(name: str) -> bool:
    """``name`` is a ``config.json`` being written (``config.json.<pid>.tmp``): one a process
    killed while creating the run left behind does not make the folder someone else's."""
    return re.fullmatch(rf"{re.escape(CONFIG_FILE)}\.\d+\.tmp", name) is not None


def check_run_dir(run_dir: str, record: dict[str, Any]) -> bool:
    """True if ``run_dir`` holds the run of ``record`` (:func:`config_record`), False if it is
    missing or empty; ``ValueError`` otherwise. Configs compare normalised (new fields at
    their defaults, retired ones dropped)."""
    if not os.path.exists(run_dir):
        _check_creatable(run_dir)
        return False
    if not os.path.isdir(run_dir):
        raise ValueError(f"run path {run_dir!r} exists and is not a directory")
    if not os.path.exists(os.path.join(run_dir, CONFIG_FILE)):
        if {n for n in os.listdir(run_dir) if not is_config_draft(n)} - {LOCK_FILE}:
            raise ValueError(
                f"run directory {run_dir!r} is not empty and has no {CONFIG_FILE}; "
                "refusing to write into it"
            )
        return False
    try:
        path, old = _read_record(run_dir)
    except ValueError as e:
        raise ValueError(f"{e}; refusing to overwrite the run") from None
    old_config = old["config"]
    if old["algorithm"] == record["algorithm"]:
        try:  # normalise: defaults of fields the file predates, retired fields dropped
            old_config = algorithm_module(old["algorithm"]).Config.from_dict(old_config).to_dict()
        except RetiredFieldError as e:
            raise ValueError(f"run directory {run_dir!r} cannot be resumed: {e}") from None
        except ValueError:
            pass  # compared as written: the difference is reported below
    if old["algorithm"] != record["algorithm"] or old_config != record["config"]:
        new_config = record["config"]
        diffs = (
            [f"algorithm: {old['algorithm']!r} -> {record['algorithm']!r}"]
            if old["algorithm"] != record["algorithm"]
            else []
        )
        diffs += [
            f"{k}: {old_config.get(k)!r} -> {new_config.get(k)!r}"
            for k in sorted(set(old_config) | set(new_config))
            if old_config.get(k) != new_config.get(k)
        ]
        raise ValueError(
            f"run directory {run_dir!r} holds a run with a different config ({'; '.join(diffs)}). "
            "Use another run name, or the original settings to resume it."
        )
    _check_rules(run_dir, old)
    return True


@dataclasses.dataclass(frozen=True)
class LoadedAgent:
    """A trained agent read from a run directory (chunk: its checkpoint)."""

    agent: Agent
    params: Any
    env: Env
    config: Any
    algorithm: str
    chunk: int

    def policy(self, greedy: bool = True, average_symmetries: bool = False) -> NetworkPolicy:
        """The agent's policy; ``average_symmetries``: averaged over the game's symmetries."""
        agent = self.agent
        if average_symmetries:
            agent = dataclasses.replace(agent, symmetries=self.env.symmetries)
        return agent.policy(self.params, greedy)


def is_exported(path: str) -> bool:
    """``path`` is an exported agent's folder (it holds ``params.msgpack``)."""
    return os.path.isfile(os.path.join(path, PARAMS_FILE))


def save_params(params: Any, out_dir: str) -> str:
    """Write ``params`` to ``out_dir/params.msgpack``; returns the bytes' SHA-256."""
    data = serialization.to_bytes(jax.device_get(params))
    with open(os.path.join(out_dir, PARAMS_FILE), "wb") as f:
        f.write(data)
    return hashlib.sha256(data).hexdigest()


def _restore_params(path: str, template: Any) -> Any:
    """The parameters in ``path``, checked leaf by leaf against ``template`` (``ValueError``
    naming the difference)."""
    try:
        with open(path, "rb") as f:
            raw = serialization.msgpack_restore(f.read())
        params = serialization.from_state_dict(template, raw)
    except OSError as e:
        raise ValueError(f"{path} cannot be read ({e.strerror or e})") from None
    except Exception as e:  # msgpack / flax: a damaged file or another network's parameters
        raise ValueError(f"{path} does not hold this agent's parameters ({_short(e)})") from None
    got, want = jax.tree_util.tree_flatten_with_path(params)[0], jax.tree_util.tree_leaves(template)
    stored = len(jax.tree_util.tree_leaves(raw))
    if stored != len(want):  # from_state_dict ignores entries the template lacks
        raise ValueError(f"{path} holds {stored} arrays where the network has {len(want)}")
    for (where, x), t in zip(got, want):
        if not isinstance(x, np.ndarray) or (x.shape, x.dtype) != (t.shape, t.dtype):
            found = f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray) else type(x).__name__
            raise ValueError(
                f"{path} does not fit the network of its config.json: "
                f"{jax.tree_util.keystr(where)} is {found}, expected {t.dtype}{list(t.shape)}"
            )
    return jax.device_put(params)


def _short(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".splitlines()[0]
    return text if len(text) <= 160 else text[:160] + "..."


def _exported_chunk(folder: str) -> int:
    """``training.chunk`` of an exported agent's card (0 if it has no readable card)."""
    try:
        with open(os.path.join(folder, CARD_FILE), encoding="utf-8") as f:
            chunk = json.load(f)["training"]["chunk"]
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    return chunk if isinstance(chunk, int) else 0


def load_agent(run_dir: str) -> LoadedAgent:
    """The newest readable checkpoint of the run in ``run_dir``, or an exported agent; every
    error a ``ValueError`` naming the problem (:class:`RunNotFoundError`,
    :class:`~jaxgames.runs.checkpoint.CheckpointError` without a usable checkpoint)."""
    name, config = read_run_config(run_dir)
    algo = algorithm_module(name).make_algorithm(config)  # stand-in partners: see module doc
    key = jax.random.PRNGKey(config.seed)
    if is_exported(run_dir):
        template = jax.eval_shape(lambda k: algo.params(algo.init(k)), key)
        params = _restore_params(os.path.join(run_dir, PARAMS_FILE), template)
        return LoadedAgent(algo.agent, params, algo.env, config, name, _exported_chunk(run_dir))
    ckpt_dir = os.path.join(run_dir, "checkpoints")
    if not os.path.isdir(ckpt_dir):
        raise CheckpointError(f"run {run_dir!r} has no checkpoints yet (no {ckpt_dir})")
    store = CheckpointStore(ckpt_dir, keep=config.keep_checkpoints)
    try:
        template = jax.eval_shape(algo.init, key)
        restored = store.restore_latest(template)
    finally:
        store.close()
    if restored is None:
        raise CheckpointError(f"run {run_dir!r} has no checkpoints yet")
    chunk, state = restored
    return LoadedAgent(algo.agent, algo.params(state), algo.env, config, name, chunk)


def load_policy(run_dir: str, greedy: bool = True) -> NetworkPolicy:
    """The :class:`~jaxgames.agents.common.NetworkPolicy` of :func:`load_agent`'s agent."""
    return load_agent(run_dir).policy(greedy)
