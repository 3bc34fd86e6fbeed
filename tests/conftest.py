from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def need_tool(name: str) -> str:
    """The path of a real tool; skip (saying why) where this machine lacks it."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (.ci/run installs it)")
    return path
