"""Reading JSON result files with errors that name the file and the place."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from analysis.errors import DataFormatError


def read_json(path: str | Path, what: str) -> Any:
    """Parse a JSON file; any problem becomes a :class:`DataFormatError`."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(path, None, f"no such {what} file") from None
    except OSError as exc:
        raise DataFormatError(path, None, f"cannot read {what} file: {exc.strerror}") from None
    if not raw.strip():
        raise DataFormatError(path, None, f"empty file (expected {what} JSON)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, None, f"not UTF-8 text at byte {exc.start}") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except _ConstantError as exc:
        raise DataFormatError(path, None, f"non-JSON number {exc.args[0]!r}") from None
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip()) - 1
        problem = (
            f"truncated JSON (ends at line {exc.lineno})"
            if truncated
            else f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        )
        raise DataFormatError(path, _field_near(text, exc.pos), problem) from None


class _ConstantError(ValueError):
    pass


def _reject_constant(name: str):
    raise _ConstantError(name)


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


def _field_near(text: str, pos: int) -> str | None:
    """The last JSON key written before ``pos`` (where the parser gave up), if any."""
    keys = _KEY.findall(text, max(0, pos - 2000), pos + 1)
    return keys[-1] if keys else None


def require(obj: Any, types: type | tuple[type, ...], path: Path | str, field: str) -> Any:
    """``obj`` if it is of ``types`` (bool never counts as a number), else DataFormatError."""
    numeric = types in (int, float, (int, float))
    if isinstance(obj, bool) and numeric or not isinstance(obj, types):
        expected = types.__name__ if isinstance(types, type) else " or ".join(t.__name__ for t in types)
        got = "null" if obj is None else type(obj).__name__
        raise DataFormatError(path, field, f"expected {expected}, found {got}")
    return obj
