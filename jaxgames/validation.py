"""Checks of user-supplied values, shared by configs, specs and the command line.

Every check raises ``ValueError`` with one line naming the field and the bad value, e.g.
``invalid num_envs=0: must be a positive integer``. Nothing here imports the rest of jaxgames.
"""

from __future__ import annotations

import ast
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
        fail(name, value, f"must be a number in {lb}{low}, {high}{hb}")


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
    """'64' -> 64, '1e-3' -> 0.001, 'true' -> True, '(4, 8)' -> (4, 8), 'abc' -> 'abc'."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
