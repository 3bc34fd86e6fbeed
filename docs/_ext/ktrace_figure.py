"""Draw docs/_static/figures/ktrace.png from a ktrace campaign's processed runs.

The ktrace benchmark reports a table only; its docs page shows these times as a figure:

    .venv/bin/python docs/_ext/ktrace_figure.py CAMPAIGN

reads data/processed/CAMPAIGN/ktrace_runs.csv (written by `python -m analysis report
CAMPAIGN`) and writes figures/ktrace-CAMPAIGN-times.pdf/.png through analysis.save_figure
(with its provenance), then copies the PNG into docs/_static/figures/ktrace.png.
"""

from __future__ import annotations

import shutil
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import analysis  # noqa: E402


def main(campaign: str, caveat: str = "") -> None:
    proc = analysis.paths.project_root() / "data" / "processed" / campaign
    runs = pd.read_csv(proc / "ktrace_runs.csv")
    parts = [("attach_s", "attach"), ("workload_s", "cat"), ("stop_s", "stop (SIGINT to exit)")]
    fig, ax = plt.subplots(figsize=(6, 2.6), layout="constrained")
    left = pd.Series(0.0, index=runs.index)
    for (col, label), color in zip(parts, ("#0072B2", "#E69F00", "#D55E00")):
        ax.barh(runs["run"], runs[col], left=left, color=color, edgecolor="black",
                linewidth=0.5, label=label)
        left = left + runs[col].fillna(0)
    ax.set_xlabel("seconds")
    probes = int(runs["attached"].median())
    title = f"ktrace: {probes:,} probes attached, one cat"
    ax.set_title(title + (f"\n{caveat}" if caveat else ""), fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    manifest = analysis.paths.project_root() / "data" / "raw" / campaign / "manifest.json"
    written = analysis.save_figure(fig, f"ktrace-{campaign}-times", sources=[manifest])
    png = next(p for p in written if str(p).endswith(".png"))
    dest = analysis.paths.project_root() / "docs" / "_static" / "figures" / "ktrace.png"
    shutil.copyfile(png, dest)
    print(png, "->", dest)


if __name__ == "__main__":
    main(sys.argv[1], " ".join(sys.argv[2:]))
