"""Make a record kept with the docs (docs/_data/records/NAME.json) from real data.

A record holds the values the pages quote, the host they were measured on and where they
came from; pages insert them with the ``{measured}`` role (docs/_ext/measured.py). Records
are generated, never typed:

    .venv/bin/python docs/_ext/record.py campaign CAMPAIGN NAME [--data-dir DIR]
    .venv/bin/python docs/_ext/record.py campaign-archive ARCHIVE.tar.xz NAME
    .venv/bin/python docs/_ext/record.py suite JUNIT.xml NAME

``campaign`` opens a finished campaign through the package (checksums verified), reports
it without writing anything and keeps, per experiment, the cost with its 95 % CI and the
precision reached (the anatomy benchmark: per part, its cost and CI; per trig-* of the
kernel's bench the same; per bpf_stats reading, ``EXP bpf_stats``, its program time;
the audit: per program, keyed ``OWNER ATTACH``, its price per event, its share of one
CPU and bpf_stats' alone, its runs per second; the probe-rate benchmark: ``rate``, its
events per second), plus the control's speed per iteration, the A/A noise floor, rounds,
the wall time (the manifest's created to updated), the host's fingerprint (from the
manifest's preflight) and the manifest's sha256. ``campaign-archive`` does the same from a
tarball of a campaign folder (as docs/_data/campaigns/ keeps them). ``suite`` reads a
pytest JUnit XML file (``pytest --junitxml=FILE``) and fingerprints this machine: run it
on the host that ran the tests, right after.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import statistics
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
RECORDS = DOCS / "_data" / "records"
SCHEMA = 1


def _num(x, digits: int = 1):
    """A float rounded for the record (None for NaN), so records are small and stable."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else round(x, digits)


def host_of(preflight: dict) -> dict:
    """The fingerprint the reference-machines page shows, from a preflight record."""
    d = preflight.get("details", {})
    caps = preflight.get("capabilities", {})
    mitig = d.get("kconfig.debug", "")
    return {
        "cpu": preflight.get("cpu_model") or d.get("cpu_model"),
        "vendor": d.get("cpu.vendor"),
        "family": d.get("cpu.family"),
        "model": d.get("cpu.model"),
        "cpus": int(preflight.get("cpus") or d.get("cpus") or 0),
        "mhz": d.get("cpu.tsc_khz") and int(d["cpu.tsc_khz"]) // 1000,
        "kernel": preflight.get("kernel") or d.get("kernel"),
        "distro": d.get("distro"),
        "virtualization": preflight.get("virtualization"),
        "retpoline": "CONFIG_MITIGATION_RETPOLINE" in mitig,
        "kprobes": caps.get("kprobes"),
        "uprobes": caps.get("uprobes"),
        "flags_sha256": d.get("cpu.flags_sha256"),
    }


def _minutes(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() / 60


def from_campaign(campaign: str, name: str, data_dir: str | Path | None = None) -> dict:
    """The record of one finished campaign (read through the package, nothing written)."""
    import analysis
    from analysis.campaign import open_for_report

    camp = open_for_report(campaign, data_dir=data_dir)  # checksums verified
    manifest = camp.manifest_path.read_bytes()
    m = json.loads(manifest)
    target = camp.first_target()
    rep = analysis.report(campaign, write=False, data_dir=data_dir)
    v = rep.values
    table = v.get("rate_table") if v.get("method") == "rate" else v.get("table")
    experiments = {}
    # the control's speed as the report's table captions give it (rate method)
    control_ns = _num(v["control_ns_per_iter"]) if "control_ns_per_iter" in v else None
    parts = v.get("parts")  # the anatomy benchmark: its parts, keyed as experiments are
    rows = [] if table is None else table.to_dict("records")
    if parts is not None:
        for row in parts.to_dict("records"):
            experiments[row["part"]] = {
                "cost_ns": _num(row["ns"]), "ci_ns": [_num(row["ci_low"]), _num(row["ci_high"])],
                "precision": None, "rounds": int(row["rounds"])}
    bench, stats = v.get("kernel_bench"), v.get("bpf_stats")  # anatomy: the kernel's bench
    for row in ([] if bench is None else bench.to_dict("records")):
        experiments[row["bench"]] = {
            "cost_ns": _num(row["ns"]), "ci_ns": [_num(row["ci_low"]), _num(row["ci_high"])],
            "precision": None, "rounds": int(row["rounds"])}
    for row in ([] if stats is None else stats.to_dict("records")):  # one reading, no CI
        experiments[f"{row['experiment']} bpf_stats"] = {
            "cost_ns": _num(row["program_ns"]),
            "ci_ns": [_num(row.get("program_ci_low")), _num(row.get("program_ci_high"))],
            "precision": None, "rounds": int(row.get("readings") or 1)}
    for row in ([] if v.get("programs") is None else v["programs"].to_dict("records")):
        # the audit: per program, keyed by its owner's name and where it is attached
        key = f"{row['owners'].split(',')[0].split('/', 1)[-1]} {row['attach']}"
        while key in experiments:
            key += "+"
        experiments[key] = {
            "cost_ns": _num(row["per_event_ns"]),
            "ci_ns": [_num(row["per_event_ns_ci_low"]), _num(row["per_event_ns_ci_high"])],
            "precision": None, "rounds": None,
            "share_pct": [_num(row["cpu_pct"], 3), _num(row["cpu_pct_ci_low"], 3),
                          _num(row["cpu_pct_ci_high"], 3)],
            "stats_share_pct": _num(row["bpf_stats_cpu_pct"], 3),
            "rate_per_s": [_num(row["runs_per_s"]), _num(row["runs_per_s_ci_low"]),
                           _num(row["runs_per_s_ci_high"])],
            "run_ns": _num(row["run_ns"])}
    if m.get("benchmark") == "probe-rate":  # a counted rate: no experiments of its own
        row, rows = rows[0], []
        experiments["rate"] = {"cost_ns": None, "ci_ns": [None, None], "precision": None,
                               "rounds": None,
                               "rate_per_s": [_num(row["events_per_s"]),
                                              _num(row["events_per_s_ci_low"]),
                                              _num(row["events_per_s_ci_high"])]}
    for row in rows:
        exp = row["experiment"]
        if exp.endswith("control") and "control_ns_per_iter" not in v:
            control_ns = _num(row.get("untraced_ns_per_iter"))
        experiments[exp] = {
            "cost_ns": _num(row.get("per_event_ns")),
            "ci_ns": [_num(row.get("per_event_ns_ci_low")), _num(row.get("per_event_ns_ci_high"))],
            "precision": _num(row.get("precision_reached"), 3),
            "rounds": row.get("rounds") and int(row["rounds"]),
        }
    record = {"schema": SCHEMA, "name": name, "kind": "campaign", "campaign": campaign,
              "benchmark": m.get("benchmark"), "method": v.get("method"),
              "date": m["created"][:10], "host": host_of(camp.preflight_of(target)),
              "wall_min": round(_minutes(m["created"], m["updated"]), 1),
              "control_ns_per_iter": control_ns, "experiments": experiments}
    aa = v.get("aa")
    if aa is not None and len(aa):  # the A/A slot: its estimate, and its half-width (the floor)
        row = aa.iloc[0]
        record["aa_ns"] = _num(row["per_event_ns"])
        record["aa_ci_ns"] = [_num(row["per_event_ns_ci_low"]), _num(row["per_event_ns_ci_high"])]
        record["noise_floor_ns"] = _num(v.get("noise_floor_ns_per_iter",
                                              (row["per_event_ns_ci_high"]
                                               - row["per_event_ns_ci_low"]) / 2))
    state = (m.get("adaptive") or {}).get("rate_state") or {}
    if state:
        record["adaptive"] = {k: state.get(k) for k in
                              ("rounds_done", "met", "experiments", "stop", "target",
                               "budget_s")}
        record["adaptive"]["spent_min"] = round(state.get("spent_s", 0) / 60, 1)
    prediction = (m.get("adaptive") or {}).get("rate_prediction") or {}
    for key, made in prediction.items():  # what it predicted, before round 1 and after 2
        if made.get("error"):
            continue
        record.setdefault("prediction", {})[key] = {
            "when": made["when"], "median": _num(made.get("median_at_end"), 3),
            "met": made.get("met_at_end"), "experiments": made.get("experiments"),
            "budget_min": round((made.get("effective_budget_s") or 0) / 60, 2),
            # simulated campaigns: when the last experiment is within the target (and
            # its 10th-90th percentiles); before them, the slowest experiment's expected
            # (None: simulated campaigns that did not all get there within the rule's
            # rounds)
            "needs_min": None if made.get("draws") and made.get("all_met_s") is None else
            _num((made["all_met_s"] if made.get("all_met_s") is not None else
                  max((v for v in (made.get("needs_s") or {}).values()
                       if v is not None), default=0)) / 60, 2),
            "needs_range_min": [_num(v / 60, 2) if v is not None else None
                                for v in made.get("all_met_range_s") or ()],
            "block_cv": _num(made.get("block_cv"), 3),
            "sigma_ref_ns": _num(made.get("sigma_ref_ns")),
            "tau_ns": _num(made.get("tau_ns")), "rho": _num(made.get("rho"), 3)}
    if prediction:
        reached = [e["precision"] for x, e in experiments.items()
                   if not x.endswith("control") and e["precision"] is not None
                   and math.isfinite(e["precision"])]
        record["reached"] = {"median": _num(statistics.median(reached), 3) if reached else None,
                             "met": sum(v <= (state.get("target") or 0) for v in reached)}
    record["manifest_sha256"] = hashlib.sha256(manifest).hexdigest()
    return record


def _extract(tar: tarfile.TarFile, folder: Path, archive: Path) -> None:
    """Every member into ``folder``: tarfile's "data" filter where this Python has it
    (3.11.4 on; Debian 12's is 3.11.2), else the same refusals by hand: no member outside
    ``folder``, no link, no device."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(folder, filter="data")
        return
    for m in tar.getmembers():
        inside = (folder / m.name).resolve().is_relative_to(folder.resolve())
        if not inside or m.issym() or m.islnk() or m.isdev():
            raise ValueError(f"{archive}: member {m.name!r} is not a plain file in the folder")
    tar.extractall(folder)


def from_archive(archive: str | Path, name: str) -> dict:
    """The record of a campaign kept as a tarball of its folder (unpacked in a temp dir)."""
    archive = Path(archive)
    campaign = archive.name.split(".tar")[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "raw" / campaign
        folder.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            _extract(tar, folder, archive)
        record = from_campaign(campaign, name, data_dir=tmp)
    record["raw"] = archive.resolve().relative_to(DOCS.parent).as_posix() \
        if archive.resolve().is_relative_to(DOCS.parent) else archive.name
    return record


def this_host() -> dict:
    """This machine's fingerprint, read the way the package's preflight reads it."""
    import analysis

    return host_of(analysis.preflight("local").as_dict())


def from_junit(path: str | Path, name: str, host: dict | None = None) -> dict:
    """The record of a test-suite run from pytest's JUnit XML file."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    tests, skipped = int(suite.get("tests")), int(suite.get("skipped", 0))
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return {"schema": SCHEMA, "name": name, "kind": "suite",
            "date": suite.get("timestamp", "")[:10],
            "host": host if host is not None else this_host(),
            "hostname": suite.get("hostname") or platform.node(),
            "passed": tests - skipped - failed, "skipped": skipped, "failed": failed,
            "wall_min": round(float(suite.get("time")) / 60, 1),
            "junit_sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest()}


def dumps(record: dict) -> str:
    return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write(record: dict, out: Path | None = None) -> Path:
    out = out or RECORDS / f"{record['name']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dumps(record))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="kind", required=True)
    c = sub.add_parser("campaign", help="a finished campaign in data/raw (or --data-dir)")
    c.add_argument("campaign")
    c.add_argument("name")
    c.add_argument("--data-dir")
    a = sub.add_parser("campaign-archive", help="a tarball of a campaign folder")
    a.add_argument("archive")
    a.add_argument("name")
    s = sub.add_parser("suite", help="a pytest JUnit XML file, on the host that ran it")
    s.add_argument("junit")
    s.add_argument("name")
    args = p.parse_args(argv)
    if args.kind == "campaign":
        record = from_campaign(args.campaign, args.name, args.data_dir)
    elif args.kind == "campaign-archive":
        record = from_archive(args.archive, args.name)
    else:
        record = from_junit(args.junit, args.name)
    print(write(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
