"""Checking notebook and benchmark parameters before anything is created or contacted.

Each check returns the value in its canonical type or raises
:class:`~analysis.errors.ParameterError` with a one-line message naming the
parameter and what it accepts. Papermill hands parameters over as Python
literals, so ``"5"`` is accepted where an integer is expected.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import ParameterError

__all__ = ["ParameterError", "choice", "folder", "integer", "names", "optional_integer"]


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
    import os

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
