"""``make figures``: every campaign's report rebuilt from data/raw, then the rules-of-thumb
figure of every target."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from analysis import rules
from analysis.benchmarks import for_campaign, report
from analysis.campaign import Campaign, campaigns


def regenerate(data_dir=None, figures_dir=None) -> list[Path]:
    """Every campaign's report, rebuilt from data/raw (what ``make figures`` does), then the
    rules-of-thumb figure of every target. A campaign with nothing to report is skipped,
    saying so; an integrity problem stops."""
    written: list[Path] = []
    targets: dict = {}
    for name in campaigns(data_dir):
        try:
            written += report(name, data_dir=data_dir, figures_dir=figures_dir).written
            targets.update(dict.fromkeys(Campaign.open(name, data_dir=data_dir).target_names))
        except (ValueError, KeyError) as exc:  # IntegrityError is neither: it stops
            print(f"skipped {name}: {exc}")
        plt.close("all")
    for target in targets:  # Gregg's rules of thumb from every campaign on each target
        written += rules.save(target, benchmark_of=for_campaign, data_dir=data_dir,
                              figures_dir=figures_dir)["written"]
        plt.close("all")
    return written
