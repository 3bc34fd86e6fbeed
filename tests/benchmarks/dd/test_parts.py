"""dd's report shows a cost in parts where an anatomy campaign of the same host measured its
attach point (:mod:`analysis.benchmarks.dd.parts`), on a recorded pair
(``tests/fixtures/parts/an1-dd1.tar.xz``: anatomy ``an1`` with the read tracepoint's and
libc's ``__read``'s empty programs, then benchmark 1's ``dd1`` with 04, 06 and 09 by the
rate method; one boot of this lab's host, 6 Dec 2026). Every part is recomputed here from
the two campaigns' own reports; a folder without the anatomy campaign, or with one from
another host, shows none."""

from __future__ import annotations

import json
import math
import shutil
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from analysis import report
from docs_outputs import missing_outputs

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

PAIR = Path(__file__).resolve().parents[2] / "fixtures" / "parts" / "an1-dd1.tar.xz"
#: benchmark 1's experiments in the pair and the mechanism row of each one's attach point
MECHANISM = {"04-tracepoint-entry": "tracepoint-read", "06-uprobe": "uprobe-libc-read",
             "09-map": "tracepoint-read"}


@pytest.fixture
def pair(tmp_path) -> Path:
    data = tmp_path / "data"
    with tarfile.open(PAIR) as tar:  # (Debian 12's Python, 3.11.2, has no filter=)
        kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(data / "raw", **kw)
    return data


def test_a_cost_is_its_mechanism_plus_its_program(pair, tmp_path):
    anatomy = report("an1", data_dir=pair, write=False).values["parts"].set_index("part")
    rep = report("dd1", data_dir=pair, figures_dir=tmp_path / "fig")
    got = rep.values["parts"].set_index("experiment")
    table = rep.values["table"].set_index("experiment")
    assert sorted(got.index) == sorted(MECHANISM)
    for exp, mech in MECHANISM.items():
        r, m, cost = got.loc[exp], anatomy.loc[mech], table.loc[exp]
        assert (r["mechanism"], r["mechanism_campaign"], r["host_match"]) == (
            mech, "an1", "same boot")
        assert r["mechanism_ns"] == m["ns"]
        assert r["program_ns"] == pytest.approx(cost["per_event_ns"] - m["ns"], rel=1e-12)
        half = math.hypot((cost["per_event_ns_ci_high"] - cost["per_event_ns_ci_low"]) / 2,
                          (m["ci_high"] - m["ci_low"]) / 2)
        if math.isfinite(half):  # both CIs finite: the program's, in quadrature
            assert r["program_ns_ci_low"] == pytest.approx(r["program_ns"] - half)
            assert r["program_ns_ci_high"] == pytest.approx(r["program_ns"] + half)
        else:
            assert math.isnan(r["program_ns_ci_low"]) and math.isnan(r["program_ns_ci_high"])
        consumer = rep.values["rate_table"].set_index("experiment").loc[
            exp, "consumer_ns_per_event"]
        assert r["consumer_ns_per_event"] == consumer
    # 06's empty program cost more in an1 than 06's whole script in dd1: said, not hidden
    assert got.loc["06-uprobe", "program_ns_ci_high"] < 0
    assert "a program part below zero" in rep.summary
    assert "parts (mechanism: an empty program on the same attach point, campaign an1, " \
           "same boot):" in rep.summary
    assert missing_outputs("dd", "dd1", pair, tmp_path / "fig", conditions=(
        "the rate method", "an anatomy campaign of this host")) == []
    written = pd.read_csv(pair / "processed" / "dd1" / "parts.csv")
    assert list(written["experiment"]) == list(got.index)
    first = (tmp_path / "fig" / "dd-dd1-parts.md").read_text().splitlines()[0]
    assert "raw/dd1/manifest.json" in first and "raw/an1/manifest.json" in first


def test_no_parts_without_an_anatomy_campaign_of_that_host(pair, tmp_path):
    alone = tmp_path / "alone"
    shutil.copytree(pair / "raw" / "dd1", alone / "raw" / "dd1")
    rep = report("dd1", data_dir=alone, figures_dir=alone / "fig")
    assert rep.values["parts"].empty and "parts (" not in rep.summary
    assert not (alone / "fig" / "dd-dd1-parts.md").exists()
    # the anatomy campaign of another host (its boot and machine ids changed): not used
    manifest = pair / "raw" / "an1" / "manifest.json"
    m = json.loads(manifest.read_text())
    details = m["targets"]["local"]["preflight"]["details"]
    details.update(boot_id="another-boot", machine_id="another-machine")
    manifest.write_text(json.dumps(m))
    rep = report("dd1", data_dir=pair, figures_dir=tmp_path / "fig2")
    assert rep.values["parts"].empty
