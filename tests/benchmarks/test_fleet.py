"""A fleet campaign over a real inventory: two loopback sshd hosts on distinct addresses
of 127.0.0.0/8 (each its own host key and client key) and this machine, read by
ansible-core. They share this machine's kernel, so they run one after the other (checked
from the recorded times); one host dropped mid-campaign is recorded as unreachable while
the others finish, and a resume completes only what it lacks. The report has a row per
host, a figure and the fingerprint; two groups compare with compare's verdicts."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import pytest

from analysis import run_benchmark
from analysis.campaign import Campaign
from analysis.campaign.fleet import Fleet
from analysis.comparison.fleet import compare_groups, fleet_report
from conftest import ROOT, need_sshd, need_tool

pytest.importorskip("ansible", reason="ansible-core is not installed (`make install`)")

TINY = dict(experiments=[4], count="2k", runs=1, warmup=0, rounds=2, precision=None,
            budget=None, method="hyperfine")
#: the order of the inventory: the host that drops is the last of its kernel's turn
ADDRESSES = {"lab2": "127.0.0.2", "lab3": "127.0.0.3"}


def _inventory(path, servers) -> None:
    lines = ["all:", "  children:", "    me:", "      hosts:", "        localhost:",
             "          ansible_connection: local", "    lab:", "      hosts:"]
    for name, s in servers.items():
        lines += [f"        {name}:", f"          ansible_host: {s.address}",
                  f"          ansible_port: {s.port}",
                  f"          ansible_ssh_private_key_file: {s.client_key}",
                  f"          ansible_ssh_common_args: '-o UserKnownHostsFile={s.known_hosts}'"]
    lines += ["      vars:", "        ansible_user: root"]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    from analysis.targets import loopback

    need_sshd()
    need_tool("bpftrace")
    need_tool("hyperfine")
    base = tmp_path_factory.mktemp("fleet")
    servers = {}
    try:
        for name, address in ADDRESSES.items():
            servers[name] = loopback.start(base / name, address=address)
        _inventory(base / "hosts.yml", servers)
        yield base, servers
    finally:
        for s in servers.values():
            s.stop()


def _drop_when_running(fleet_folder, data, server, host) -> threading.Thread:
    """Kill ``host``'s sshd and its sessions once its campaign has finished a run."""
    def watch():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            rec = fleet_folder / "fleet.json"
            if rec.is_file():
                entry = Fleet.open(fleet_folder.name, data_dir=data).hosts.get(host, {})
                if entry.get("status") == "running":
                    try:
                        runs = Campaign.open(entry["campaign"], data_dir=data).run_records(host)
                    except Exception:  # noqa: BLE001 - not created yet
                        runs = {}
                    if any(r.status == "done" for r in runs.values()):
                        server.drop()
                        return
            time.sleep(0.05)
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def _interval(entry) -> tuple[datetime, datetime]:
    return datetime.fromisoformat(entry["started"]), datetime.fromisoformat(entry["ended"])


def test_a_fleet_over_an_inventory_drops_one_host_and_resumes_it(lab, tmp_path):
    base, servers = lab
    data = tmp_path / "data"
    watcher = _drop_when_running(data / "raw" / "f", data, servers["lab3"], "lab3")
    first = run_benchmark("dd", inventory=str(base / "hosts.yml"), campaign="f",
                          data_dir=data, progress=False, **TINY)
    watcher.join(timeout=5)
    status = {h: e["status"] for h, e in first.hosts.items()}
    assert status == {"localhost": "complete", "lab2": "complete", "lab3": "unreachable"}, first
    # one kernel: never two of its hosts at once (the fleet's record, to the microsecond,
    # and every run's own times, to the second)
    hosts = first.hosts
    assert len({e["boot_id"] for e in hosts.values()}) == 1
    spans = sorted(_interval(e) for e in hosts.values())
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:])), spans
    runs = {h: Campaign.open(e["campaign"], data_dir=data).all_run_records() for h, e in
            hosts.items()}
    times = {h: [(r["started"], r["finished"]) for recs in rr.values() for r in recs.values()
                 if r.get("finished")] for h, rr in runs.items()}
    order = sorted(times, key=lambda h: min(s for s, _ in times[h]))
    for a, b in zip(order, order[1:]):
        assert max(f for _, f in times[a]) <= min(s for s, _ in times[b]), (a, b)
    done_before = sorted(r for r, e in runs["lab3"]["lab3"].items() if e["status"] == "done")
    assert done_before  # it dropped mid-campaign, not before

    servers["lab3"].restart()
    again = run_benchmark("dd", inventory=str(base / "hosts.yml"), campaign="f",
                          data_dir=data, progress=False, **TINY)
    assert again.complete, again
    assert set(again.results) == {"lab3"}  # the complete hosts are kept, not run again
    lab3 = again.results["lab3"]
    assert sorted(lab3.skipped["lab3"]) == done_before and lab3.done["lab3"]

    # a byte changed in a complete host's finished run: that host resumes, the run is
    # quarantined and measured again, the others are kept
    here = Campaign.open(again.hosts["localhost"]["campaign"], data_dir=data)
    run_id, record = next((r, e) for r, e in sorted(here.run_records("local").items())
                          if e.status == "done")
    victim = here.run_dir("local", run_id) / sorted(record["files"])[0]
    victim.write_bytes(b"X" + victim.read_bytes()[1:])
    third = run_benchmark("dd", inventory=str(base / "hosts.yml"), campaign="f",
                          data_dir=data, progress=False, **TINY)
    assert third.complete and set(third.results) == {"localhost"}
    assert third.results["localhost"].done["local"] == [run_id]

    rep = fleet_report("f", data_dir=data, figures_dir=tmp_path / "fig")
    table = rep.values["hosts"]
    assert sorted(table["host"]) == ["lab2", "lab3", "localhost"]
    assert set(table["group"]) == {"lab", "me"}
    assert (table["per_event_ns_ci_low"] <= table["per_event_ns"]).all()
    assert (table["per_event_ns"] <= table["per_event_ns_ci_high"]).all()
    names = {p.name for p in rep.written}
    assert {"f-hosts.png", "f-hosts.pdf", "f-hosts.md", "hosts.csv", "fingerprint.csv"} <= names
    assert "kernel boot (boot_id)" in set(rep.values["fingerprint"]["what"])
    pairs = compare_groups("f", "me", "lab", data_dir=data)
    assert sorted(set(pairs["host_b"])) == ["lab2", "lab3"]
    assert pairs["verdict"].notna().all()
    _notebook_reports_it(data, tmp_path)


def _notebook_reports_it(data, tmp_path) -> None:
    """Notebook 6.1 under papermill, reporting the recorded fleet (nothing runs again)."""
    import json

    import papermill

    out = tmp_path / "executed.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "6.1-lab-of-machines.ipynb"), str(out),
        parameters={"inventory": None, "campaign": "f", "data_dir": str(data),
                    "figures_dir": str(tmp_path / "nb"),
                    "group_a": "me", "group_b": "lab"},
        kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    text = json.dumps(json.loads(out.read_text()))
    assert "fleet f (dd): 3 of 3 hosts reported" in text and "image/png" in text
    assert "host_b" in text and (tmp_path / "nb" / "f-hosts.png").is_file()
