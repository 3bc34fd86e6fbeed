"""The toggle as a design: many short sessions per experiment, interleaved, the session as
its CI's unit, against the lab's brackets in the same run.

``crosscheck.py`` left two questions (7 Dec 2026): one toggle session's CI (its pairs) is
far narrower than the spread between sessions, and a probe's cost on a slow spell is
dearer than on a fast one. This runs what the toggle would have to be to stand as a
design, and prints its precision per minute against the brackets':

1. the lab's rate method on ``local`` (``run_benchmark("dd", ...)``, ROUNDS rounds of the
   experiments given, the control and the A/A in each): its cost per event and 95 % CI,
   and its wall time shared equally among its bracket kinds (``crosscheck.py``'s rule);
2. then ROUNDS rounds of toggle sessions: in each, one session of SECONDS per experiment
   in a shuffled order, and one A/A session (the slices with a sleep of a detach's length
   for each attach and detach, no program). Every session's ``P`` lines are kept in
   ``--keep`` (default: a temporary folder, removed) with ``run.json`` (the brackets' table,
   each session's file and wall time).

The toggle's estimate is the lab's (:mod:`analysis.ratemethod.toggle`): per session the
mean difference of the pairs with both slices in the run's fast state (a session with
fewer than three left out), the CI Student's t over sessions. Printed per experiment: both
designs' costs and CIs, the host's untraced speed in each (brackets' untraced blocks, the
toggle's off slices), whether the CIs overlap, and the time ratio: the machine time the
brackets need for the toggle's CI over the time the toggle's sessions took (CIs
shrinking as 1/sqrt(time); the brackets' time is the campaign's wall time shared equally
among its bracket kinds, the control and the A/A included).

``--replay DIR`` reports a kept run again, running nothing (numpy).

Root; bpftrace; nothing else running (the rest of the machine is the noise measured).
Usage: .venv/bin/python speed/toggle/sessions.py [--experiments 4,9,13] [--rounds 8]
[--seconds 2] [--keep DIR] | --replay DIR
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from analysis.ratemethod import toggle

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crosscheck import build, campaign, run_toggle  # noqa: E402

AA = "aa"  # the A/A sessions' label

RUN = "run.json"


def record(args) -> Path:
    """Brackets, then toggle sessions; everything kept in ``args.keep`` (RUN and one file
    per session); the folder."""
    keep = args.keep or Path(tempfile.mkdtemp(prefix="toggle-sessions-")) / "sessions"
    keep.mkdir(parents=True, exist_ok=False)
    work = Path(tempfile.mkdtemp(prefix="toggle-sessions-work-"))
    exe = build(work)
    run = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "host": os.uname().nodename, "kernel": os.uname().release,
           "rounds": args.rounds, "seconds": args.seconds, **({"fork": True} if args.fork else {})}
    print(f"# {run['started']}, {run['host']}, kernel {run['kernel']}", flush=True)
    _, table, took = campaign(work, [int(x) for x in args.experiments.split(",")], args.rounds)
    labels = [x for x in table.index if x[:2].isdigit() and x != "01-control"]
    run["brackets"] = {"took_s": took, "kinds": len(labels) + 2, "rows": {
        x: {k: float(table.loc[x, k]) for k in ("per_event_ns", "per_event_ns_ci_low",
                                                 "per_event_ns_ci_high", "events_per_iter",
                                                 "untraced_ns_per_iter",
                                                 "per_event_ns_all_windows")}
        for x in [*labels, "01-control"]}}
    print(f"# brackets: {args.rounds} rounds of {len(labels)} experiments, control and A/A "
          f"in {took:.0f} s", flush=True)
    scripts = {x: next((work / "raw" / "brackets" / "local").glob(f"q*-{x}/{x}.bt"))
               for x in labels}
    shutil.copytree(work / "raw" / "brackets", keep / "brackets")  # its raw data, kept
    run["sessions"] = {x: [] for x in [*labels, AA]}
    rng = random.Random(0)
    t0 = time.monotonic()
    for r in range(args.rounds):
        order = [*labels, AA]
        rng.shuffle(order)
        for label in order:
            out, t = run_toggle(exe, scripts.get(label), args.seconds,
                                ["-F"] if args.fork else [])
            name = f"r{r:02d}-{label}.txt"
            (keep / name).write_text(out)
            run["sessions"][label].append({"file": name, "wall_s": t})
        print(f"# toggle round {r + 1} of {args.rounds}: {time.monotonic() - t0:.0f} s",
              flush=True)
    (keep / RUN).write_text(json.dumps(run, indent=1) + "\n")
    shutil.rmtree(work)
    return keep


def report(keep: Path) -> None:
    """The table of a recorded run (numpy: the lab's estimator, :mod:`analysis.ratemethod.toggle`)."""
    run = json.loads((keep / RUN).read_text())
    sessions = {label: [toggle.parse_pairs((keep / s["file"]).read_text(), keep / s["file"])
                        for s in ss] for label, ss in run["sessions"].items()}
    fast = toggle.session_costs(sessions)
    b = run["brackets"]
    share = b["took_s"] / b["kinds"]
    print(f"# {run['started']}, {run['host']}, kernel {run['kernel']}: brackets "
          f"{run['rounds']} rounds in {b['took_s']:.0f} s ({share:.1f} s per bracket kind); "
          f"toggle {run['rounds']} sessions of {run['seconds']:g} s per experiment"
          + ("; a child forked per pair (-F)" if run.get("fork") else ""))
    print(f"{'experiment':<21}{'brackets [95% CI]':>29}{'untraced':>9}{'all win.':>9}   "
          f"{'toggle [95% CI]':<26}{'sessions':>9}{'off':>5}{'agree':>6}{'time ratio':>11}")
    nan = math.nan
    off_all = np.concatenate([p[:, 1] for ps in sessions.values() for p in ps])
    for label, ps in sessions.items():
        row = b["rows"]["01-control" if label == AA else label]
        epi = row["events_per_iter"]
        t = toggle.estimate(fast[label], epi)
        spent = sum(s["wall_s"] for s in run["sessions"][label])
        tog = f"{t['per_event_ns']:8.1f} [{t['ci_low']:7.1f}, {t['ci_high']:7.1f}]"
        kept = f"{t['sessions']}/{len(ps)}"
        off = np.median(np.concatenate([p[:, 1] for p in ps]))
        if label == AA:
            print(f"{'A/A':<21}{'':>47}   {tog:<26}{kept:>9}{off:>5.0f}")
            continue
        lo, hi = row["per_event_ns_ci_low"], row["per_event_ns_ci_high"]
        agree = max(lo, t["ci_low"]) <= min(hi, t["ci_high"])
        ratio = ((hi - lo) / (t["ci_high"] - t["ci_low"])) ** 2 * share / spent
        print(f"{label:<21}{row['per_event_ns']:>9.1f} [{lo:7.1f}, {hi:7.1f}]"
              f"{row['untraced_ns_per_iter']:>9.0f}{row.get('per_event_ns_all_windows', nan):>9.1f}"
              f"   {tog:<26}{kept:>9}{off:>5.0f}"
              f"{'yes' if agree else 'NO':>6}{ratio:>10.1f}x")
    print(f"# the run's fast off slices: within 5 % of {np.percentile(off_all, 10):.0f} ns per "
          "iteration (the 10th percentile of every session's)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiments", default="4,9,13")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--keep", type=Path, help="keep the run here (a new folder)")
    ap.add_argument("--replay", type=Path, help="report a kept run; nothing is run")
    ap.add_argument("--fork", action="store_true",
                    help="each pair in a child forked for it (toggle-meter -F): every on slice "
                         "is its process's first session, as a bracket's new meter's is")
    args = ap.parse_args()
    if args.replay:
        return report(args.replay)
    if os.geteuid() != 0 or not shutil.which("bpftrace"):
        sys.exit("sessions: needs root and bpftrace")
    keep = record(args)
    report(keep)
    if not args.keep:
        shutil.rmtree(keep.parent)


if __name__ == "__main__":
    main()
