"""Typed, frozen, validated training configs with ``--key=value`` overrides.

Every algorithm's config subclasses :class:`TrainConfig` (the fields the run driver and the
shared mechanisms need) and adds its own fields and checks in ``validate``::

    cfg = PPOConfig(game="reversi", game_options={"size": 6})
    cfg = cfg.override(["--learning-rate=1e-3", "--net.hidden=64"])   # CLI style
    cfg = cfg.override({"num_envs": 64})                               # or a mapping
    PPOConfig.from_dict(json.load(...))                                # round trip of to_dict()

Bad values raise ``ValueError`` naming the field and the value, e.g.
``invalid num_envs=0: must be a positive integer``.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from typing import Any, Iterable, Mapping


def _fail(name: str, value: Any, what: str) -> None:
    raise ValueError(f"invalid {name}={value!r}: {what}")


def check_int(name: str, value: Any, minimum: int = 1) -> None:
    """``value`` is an int >= ``minimum`` (``ValueError`` naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        _fail(
            name,
            value,
            "must be a positive integer" if minimum == 1 else f"must be an integer >= {minimum}",
        )


def check_float(
    name: str, value: Any, low: float, high: float, low_open: bool = False, high_open: bool = False
) -> None:
    """``value`` is a real number in [low, high] (bounds open when asked)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high
        )
    if not ok:
        lb, hb = "(" if low_open else "[", ")" if high_open else "]"
        _fail(name, value, f"must be a number in {lb}{low}, {high}{hb}")


def check_bool(name: str, value: Any) -> None:
    """``value`` is a bool (``ValueError`` naming ``name`` otherwise)."""
    if not isinstance(value, bool):
        _fail(name, value, "must be true or false")


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> None:
    choices = list(choices)
    if value not in choices:
        _fail(name, value, f"must be one of {choices}")


def _parse_scalar(text: str) -> Any:
    """'64' -> 64, '1e-3' -> 0.001, 'true' -> True, '(4, 8)' -> (4, 8), 'abc' -> 'abc'."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _coerce(name: str, kind: Any, value: Any) -> Any:
    """Convert a CLI string (or JSON value) to the field's declared type."""
    origin = typing.get_origin(kind) or kind
    if isinstance(value, str) and origin is not str:
        value = _parse_scalar(value)
    if origin is bool:
        check_bool(name, value)
        return value
    if origin is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(name, value, "must be an integer")
        return value
    if origin is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(name, value, "must be a number")
        return float(value)
    if origin is str:
        return str(value)
    if origin is dict:
        if not isinstance(value, Mapping):
            _fail(name, value, "must be a mapping such as {'size': 6}")
        return {str(k): (tuple(v) if isinstance(v, list) else v) for k, v in value.items()}
    return value


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Fields common to every algorithm (the driver and evaluation read these).

    game / game_options:  ``jaxgames.make(game, **game_options)``
    seed:                 PRNG seed of the run (``train(PRNGKey(seed))``)
    total_steps:          environment steps (plies, summed over all envs) to train for
    num_envs:             games played in parallel
    network / net:        ``make_network(network, num_actions, **net)``
    learning_rate, max_grad_norm: Adam step size and global-norm gradient clipping
    updates_per_chunk:    updates per jitted chunk (one log line + checkpoint per chunk)
    partners:             training partners: opponent spec -> share of the num_envs games,
                          e.g. {"greedy": 0.25, "alphabeta:2": 0.25}; the rest is self-play
                          (``jaxgames.agents.games_batch``). Empty: pure self-play.
    eval_games:           games vs a random player per side after each chunk (0: no evaluation)
    keep_checkpoints:     orbax checkpoints kept (the newest ones)
    """

    game: str = "tic_tac_toe"
    game_options: dict = dataclasses.field(default_factory=dict)
    seed: int = 0
    total_steps: int = 1_000_000
    num_envs: int = 256
    network: str = "mlp"
    net: dict = dataclasses.field(default_factory=dict)
    learning_rate: float = 3e-4
    max_grad_norm: float = 0.5
    updates_per_chunk: int = 10
    partners: dict = dataclasses.field(default_factory=dict)
    eval_games: int = 256
    keep_checkpoints: int = 3

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, dict):  # keep configs comparable with their JSON round trip
                object.__setattr__(self, f.name, _coerce(f.name, dict, v))
        self.validate()

    # ---------------------------------------------------------------- validation
    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field. Subclasses call ``super().validate()``."""
        import jaxgames
        from jaxgames.agents.networks import make_network

        if not isinstance(self.game, str) or self.game not in jaxgames.registered_games():
            _fail("game", self.game, f"must be one of {jaxgames.registered_games()}")
        env = jaxgames.make(self.game, **self.game_options)  # ValueError for bad options
        check_int("seed", self.seed, minimum=0)
        check_int("total_steps", self.total_steps)
        check_int("num_envs", self.num_envs)
        make_network(self.network, env.num_actions, **self.net)  # ValueError for bad name/options
        check_float("learning_rate", self.learning_rate, 0.0, 1.0, low_open=True)
        check_float("max_grad_norm", self.max_grad_norm, 0.0, float("inf"), low_open=True)
        check_int("updates_per_chunk", self.updates_per_chunk)
        self._check_partners(env)
        check_int("eval_games", self.eval_games, minimum=0)
        check_int("keep_checkpoints", self.keep_checkpoints)

    def _check_partners(self, env) -> None:
        from jaxgames.agents.games_batch import partner_sizes
        from jaxgames.evaluation.opponents import check_opponent_spec

        partner_sizes(self.num_envs, self.partners)  # ValueError naming partners[spec]
        for spec in self.partners:
            try:
                # no checkpoint restore here: configs are validated on every construction
                check_opponent_spec(spec, env)
            except ValueError as e:
                raise ValueError(f"invalid partners={self.partners!r}: {e}") from None

    # ---------------------------------------------------------------- schedule
    @property
    def steps_per_update(self) -> int:
        """Environment steps (plies over all envs) collected per update; set by each algorithm."""
        raise NotImplementedError(f"{type(self).__name__} must define steps_per_update")

    @property
    def num_updates(self) -> int:
        """Updates of the run: total_steps / steps_per_update, rounded to whole chunks (>= 1)."""
        per_chunk = self.updates_per_chunk * self.steps_per_update
        return max(1, round(self.total_steps / per_chunk)) * self.updates_per_chunk

    @classmethod
    def preset(
        cls,
        game: str,
        game_options: dict | None,
        quick: bool,
        game_defaults: Mapping[str, dict],
        quick_values: Mapping[str, Any],
        overrides: Mapping[str, Any],
    ):
        """Config for ``game``: the algorithm's per-game defaults, then its ``quick`` values
        (if ``quick``), then ``overrides`` (field=value), each winning over the previous."""
        values: dict[str, Any] = dict(game_defaults.get(game, {}))
        if quick:
            values.update(quick_values)
        values.update(overrides)
        return cls(game=game, game_options=dict(game_options or {}), **values)

    # ---------------------------------------------------------------- conversion
    def make_env(self):
        """The :class:`~jaxgames.core.Env` this config trains on."""
        import jaxgames

        return jaxgames.make(self.game, **self.game_options)

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
        """Inverse of :meth:`to_dict`; ``ValueError`` for unknown keys or bad values."""
        types = cls.field_types()
        unknown = sorted(set(data) - set(types))
        if unknown:
            raise ValueError(
                f"unknown config field(s) {unknown} for {cls.__name__}; valid: {', '.join(types)}"
            )
        return cls(**{k: _coerce(k, types[k], v) for k, v in data.items()})

    def override(self, overrides: Mapping[str, Any] | Iterable[str]):
        """New config with ``overrides`` applied.

        A mapping ``{"num_envs": 64, "net.hidden": 32}`` or CLI strings
        ``["--num-envs=64", "--net.hidden=32"]`` (dashes in names become underscores; strings
        are parsed to the field's type). ``field.key`` sets one key of a dict field.
        """
        if not isinstance(overrides, Mapping):
            overrides = parse_overrides(overrides)
        types = self.field_types()
        changes: dict[str, Any] = {}
        # a different network starts from its own defaults, not the old network's options
        new_net = overrides.get("network", self.network)
        if "net" in types and new_net != self.network:
            changes["net"] = {}
        for raw_key, value in overrides.items():
            key = raw_key.replace("-", "_")
            name, _, sub = key.partition(".")
            if name not in types:
                raise ValueError(
                    f"unknown config field {raw_key!r} for {type(self).__name__}; valid: {', '.join(types)}"
                )
            if sub:
                if (typing.get_origin(types[name]) or types[name]) is not dict:
                    raise ValueError(
                        f"config field {name!r} is not a mapping; cannot set {raw_key!r}"
                    )
                base = dict(changes.get(name, getattr(self, name)))
                base[sub] = _parse_scalar(value) if isinstance(value, str) else value
                changes[name] = base
            else:
                changes[name] = _coerce(name, types[name], value)
        return dataclasses.replace(self, **changes)


def parse_overrides(args: Iterable[str]) -> dict[str, str]:
    """``["--a=1", "--b", "2", "--net.hidden=64"]`` -> ``{"a": "1", "b": "2", "net.hidden": "64"}``.

    ``ValueError`` for an argument that is not ``--name=value`` / ``--name value``.
    """
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
        out[k] = v
        i += 1
    return out
