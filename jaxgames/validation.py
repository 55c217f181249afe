"""Checks of user-supplied values, shared by configs, specs and the command line.

Every check raises ``ValueError`` with one line naming the field and the bad value, e.g.
``invalid num_envs=0: must be a positive integer``. Nothing here imports the rest of jaxgames.
"""

from __future__ import annotations

import ast
import math
from typing import Any, Iterable, NoReturn


def fail(name: str, value: Any, what: str) -> NoReturn:
    """Raise ``ValueError("invalid {name}={value!r}: {what}")``."""
    raise ValueError(f"invalid {name}={value!r}: {what}")


def check_int(name: str, value: Any, minimum: int = 1, maximum: int | None = None) -> None:
    """``value`` is an int in ``[minimum, maximum]`` (``ValueError`` naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        fail(
            name,
            value,
            "must be a positive integer" if minimum == 1 else f"must be an integer >= {minimum}",
        )
    if maximum is not None and value > maximum:
        fail(name, value, f"must be at most {maximum}")


#: seeds are at most this (JAX's PRNG keys hold 32 bits without x64, and jitted int32 arguments
#: 31: a larger seed would collide with a smaller one or overflow)
MAX_SEED = 2**31 - 1


def check_seed(name: str, value: Any) -> None:
    """``value`` is a seed: an integer in ``[0, MAX_SEED]``."""
    check_int(name, value, minimum=0, maximum=MAX_SEED)


def check_float(
    name: str, value: Any, low: float, high: float, low_open: bool = False, high_open: bool = False
) -> None:
    """``value`` is a finite real number in [low, high] (bounds open when asked; an infinite
    bound only says there is none: NaN and infinities are always rejected)."""
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
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
    """``value`` is a bool (``ValueError`` naming ``name`` otherwise)."""
    if not isinstance(value, bool):
        fail(name, value, "must be true or false")


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> None:
    """``value`` is one of ``choices``."""
    choices = list(choices)
    if value not in choices:
        fail(name, value, f"must be one of {choices}")


def parse_scalar(text: str) -> Any:
    """'64' -> 64, '1e-3' -> 0.001, 'true' -> True, '(4, 8)' -> (4, 8), 'abc' -> 'abc';
    'nan', 'inf', '1e999' -> the float NaN / infinity (which checks then reject)."""
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
    """``repr(value)`` for an error message, cut to ``limit`` characters of a long string
    (an input line may be megabytes long): ``'abcd...' (10,485,760 characters)``."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= limit + 2 else f"{text[:limit]}... ({len(text):,} characters)"


class MissingExtraError(ValueError, ImportError):
    """An optional integration's library is not installed (the message names the pip extra).
    A ``ValueError`` so the command line prints it as one ``error:`` line."""


def require(module: str, extra: str, what: str, package: str | None = None) -> Any:
    """Import the optional ``module`` for ``what`` (e.g. ``"--logger tensorboard"``), or raise
    :class:`MissingExtraError` naming the pip extra that installs it (``package``: its pip
    name when it differs from the module's)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtraError(
            f"{what} needs {package or module}, which is not installed ({e}): "
            f"pip install 'jaxgames[{extra}]'"
        ) from None
