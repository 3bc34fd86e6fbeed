"""The probe-effect lesson in under two minutes: notebook 0.0 under papermill, timed.

Runs `notebooks/0.0-probe-effect.ipynb` with its defaults on target `local` (a fresh
data and figures folder, as after `make demo`), and, in the same session as the baseline,
`0.2-target-preflight` (a kernel, the package's import and a preflight: what any notebook
pays before it measures anything). Prints both wall times, their ratio, the lesson's
runs and per-event costs, and whether it met the two-minute target.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import papermill

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 120.0


def papermill_wall(notebook: str, out: Path, **parameters) -> float:
    start = time.perf_counter()
    papermill.execute_notebook(str(ROOT / "notebooks" / notebook), str(out),
                               parameters=parameters, kernel_name="python3",
                               progress_bar=False, cwd=str(out.parent))
    return time.perf_counter() - start


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-lesson-"))
    base = papermill_wall("0.2-target-preflight.ipynb", tmp / "preflight.ipynb")
    lesson = papermill_wall("0.0-probe-effect.ipynb", tmp / "lesson.ipynb",
                            data_dir=str(tmp / "data"), figures_dir=str(tmp / "figures"),
                            campaign="bench")
    manifest = json.loads((tmp / "data" / "raw" / "bench" / "manifest.json").read_text())
    runs = manifest["runs"]["local"].values()
    failed = sum(1 for r in runs if r["status"] != "done")
    executed = json.loads((tmp / "lesson.ipynb").read_text())
    summary = next("".join(o["text"]) for c in executed["cells"] for o in c.get("outputs", [])
                   if o.get("name") == "stdout" and "ns per event" in "".join(o["text"]))
    images = sum(1 for c in executed["cells"] for o in c.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    print(f"0.0-probe-effect (defaults)   {lesson:6.1f} s  ({len(runs)} blocks, {failed} failed, "
          f"{images} figures shown)")
    print(f"0.2-target-preflight baseline {base:6.1f} s")
    print(f"lesson / baseline: {lesson / base:.1f}x; target < {TARGET_S:.0f} s: "
          f"{'met' if lesson < TARGET_S else 'NOT met'}")
    print(summary.rstrip())
    if failed:
        sys.exit(f"{failed} runs failed: see {tmp}")


if __name__ == "__main__":
    main()
