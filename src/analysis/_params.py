"""Checking notebook and benchmark parameters before anything is created or contacted.

Each check returns the value in its canonical type or raises
:class:`~analysis.errors.ParameterError` with a one-line message naming the
parameter and what it accepts. Papermill hands parameters over as Python
literals, so ``"5"`` is accepted where an integer is expected.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from numbers import Real

from analysis.errors import ParameterError

__all__ = ["ParameterError", "choice", "folder", "integer", "names", "optional_integer", "seconds"]


def integer(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (or a string of one) within ``[minimum, maximum]``."""
    if isinstance(value, bool):
        raise ParameterError(name, value, "expected a whole number, not a boolean")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip().replace("_", ""))
        except ValueError:
            raise ParameterError(name, value, _range_text(minimum, maximum)) from None
    if not isinstance(value, int):
        raise ParameterError(name, value, _range_text(minimum, maximum))
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ParameterError(name, value, _range_text(minimum, maximum))
    return value


def optional_integer(name: str, value, minimum: int | None = None,
                     maximum: int | None = None) -> int | None:
    return None if value is None else integer(name, value, minimum, maximum)


def choice(name: str, value, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ParameterError(name, value, f"expected one of {', '.join(map(str, allowed))}")
    return value


def names(name: str, value, allowed: Sequence[str] | None = None) -> list[str] | None:
    """A list of names: a list, a comma-separated string or one name (None stays None)."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise ParameterError(name, value, "expected a list or a comma-separated string")
    if not items:
        raise ParameterError(name, value, "expected at least one entry")
    if allowed is not None:
        for item in items:
            if item not in allowed:
                raise ParameterError(name, item, f"expected some of {', '.join(allowed)}")
    return items


def folder(name: str, value):
    """A folder path (str or PathLike) or None."""
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise ParameterError(name, value, "expected a folder path or None")
    return value


def _range_text(minimum, maximum) -> str:
    if minimum is not None and maximum is not None:
        return f"expected a whole number from {minimum} to {maximum}"
    if minimum is not None:
        return f"expected a whole number >= {minimum}"
    if maximum is not None:
        return f"expected a whole number <= {maximum}"
    return "expected a whole number"


_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}
_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_DURATION = re.compile(
    rf"^(?:(?P<h>{_NUMBER})\s*(?:h|hrs?|hours?))?\s*"
    rf"(?:(?P<m>{_NUMBER})\s*(?:m|mins?|minutes?))?\s*"
    rf"(?:(?P<s>{_NUMBER})\s*(?:s|secs?|seconds?))?$")
DURATION_TEXT = ("expected a positive duration such as '90 s', '10 min', '1.5 h', '1h30m' "
                 "or a number of seconds")


def seconds(name: str, value, *, maximum: float | None = None) -> float:
    """The one reading of a duration: seconds from a number (``90``, ``"90"``, ``"1e3"``) or
    ``"90 s"``, ``"90s"``, ``"10 min"``, ``"1.5 h"``, ``"1h30m"``, ``"1 h 30 min"`` (h/hr/hour,
    m/min/minute, s/sec/second, each at most once, in that order); positive, finite and at
    most ``maximum``, else :class:`ParameterError`."""
    text = DURATION_TEXT + (f", at most {maximum:g} s" if maximum is not None else "")
    if isinstance(value, bool):
        raise ParameterError(name, value, text)
    if isinstance(value, Real):
        value_s = float(value)
    elif isinstance(value, str):
        raw = value.strip().lower()
        try:
            value_s = float(raw)
        except ValueError:
            m = _DURATION.fullmatch(raw)
            if not raw or m is None or not any(m.groupdict().values()):
                raise ParameterError(name, value, text) from None
            value_s = sum(float(v) * _UNITS[k] for k, v in m.groupdict().items() if v)
    else:
        raise ParameterError(name, value, text)
    if not math.isfinite(value_s) or value_s <= 0 or (maximum is not None and value_s > maximum):
        raise ParameterError(name, value, text)
    return value_s


def flag(name: str, value) -> bool:
    """A yes/no parameter: a bool, or ``"true"``/``"false"``/``"1"``/``"0"`` (any case) from
    the command line or papermill."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    raise ParameterError(name, value, "expected True or False")
