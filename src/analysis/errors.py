"""One exception hierarchy for the whole package.

Every error the package raises on purpose derives from :class:`AnalysisError`,
and carries the facts a user needs as attributes, not only in its message.
"""

from __future__ import annotations

from pathlib import Path


class AnalysisError(Exception):
    """Base class of every error raised on purpose by :mod:`analysis`."""


class DataFormatError(AnalysisError, ValueError):
    """A result file cannot be read: empty, truncated, not the expected format.

    Attributes
    ----------
    path:    the file (``None`` for in-memory data)
    field:   the field or part of the file that is wrong (``None`` if the
             whole file is unreadable)
    problem: what is wrong, in words
    """

    def __init__(self, path: str | Path | None, field: str | None, problem: str):
        self.path = None if path is None else str(path)
        self.field = field
        self.problem = problem
        where = self.path if self.path is not None else "<data>"
        if field:
            where = f"{where}: field {field!r}"
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):  # keep pickling (multiprocessing) working
        return (type(self), (self.path, self.field, self.problem))
