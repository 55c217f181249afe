"""Checks of user-supplied values (configs, specs, command line): each raises a one-line
``ValueError`` naming the field and value, e.g. ``invalid num_envs=0: must be a positive
integer``. Imports nothing of jaxgames."""

from __future__ import annotations

import ast
import math
from typing import Any, Iterable, NoReturn


def fail(name: str, value: Any, what: str) -> NoReturn:
    """Raise ``ValueError("invalid {name}={value!r}: {what}")``."""
    raise ValueError(f"invalid {name}={value!r}: {what}")


def is_finite(value: int | float) -> bool:
    """``math.isfinite`` that answers False for an integer past the float range (instead of
    raising ``OverflowError``)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def check_one_game(state: Any, what: str, *, vmappable: bool = False) -> None:
    """``ValueError`` when ``state`` (a game state: its ``step_count`` has the batch's shape)
    is a batch of games where ``what`` takes one (the shape is known while tracing too);
    ``vmappable``: the message offers ``jax.vmap(what)``."""
    count = getattr(state, "step_count", None)
    shape = () if count is None else tuple(getattr(count, "shape", ()))
    if shape != ():
        how = f"jax.vmap({what}) plays a batch; " if vmappable else ""
        raise ValueError(
            f"{what} takes one game, got a batch of shape {shape}: {how}one game of it is "
            "jax.tree.map(lambda x: x[i], state)"
        )


#: the largest integer a count may take: every count reaches jitted code as an int32 (a larger
#: one overflows there, far from where it was typed)
MAX_INT = 2**31 - 1


def check_int(name: str, value: Any, minimum: int = 1, maximum: int | None = MAX_INT) -> None:
    """``value`` is an int in ``[minimum, maximum]`` (default maximum :data:`MAX_INT`;
    ``None``: no bound)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        fail(
            name,
            value,
            "must be a positive integer" if minimum == 1 else f"must be an integer >= {minimum}",
        )
    if maximum is not None and value > maximum:
        fail(name, value, f"must be at most {maximum}")


#: the largest seed (a jitted int32 argument; larger ones would overflow or collide)
MAX_SEED = MAX_INT


def check_seed(name: str, value: Any) -> None:
    """``value`` is a seed: an integer in ``[0, MAX_SEED]``."""
    check_int(name, value, minimum=0, maximum=MAX_SEED)


def check_float(
    name: str, value: Any, low: float, high: float, low_open: bool = False, high_open: bool = False
) -> None:
    """``value`` is a finite number in [low, high] (bounds open when asked; an infinite bound
    means none)."""
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and is_finite(value)
        and (value > low if low_open else value >= low)
        and (value < high if high_open else value <= high)
    )
    if not ok:
        if math.isinf(high):
            what = f"must be a finite number {'>' if low_open else '>='} {low}"
        else:
            lb, hb = "(" if low_open else "[", ")" if high_open else "]"
            what = f"must be a finite number in {lb}{low}, {high}{hb}"
        fail(name, value, what)


def check_bool(name: str, value: Any) -> None:
    """``value`` is a bool."""
    if not isinstance(value, bool):
        fail(name, value, "must be true or false")


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> None:
    """``value`` is one of ``choices``."""
    choices = list(choices)
    if value not in choices:
        fail(name, value, f"must be one of {choices}")


def parse_scalar(text: str) -> Any:
    """'64' -> 64, '1e-3' -> 0.001, 'true' -> True, '(4, 8)' -> (4, 8), 'abc' -> 'abc',
    'nan' / 'inf' -> floats (for the checks to reject)."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low.lstrip("+-") in ("nan", "inf", "infinity"):  # read as numbers, for "must be finite"
        return float(low)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def quote(value: Any, limit: int = 60) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters: ``'abcd...' (10,485,760
    characters)``."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else f"{text[:limit]}... ({len(text):,} characters)"


class MissingExtraError(ValueError, ImportError):
    """An optional library is missing (the message names the pip extra); a ``ValueError``,
    so the command line prints one ``error:`` line."""


def require(module: str, extra: str, what: str, package: str | None = None) -> Any:
    """Import the optional ``module`` for ``what`` (``"--logger tensorboard"``), or raise
    :class:`MissingExtraError` naming the pip ``extra`` (``package``: the pip name if other)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtraError(
            f"{what} needs {package or module}, which is not installed ({e}): "
            f"pip install 'jaxgames[{extra}]'"
        ) from None
