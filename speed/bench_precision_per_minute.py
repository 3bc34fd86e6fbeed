"""Precision per minute of the rate method's estimators, on the same brackets.

Replays recorded campaigns (docs/_data/campaigns/*.tar.xz, and any campaign folders given
as arguments: ``data/raw/NAME``), and with ``--live`` a fresh one made in the same run
(experiments 4, 9, 13 and 6 of benchmark 1 on ``local``, fixed rounds), through:

* ``current``: each block in its fast state, a bracket's traced block minus its untraced
  neighbours' mean; brackets across a change of speed state, or wholly in the slow
  state, left out (:func:`analysis.ratemethod.table.rate_table`);
* ``ratio``: each bracket's traced block over its untraced neighbours' mean, less 1, times
  the fast state's untraced level: a change of the machine's speed that scales the whole
  bracket cancels, so brackets wholly in the slow state count too (across a change, still
  left out).

Both estimate the same cost from the same brackets in the same minutes, so the ratio of
their CI half-widths is the ratio of precision per minute at equal time, and its square
the ratio of the time each needs for the same CI (the noise averaging as 1/sqrt(n)).
Printed per campaign: the median of both over the cheap experiments (costing less than
the untraced loop's iteration) and the dear ones, and the A/A estimate of each.
"""

from __future__ import annotations

import argparse
import math
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.campaign import Campaign
from analysis.ratemethod import meter as ratemeter
from analysis.ratemethod.execute import AA, VALUE
from analysis.ratemethod.table import events_per_iteration, load_blocks, rate_table

ROOT = Path(__file__).resolve().parents[1]
CONTROL = "01-control"


def ratio_table(camp: Campaign, target: str = "local") -> pd.DataFrame:
    """Per experiment the ``ratio`` estimate and its 95 % CI (per event)."""
    blocks = load_blocks(camp, target)
    states = blocks.attrs["states"]
    a = blocks[blocks["role"] == "A"]
    level = states["fast_ns"] if states["two_states"] else float(a[VALUE].median())
    d = ratemeter.paired_differences(blocks, states["threshold_ns"], VALUE, VALUE)
    d = d[~d["mixed"]].copy()
    d["diff_ns"] = (d["traced_ns"] / d["untraced_ns"] - 1) * level
    epi = events_per_iteration(camp, target)
    ref = d[d["label"].isin([CONTROL, AA])]["diff_ns"].to_numpy()
    rows = []
    for label, g in d.groupby("label"):
        if label == CONTROL:
            continue
        r = d[d["label"] == CONTROL]["diff_ns"].to_numpy() if label == AA else ref
        est, lo, hi = ratemeter.shift_ci(g["diff_ns"].to_numpy(), r)
        ev = epi.get(CONTROL if label == AA else label, math.nan)
        rows.append({"experiment": label, "per_event_ns": est / ev, "half_ns": (hi - lo) / 2 / ev,
                     "brackets": len(g)})
    return pd.DataFrame(rows).set_index("experiment")


def compare(camp: Campaign) -> dict:
    cur = rate_table(camp, "local").set_index("experiment")
    cur["half_ns"] = (cur["per_event_ns_ci_high"] - cur["per_event_ns_ci_low"]) / 2
    rat = ratio_table(camp)
    base = float(cur["untraced_ns_per_iter"].median())
    out = {"name": camp.name, "aa_current": cur.loc[AA, "per_event_ns"] if AA in cur.index
           else math.nan, "aa_ratio": rat.loc[AA, "per_event_ns"] if AA in rat.index else math.nan}
    for group in ("cheap", "dear"):
        rows = [x for x in rat.index if x not in (AA, CONTROL) and x in cur.index
                and (cur.loc[x, "per_event_ns"] * cur.loc[x, "events_per_iter"] < base)
                == (group == "cheap")]
        ratios = [cur.loc[x, "half_ns"] / rat.loc[x, "half_ns"] for x in rows
                  if math.isfinite(rat.loc[x, "half_ns"]) and rat.loc[x, "half_ns"] > 0]
        out[group] = (len(rows), float(np.median([r for r in ratios if math.isfinite(r)]))
                      if ratios else math.nan)
        out[f"{group}_agree"] = sum(
            abs(cur.loc[x, "per_event_ns"] - rat.loc[x, "per_event_ns"])
            <= cur.loc[x, "half_ns"] + rat.loc[x, "half_ns"] for x in rows)
    return out


def unpack(archive: Path, root: Path) -> Campaign:
    name = archive.name.removesuffix(".tar.xz")
    with tarfile.open(archive) as tar:
        kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(root / "raw" / name, **kw)
    return Campaign.open(name, data_dir=root)


def live(root: Path) -> Campaign:
    from analysis.benchmarks import run_benchmark
    result = run_benchmark("dd", "local", experiments=[4, 9, 13, 6], rounds=8, precision=None,
                           budget=None, bpf_stats="off", data_dir=root, campaign="live",
                           progress=False)
    if not result.complete:
        sys.exit(f"the live campaign did not complete: {result}")
    return Campaign.open("live", data_dir=root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaigns", nargs="*", type=Path, help="campaign folders (data/raw/NAME)")
    ap.add_argument("--live", action="store_true", help="also make and replay a fresh one")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-ppm-"))
    camps = [unpack(a, root) for a in sorted((ROOT / "docs/_data/campaigns").glob("*.tar.xz"))]
    camps += [Campaign.open(p.name, data_dir=p.parent.parent) for p in args.campaigns]
    # the rate method's bracket campaigns only (an audit's campaign has no brackets)
    camps = [c for c in camps if c.parameters.get("rate_design") == "bracket"]
    if args.live:
        camps.append(live(root))
    print("campaign                  cheap: n, width current/ratio (time: its square)   "
          "dear: n, width ratio   agree (CIs overlap)   A/A current / ratio (ns per event)")
    for camp in camps:
        r = compare(camp)
        (nc, wc), (nd, wd) = r["cheap"], r["dear"]
        print(f"{r['name']:<25} {nc:>2}, {wc:5.2f}x ({wc ** 2:5.2f}x)"
              f"{'':>26}{nd:>2}, {wd:5.2f}x   {r['cheap_agree'] + r['dear_agree']:>2} of "
              f"{nc + nd}{'':>14}{r['aa_current']:+7.1f} / {r['aa_ratio']:+7.1f}")


if __name__ == "__main__":
    main()
