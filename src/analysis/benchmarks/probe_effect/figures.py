"""The lesson's live figure: every timed dd run so far, redrawn as blocks arrive."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis import plots
from analysis.benchmarks.probe_effect.plan import label
from analysis.progress import in_kernel


class LiveRuns:
    """Every timed dd run so far, redrawn in one notebook output as blocks arrive
    (outside a notebook it only collects them)."""

    def __init__(self, target: str, labels: dict | None = None):
        self.target, self.labels, self.rows, self._handle = target, labels or {}, [], None

    def __call__(self, run, staging: Path, info: dict) -> None:
        params = run.params
        if params.get("kind") != "timed" or params.get("aa"):
            return
        times = json.loads((Path(staging) / "hyperfine.json").read_text())["results"][0]["times"]
        count = int(params["count"])
        script = Path(staging) / f"{run.experiment}.bt"  # the script ran, fetched with the run
        if script.is_file():
            first = next((x for x in script.read_text().splitlines()
                          if x.strip() and not x.lstrip().startswith("//")), "")
            self.labels[run.experiment] = label(run.experiment, first.split(" ")[0] or None)
        self.rows += [{"experiment": run.experiment, "ns_per_read": t / count * 1e9,
                       "round": params["round"]} for t in times]
        self.show()

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["experiment", "ns_per_read", "round"])

    def figure(self):
        frame = self.frame()
        rounds = int(frame["round"].max()) + 1 if len(frame) else 0
        return plots.runs_box(frame, value="ns_per_read", ylabel="time per dd read (ns)",
                              title=f"The probe effect, {self.target}: {len(frame)} runs, "
                                    f"{rounds} round(s) so far", tracer="bpftrace",
                              labels=self.labels,
                              caption="points: every timed dd run (its time / its reads); "
                                      + plots.BOX_CAPTION)

    def show(self) -> None:
        if not in_kernel() or not self.rows:
            return
        from IPython.display import display

        fig = self.figure()
        if self._handle is None:
            self._handle = display(fig, display_id=True)
        else:
            self._handle.update(fig)
        plt.close(fig)
