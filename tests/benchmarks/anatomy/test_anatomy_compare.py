"""Comparing two anatomy campaigns (issue 52: "explanations in compare"): the recorded
campaigns of two hosts (docs/_data/campaigns: 6 Dec 2026, CPU model 17 at 2596 MHz; 7 Dec
2026, CPU model 1 at 2445 MHz), compared by ``analysis.compare``, every row's figures
recomputed here from the raw files, and the explanation's shares from the rows."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import numpy as np
import pytest

import analysis
from analysis import ratemethod
from analysis.benchmarks.anatomy import PARTS
from analysis.campaign import Campaign
from conftest import raw_bracket

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

CAMPAIGNS = Path(__file__).resolve().parents[3] / "docs" / "_data" / "campaigns"
A, B = "anatomy-20261206b", "anatomy-20261207"


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    root = tmp_path_factory.mktemp("anatomy-compare")
    for name in (A, B):
        with tarfile.open(CAMPAIGNS / f"{name}.tar.xz") as tar:
            kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(root / "raw" / name, **kw)
    out = analysis.compare([A, B], data_dir=root, figures_dir=root / "figures")
    return root, out


def _platform_rounds(folder: Path) -> dict[int, dict[str, float]]:
    """Per round, each platform loop's time per iteration in the fast state, from its raw
    windows (the windows within 5 % of the 10th-percentile window, total ns over total
    iterations), without the package."""
    runs = json.loads((folder / "manifest.json").read_text())["runs"]["local"]
    out: dict[int, dict[str, float]] = {}
    for rid, e in runs.items():
        if e["params"].get("kind") != "platform" or e.get("status") != "done":
            continue
        text = (folder / "local" / rid / "workload.stdout").read_text()
        w = np.array([[int(a), int(b)] for a, b in
                      re.findall(r"^w \d+ (\d+) (\d+) \d+$", text, re.M)], float)
        per = w[:, 1] / w[:, 0]
        fast = per <= np.percentile(per, 10) * 1.05
        out.setdefault(int(e["params"]["round"]), {})[e["experiment"]] = \
            w[fast, 1].sum() / w[fast, 0].sum()
    return out


def test_the_platform_parts_compared_are_the_raw_rounds_means(compared):
    root, out = compared
    rows = out.table.set_index("experiment")
    for side, name in (("a", A), ("b", B)):
        rounds = _platform_rounds(root / "raw" / name)
        for p in PARTS:
            d = [r[p.of] - r[p.against] for r in rounds.values()]
            assert rows.loc[p.name, side] == pytest.approx(np.mean(d), rel=1e-9), (name, p)
            assert rows.loc[p.name, f"n_{side}"] == len(d)
    assert (rows.loc[[p.name for p in PARTS], "unit"] == "ns per iteration").all()


def test_a_mechanism_row_is_its_kept_brackets_against_the_rounds_references(compared):
    """uprobe-nop per round: its kept brackets' median difference (recomputed from the raw
    windows) less the median of that round's kept control and A/A brackets, per event."""
    root, out = compared
    rows = out.table.set_index("experiment")
    for side, name in (("a", A), ("b", B)):
        camp = Campaign.open(name, data_dir=root)
        kept = ratemethod.bracket_differences(camp, "local")
        runs = camp.run_records("local")
        raw = {}
        for rid, e in runs.items():
            if e.get("params", {}).get("kind") == ratemethod.BRACKET_KIND:
                t, b, a = raw_bracket(camp.run_dir("local", rid) / "workload.stdout")
                label = ratemethod.AA if e["params"].get("aa") else e["experiment"]
                raw.setdefault((label, int(e["params"]["round"])), []).append(t - (b + a) / 2)
        per = ratemethod.events_per_iteration(camp, "local")["uprobe-nop"]
        values = []
        for r, g in kept.groupby("round"):
            mine = g.loc[g["label"] == "uprobe-nop", "diff_ns"].to_numpy()
            refs = g.loc[g["label"].isin(["begin-only", ratemethod.AA]), "diff_ns"].to_numpy()
            if not (mine.size and refs.size):
                continue
            for v in np.concatenate([mine, refs]):  # each a raw bracket's difference
                assert any(np.isclose(v, x, rtol=1e-9) for k, xs in raw.items()
                           if k[1] == r for x in xs)
            values.append((np.median(mine) - np.median(refs)) / per)
        assert rows.loc["uprobe-nop", side] == pytest.approx(np.mean(values), rel=1e-9)
    assert out.incomparable.empty, out.incomparable  # the meter's path is no identity


def test_the_explanation_says_what_moved_and_the_single_steps_share(compared):
    _, out = compared
    rows = out.table.set_index("experiment")
    moved = rows[rows["verdict"].isin(["B slower", "B faster"])]
    plat = moved[moved["unit"] == "ns per iteration"]["ratio"]
    lines = out.explanations
    assert len(plat) > 1 and lines[0] == (
        f"the platform's parts: {len(plat)} of {len(PARTS)} moved, by a factor "
        f"{plat.min():.2f}-{plat.max():.2f} (B / A)")
    d = {x: rows.loc[x, "b"] - rows.loc[x, "a"] for x in
         ("uprobe-mov", "uprobe-step-over-nop", "uprobe-nop", "step-over-breakpoint")}
    mov = next(x for x in lines if x.startswith("uprobe-mov "))
    assert f"({d['uprobe-step-over-nop'] / d['uprobe-mov']:.0%} of it)" in mov
    assert f"the emulated uprobe {d['uprobe-nop']:+.4g} ns" in mov
    assert f"({d['step-over-breakpoint']:+.4g})" in mov
    # on these two hosts the single step is most of what moved: the debug exception
    assert d["uprobe-step-over-nop"] / d["uprobe-mov"] > 0.8
    assert "what explains the moves:" in out.summary and mov in out.summary
