"""Typed, frozen, validated training configs with ``--key=value`` overrides.

Every algorithm's config subclasses :class:`TrainConfig` and adds its fields and checks in
``validate``; a bad value is a ``ValueError`` naming the field and the value::

    cfg = PPOConfig(game="reversi", game_options={"size": 6})
    cfg = cfg.override(["--learning-rate=1e-3", "--net.hidden=64"])   # or a mapping
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, ClassVar, Iterable, Mapping

import numpy as np

from jaxgames.agents.networks import check_network
from jaxgames.core import PLAIN_FEATURES, Env, feature_function
from jaxgames.games import check_game, env_class, make, registered_games
from jaxgames.validation import (
    MAX_INT,
    check_bool,
    check_float,
    check_int,
    check_seed,
    fail,
    is_finite,
    parse_scalar,
)

#: games played in parallel at most (their states, rollouts and int32 step counters must fit)
MAX_NUM_ENVS = 2**20


def _coerce(name: str, kind: Any, value: Any) -> Any:
    """Convert a CLI string (or JSON value) to the field's declared type."""
    origin = typing.get_origin(kind) or kind
    if isinstance(value, str) and origin is not str:
        value = parse_scalar(value)
    if origin is bool:
        check_bool(name, value)
        return value
    if origin is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            fail(name, value, "must be an integer")
        return value
    if origin is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail(name, value, "must be a number")
        if not is_finite(value):
            fail(name, value, "must be a finite number (not NaN or infinity)")
        return float(value)
    if origin is str:
        return str(value)
    if origin is dict:
        if not isinstance(value, Mapping):
            fail(name, value, "must be a mapping (a dict of key: value)")
        return {str(k): (tuple(v) if isinstance(v, list) else v) for k, v in value.items()}
    return value


class RetiredFieldError(ValueError):
    """A config holds a field jaxgames no longer has, at a value other than its old default."""


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Fields common to every algorithm (the driver and evaluation read these).

    total_steps:          environment steps (plies, summed over all envs) to train for
    network / net:        ``make_network(network, num_actions, **net)``
    features:             "observation" or one of the game's ``input_features``
    gamma:                discount per ply (negamax: the sign alternates with the mover)
    updates_per_chunk:    updates per jitted chunk (one log line and checkpoint each)
    partners:             opponent spec -> share of the games, the rest self-play
                          (:mod:`~jaxgames.agents.games_batch`; the driver resolves the specs)
    max_opening_plies:    games open with 0 .. this many random plies, never learned from
    eval_games:           games vs a random player per side after each chunk (0: none)
    init_from:            start from a trained agent's network (a run directory or
                          ``pretrained:<name>``; a narrower MLP is widened and new ``features``
                          get zero weights, the same function either way), all else fresh

    Validation is pure (no env, network or file). ``retired``: removed fields -> the one value
    an old ``config.json`` may still hold, which :meth:`from_dict` drops.
    """

    retired: ClassVar[Mapping[str, Any]] = {"score_utility": 0.0}

    game: str = "tic_tac_toe"
    game_options: dict = dataclasses.field(default_factory=dict)
    seed: int = 0
    total_steps: int = 1_000_000
    num_envs: int = 256
    network: str = "mlp"
    net: dict = dataclasses.field(default_factory=dict)
    features: str = PLAIN_FEATURES
    learning_rate: float = 3e-4
    max_grad_norm: float = 0.5
    adam_eps: float = 1e-8
    anneal_lr: bool = False
    gamma: float = 0.99
    updates_per_chunk: int = 10
    partners: dict = dataclasses.field(default_factory=dict)
    max_opening_plies: int = 0
    eval_games: int = 256
    keep_checkpoints: int = 3
    init_from: str = ""

    def __post_init__(self) -> None:
        types = self.field_types()
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.generic):  # a NumPy scalar: the Python value it holds
                object.__setattr__(self, f.name, v := v.item())
            # a mapping field holds a plain dict (comparable with its JSON round trip); any
            # other value there is a ValueError naming the field
            if isinstance(v, dict) or (typing.get_origin(types[f.name]) or types[f.name]) is dict:
                object.__setattr__(self, f.name, _coerce(f.name, dict, v))
        self.validate()
        self.check_schedule()

    # ---------------------------------------------------------------- validation
    def validate(self) -> None:
        """``ValueError`` naming the first bad field; subclasses call ``super().validate()``."""
        if not isinstance(self.game, str) or self.game not in registered_games():
            fail("game", self.game, f"must be one of {registered_games()}")
        check_game(self.game, self.game_options)  # ValueError for bad options
        check_seed("seed", self.seed)
        check_int("total_steps", self.total_steps)
        check_int("num_envs", self.num_envs, maximum=MAX_NUM_ENVS)
        check_network(self.network, self.net)  # ValueError for a bad name or options
        feature_function(env_class(self.game), self.features)  # ValueError naming the valid
        check_float("learning_rate", self.learning_rate, 0.0, 1.0, low_open=True)
        check_float("max_grad_norm", self.max_grad_norm, 0.0, float("inf"), low_open=True)
        check_float("adam_eps", self.adam_eps, 0.0, 1.0, low_open=True)
        check_bool("anneal_lr", self.anneal_lr)
        check_float("gamma", self.gamma, 0.0, 1.0)
        check_int("updates_per_chunk", self.updates_per_chunk)
        partner_sizes(self.num_envs, self.partners)  # ValueError naming partners[spec]
        for spec in self.partners:
            if not spec.strip():
                fail("partners", self.partners, "an opponent spec is empty")
        check_int("max_opening_plies", self.max_opening_plies, minimum=0)
        check_int("eval_games", self.eval_games, minimum=0)
        check_int("keep_checkpoints", self.keep_checkpoints)
        if not isinstance(self.init_from, str) or self.init_from != self.init_from.strip():
            fail("init_from", self.init_from, "must be a run directory or 'pretrained:<name>'")

    def check_schedule(self) -> None:
        """``ValueError`` naming ``total_steps`` if the run's counts (environment steps,
        optimiser steps) exceed what jitted code counts in int32: checked with the config, so
        no run directory is made for a run that would overflow on its first chunk."""
        counts = {
            "environment steps": self.num_updates * self.steps_per_update,
            "optimiser steps": self.optimizer_steps,
        }
        for what, n in counts.items():
            if n > MAX_INT:
                fail(
                    "total_steps",
                    self.total_steps,
                    f"the run would take {n} {what}, more than the {MAX_INT} that training "
                    "counts; train for fewer steps (or fewer optimiser steps per update)",
                )

    # ---------------------------------------------------------------- batch scaling
    def scaled_to(self, num_envs: int, *, max_minibatch: int = 2048):
        """This config with ``num_envs`` games at once and the same learning per ply.

        The rule (each algorithm states its own in :meth:`scaled_fields`): every buffer that
        holds plies of every game grows with the games, so it spans the same plies of each
        game; each ply is sampled as often as before; the minibatch grows with the games up to
        ``max_minibatch`` (then the optimiser takes more steps per update) and the learning
        rate follows the square root of the minibatch's growth, the scaling rule for Adam
        (Malladi et al. 2022, "On the SDEs and scaling rules for adaptive gradient
        algorithms"). ``ValueError`` naming the first bad value."""
        check_int("num_envs", num_envs, maximum=MAX_NUM_ENVS)
        check_int("max_minibatch", max_minibatch)
        return dataclasses.replace(self, **self.scaled_fields(num_envs, max_minibatch))

    def scaled_fields(self, num_envs: int, max_minibatch: int) -> dict[str, Any]:
        """The fields :meth:`scaled_to` changes: each algorithm that has a rule defines it."""
        raise ValueError(
            f"{type(self).__name__} has no batch-scaling rule (ppo, alphazero and dqn "
            "have one); set num_envs and its batch-sized fields yourself"
        )

    # ---------------------------------------------------------------- schedule
    @property
    def optimizer_steps(self) -> int:
        """Optimiser steps of the run (the learning-rate schedule's length); algorithms
        with several per update override it."""
        return self.num_updates

    @property
    def steps_per_update(self) -> int:
        """Environment steps (plies over all envs) per update; set by each algorithm."""
        raise NotImplementedError(f"{type(self).__name__} must define steps_per_update")

    @property
    def num_updates(self) -> int:
        """Updates of the run: total_steps / steps_per_update, rounded to whole chunks (>= 1)."""
        per_chunk = self.updates_per_chunk * self.steps_per_update
        return max(1, round(self.total_steps / per_chunk)) * self.updates_per_chunk

    # ---------------------------------------------------------------- conversion
    def make_env(self) -> Env:
        """The :class:`~jaxgames.core.Env` this config trains on."""
        return make(self.game, **self.game_options)

    @classmethod
    def field_types(cls) -> dict[str, Any]:
        hints = typing.get_type_hints(cls)
        return {f.name: hints[f.name] for f in dataclasses.fields(cls)}

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly dict (tuples become lists)."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = (
                {k: list(x) if isinstance(x, tuple) else x for k, x in v.items()}
                if isinstance(v, dict)
                else v
            )
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        """Inverse of :meth:`to_dict`; ``ValueError`` for unknown keys or bad values. A
        retired field at its old default is dropped, at any other value refused."""
        types = cls.field_types()
        for k, v in data.items():
            if k in cls.retired and k not in types and v != cls.retired[k]:
                raise RetiredFieldError(
                    f"config field {k!r} was removed from jaxgames (value {v!r} given); only "
                    f"its old default {cls.retired[k]!r} can still be read "
                    "(docs/presets.md#tried-not-kept)"
                )
        data = {k: v for k, v in data.items() if k not in cls.retired or k in types}
        unknown = sorted(set(data) - set(types))
        if unknown:
            raise ValueError(
                f"unknown config field(s) {unknown} for {cls.__name__}; valid: {', '.join(types)}"
            )
        return cls(**{k: _coerce(k, types[k], v) for k, v in data.items()})

    def override(self, overrides: Mapping[str, Any] | Iterable[str]):
        """New config with ``overrides``: a mapping ``{"num_envs": 64, "net.hidden": 32}`` or CLI
        strings ``["--num-envs=64"]`` (strings parsed to the field's type); ``field.key`` sets
        one key of a dict field."""
        if not isinstance(overrides, Mapping):
            overrides = parse_overrides(overrides)
        types = self.field_types()
        changes: dict[str, Any] = {}
        # a different network starts from its own defaults, not the old network's options
        new_net = overrides.get("network", self.network)
        if "net" in types and new_net != self.network:
            changes["net"] = {}
        for raw_key, value in overrides.items():
            name, sub = override_key(raw_key)
            if name not in types:
                raise ValueError(
                    f"unknown config field {raw_key!r} for {type(self).__name__}; "
                    f"valid: {', '.join(types)}"
                )
            if sub:
                if (typing.get_origin(types[name]) or types[name]) is not dict:
                    raise ValueError(
                        f"config field {name!r} is not a mapping; cannot set {raw_key!r}"
                    )
                base = dict(changes.get(name, getattr(self, name)))
                base[sub] = parse_scalar(value) if isinstance(value, str) else value
                changes[name] = base
            else:
                changes[name] = _coerce(name, types[name], value)
        return dataclasses.replace(self, **changes)


def sqrt_scaled_rate(learning_rate: float, growth: float) -> float:
    """``learning_rate`` x sqrt(``growth``) of the minibatch, Adam's scaling rule (Malladi et
    al. 2022), at most 1 and to 6 significant digits: a config that reads as written."""
    return min(1.0, float(f"{learning_rate * growth**0.5:.6g}"))


def minibatch_count(rows: int, at_least: int) -> int:
    """The fewest minibatches, at least ``at_least`` (at most ``rows``: one position each),
    that split ``rows`` positions evenly."""
    count = min(max(1, at_least), rows)
    while rows % count:
        count += 1
    return count


def partner_sizes(num_envs: int, partners: Mapping[str, float]) -> dict[str, int]:
    """Games per partner: ``round(fraction * num_envs)`` each (``ValueError`` if a fraction is
    not in (0, 1], a group would be empty, or the groups exceed ``num_envs``)."""
    sizes = {}
    for name, frac in partners.items():
        if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0.0 < frac <= 1.0:
            raise ValueError(
                f"invalid partners[{name!r}]={frac!r}: the share of games must be a number "
                "in (0, 1]"
            )
        size = int(round(frac * num_envs))
        if size < 1:
            raise ValueError(
                f"invalid partners[{name!r}]={frac!r}: {frac} x num_envs={num_envs} rounds to "
                "0 games (raise num_envs, or drop it: --partners={} is pure self-play)"
            )
        sizes[name] = size
    if sum(sizes.values()) > num_envs:
        raise ValueError(
            f"invalid partners={dict(partners)!r}: the shares add up to more than all "
            f"{num_envs} games"
        )
    return sizes


def override_key(raw_key: str) -> tuple[str, str]:
    """``(field, key in a dict field or "")`` an override ``--raw_key=...`` sets: option names
    take dashes for underscores (``learning-rate``, ``net.hidden-size``); partner specs, which
    name run folders, are kept as given (``partners.runs/a-b``)."""
    raw_name, _, sub = raw_key.partition(".")
    name = raw_name.replace("-", "_")
    if name != "partners":
        sub = sub.replace("-", "_")
    return name, sub


def parse_overrides(args: Iterable[str]) -> dict[str, str]:
    """``["--a=1", "--b", "2"]`` -> ``{"a": "1", "b": "2"}``; ``ValueError`` for anything else,
    and for a field given twice (``--lr=1 --lr=2``, also spelt with ``-`` and ``_``)."""
    args = list(args)
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--") or len(a) < 3:
            raise ValueError(f"unexpected argument {a!r}: overrides look like --name=value")
        if "=" in a:
            k, v = a[2:].split("=", 1)
        else:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise ValueError(f"override {a!r} has no value: use {a}=VALUE")
            k, v = a[2:], args[i + 1]
            i += 1
        same = next((o for o in out if override_key(o) == override_key(k)), None)
        if same is not None:  # the later would silently win
            raise ValueError(f"--{same}={out[same]} and --{k}={v} set the same field: give it once")
        out[k] = v
        i += 1
    return out
