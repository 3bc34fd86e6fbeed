"""What the anatomy page says of its recorded campaign, held to the record it quotes
(docs/_data/records/anatomy-bench.json, rebuilt from its raw data by
tests/test_docs_numbers.py)."""

from __future__ import annotations

import json

import pytest

from analysis.benchmarks.anatomy.kbench import BENCHES, DEFAULT
from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_the_pages_claim_that_the_kernels_bench_and_the_lab_agree():
    """docs/benchmarks/anatomy.md says the kernel's bench and the lab's mechanism rows
    agree within 10 % on every row of its table."""
    page = (ROOT / "docs" / "benchmarks" / "anatomy.md").read_text()
    assert "agree within {setting}`10 %` on every row" in page
    rec = json.loads((ROOT / "docs" / "_data" / "records" / "anatomy-bench.json")
                     .read_text())["experiments"]
    for bench in DEFAULT:
        lab = BENCHES[bench][1]
        assert f"anatomy-bench:{bench}.cost" in page and f"anatomy-bench:{lab}.cost" in page
        assert abs(rec[bench]["cost_ns"] / rec[lab]["cost_ns"] - 1) <= 0.10, (bench, lab)
