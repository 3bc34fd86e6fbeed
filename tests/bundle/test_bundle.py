"""`tracelab bundle` / `verify-bundle` (issue 25): a real campaign (dd, bpftrace + hyperfine,
recorded here) bundled as an RO-Crate, read back by the `rocrate` library, checked against
the zip both ways, rebuilt byte for byte in an empty folder; tampered bundles refused naming
the file; no key material, IdentityFile path or host name inside. Heavy tests record a
campaign: run this file under `flock /tmp/tracelab-heavy.lock`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

import analysis
from analysis.__main__ import main
from analysis.bundle.files import Redactor, encoding_format, secret_problem
from analysis.errors import BundleError
from conftest import ROOT, cli_in_process, need_tool

try:
    import tomllib
except ModuleNotFoundError:
    import tomli as tomllib

HOST = "lab-host-7.example.org"
ADDRESS = "198.51.100.23"
TARGET = f"zqtester@{HOST}:2222"
KEY = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH " \
      + "PRIVATE KEY-----\n"


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}


def _rewrite(src: Path, dst: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return dst


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A real dd campaign (2 runs x 2 rounds, tracepoint vs control) and its bundle."""
    need_tool("bpftrace")
    need_tool("hyperfine")
    if os.geteuid() != 0:
        pytest.skip("bpftrace needs root")
    base = tmp_path_factory.mktemp("bundle")
    analysis.run_benchmark("dd", "local", experiments=[4], count=5000, runs=2, warmup=0,
                           rounds=2, bpf_stats="off", precision=None, budget=None,
                           method="hyperfine",
                           data_dir=base / "data", campaign="b",
                           progress=False)
    start = time.perf_counter()
    result = analysis.make_bundle(["b"], base / "out" / "b.zip", data_dir=base / "data",
                             notebooks_dir=base / "no-notebooks")
    result.seconds = time.perf_counter() - start
    print(f"\nbundle: {result}")
    return base, result


def test_crate_reads_back_with_rocrate_and_describes_every_file(recorded):
    from rocrate.rocrate import ROCrate

    base, result = recorded
    zip_path = result.path
    members = _members(zip_path)
    crate = ROCrate(str(zip_path))
    entities = {e.id: e.properties() for e in crate.data_entities}
    in_zip = set(members) - {"ro-crate-metadata.json"}
    assert set(entities) == in_zip  # both directions
    for name, props in entities.items():
        assert props["@type"] == "File", name
        assert props["sha256"] == _sha(members[name]), name
        assert props["contentSize"] == str(len(members[name])), name
        assert props["encodingFormat"], name
    assert entities["figures/dd-b-runs.pdf"]["encodingFormat"] == "application/pdf"
    assert entities["data/raw/b/manifest.json"]["encodingFormat"] == "application/json"
    root = crate.root_dataset.properties()
    assert {"@id": "https://w3id.org/ro/wfrun/process/0.5"} in root["conformsTo"]
    assert root["license"] == {"@id": "https://spdx.org/licenses/BSD-2-Clause"}
    meta = json.loads(members["ro-crate-metadata.json"])
    graph = {e["@id"]: e for e in meta["@graph"]}
    assert graph["ro-crate-metadata.json"]["conformsTo"] == {"@id": "https://w3id.org/ro/crate/1.1"}
    report = graph["#report-b"]
    assert report["@type"] == "CreateAction" and report["instrument"] == {"@id": "#tracelab"}
    results = {r["@id"] for r in report["result"]}
    assert results == {n for n in in_zip if n.startswith(("figures/", "data/processed/"))}
    assert {o["@id"] for o in report["object"]} >= {n for n in in_zip
                                                    if n.startswith("data/raw/b/")}
    tool = graph["#tracelab"]
    # the commit where git can say it (a fresh machine may have no git: the version then)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip() if shutil.which("git") else ""
    assert tool["softwareVersion"] == (commit or analysis.__version__)
    assert tool["version"] == analysis.__version__
    measure = graph["#measure-b"]
    assert any(graph[i["@id"]]["name"] == "bpftrace" for i in measure["instrument"][1:])
    # the raw files are the campaign's, byte for byte where nothing was redacted
    raw = base / "data" / "raw" / "b"
    for name, data in members.items():
        if name.startswith("data/raw/b/local/"):
            assert data == (raw / name.removeprefix("data/raw/b/")).read_bytes(), name
    assert "source/src/analysis/bundle/build.py" in members
    assert members["LICENSE"] == (ROOT / "LICENSE").read_bytes()
    lock = members["environment/requirements-lock.txt"].decode()
    assert f"rocrate=={version('rocrate')}" in lock
    facts = json.loads(members["bundle.json"])
    assert (facts["source"]["commit"] or "") == commit  # None: no git to say it
    assert facts["source"]["dirty"] in (True, False, None)
    cff = yaml.safe_load(members["CITATION.cff"])
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "BSD-2-Clause"
    assert json.loads(members[".zenodo.json"])["license"] == "BSD-2-Clause"
    readme = members["README.md"].decode()
    assert "python -m analysis verify-bundle" in readme
    assert "figures/dd-b-per-event-cost.pdf" in readme and "  - CPU: " in readme


def test_verify_bundle_in_an_empty_folder_rebuilds_everything_identically(recorded, tmp_path,
                                                                          capsys):
    _, result = recorded
    work = tmp_path / "empty"
    code = main(["verify-bundle", str(result.path), "--workdir", str(work)])
    out = capsys.readouterr().out
    print(out)
    assert code == 0, out
    members = _members(result.path)
    outputs = {n for n in members if n.startswith(("figures/", "data/processed/"))}
    assert len(outputs) >= 12 and any(n.endswith(".pdf") for n in outputs)
    for name in outputs:
        assert re.search(rf"^identical\s+{re.escape(name)}$", out, re.M), name
        rebuilt = (work / "rebuild" / name).read_bytes()  # compared here independently too
        assert rebuilt == members[name], name
    assert re.search(rf"{len(outputs)}/{len(outputs)} outputs identical byte for byte; OK", out)


def test_bundled_figures_are_those_the_package_exports(recorded, tmp_path):
    """Without redaction the bundle's figures are byte for byte what `python -m analysis
    report` writes for the campaign in a project folder (independent of the bundle code;
    the command in this process, conftest.cli_in_process)."""
    base, _ = recorded
    project = tmp_path / "project"
    shutil.copytree(base / "data" / "raw", project / "data" / "raw",
                    ignore=shutil.ignore_patterns(".lock", ".scratch"))
    shutil.copytree(ROOT / "data" / "reference", project / "data" / "reference")
    done = cli_in_process("report", "b", cwd=project, env={"TRACELAB_ROOT": str(project)})
    assert done.returncode == 0, done.stderr
    out = analysis.make_bundle("b", tmp_path / "plain.zip", data_dir=base / "data",
                          redact_hosts=False, notebooks_dir=tmp_path / "none")
    members = _members(out.path)
    figures = sorted((project / "figures").iterdir())
    assert figures
    for f in figures:
        assert members[f"figures/{f.name}"] == f.read_bytes(), f.name
    assert members["data/raw/b/manifest.json"] == (base / "data/raw/b/manifest.json").read_bytes()


@pytest.mark.parametrize("damage", ["flipped byte", "missing file", "extra file",
                                    "flipped byte, crate updated"])
def test_a_damaged_bundle_is_refused_naming_the_file(recorded, tmp_path, capsys, damage):
    _, result = recorded
    members = _members(result.path)
    raw = sorted(n for n in members if n.endswith("/hyperfine.json"))[0]
    if damage == "flipped byte":
        named = raw
        data = bytearray(members[raw])
        data[len(data) // 2] ^= 0x01
        members[raw] = bytes(data)
    elif damage == "missing file":
        named = "figures/dd-b-runs.pdf"
        del members[named]
    elif damage == "extra file":
        named = "data/raw/b/local/notes.txt"
        members[named] = b"a file nobody described\n"
    else:  # the crate agrees with the changed file: the campaign's manifest does not
        named = raw
        data = bytearray(members[raw])
        data[len(data) // 2] ^= 0x01
        meta = json.loads(members["ro-crate-metadata.json"])
        for e in meta["@graph"]:
            if e["@id"] == raw:
                e["sha256"] = _sha(bytes(data))
        members[raw] = bytes(data)
        members["ro-crate-metadata.json"] = json.dumps(meta).encode()
    bad = _rewrite(result.path, tmp_path / "bad.zip", members)
    code = main(["verify-bundle", str(bad), "--workdir", str(tmp_path / "work")])
    out = capsys.readouterr().out
    assert code == 1
    problems = [line for line in out.splitlines() if line.startswith("problem: ")]
    assert problems and all(named in p for p in problems), out
    assert "FAILED" in out and not (tmp_path / "work" / "rebuild").exists()  # refused first


def test_a_campaign_that_disagrees_with_its_manifest_is_not_bundled(recorded, tmp_path):
    base, _ = recorded
    data = tmp_path / "data"
    shutil.copytree(base / "data" / "raw", data / "raw")
    victim = sorted((data / "raw" / "b" / "local").glob("*/hyperfine.json"))[0]
    victim.write_bytes(victim.read_bytes().replace(b"{", b"{ ", 1))
    out = tmp_path / "x.zip"
    with pytest.raises(BundleError, match=re.escape(str(victim))):
        analysis.make_bundle("b", out, data_dir=data)
    assert not out.exists() and not list(tmp_path.glob(".x.zip.*"))


def _hostile_copy(base: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The recorded campaign as if run on TARGET: its folder and manifest keys renamed, host
    names and an IdentityFile line in raw files (manifest checksums recomputed here), a key
    in the campaign's working folder, and an executed notebook with all of them."""
    data = tmp_path / "data"
    shutil.copytree(base / "data" / "raw" / "b", data / "raw" / "h")
    camp = data / "raw" / "h"
    slug = f"zqtester@{HOST}_2222"
    (camp / "local").rename(camp / slug)
    manifest = json.loads((camp / "manifest.json").read_text())
    manifest["campaign"] = "h"
    manifest["runs"] = {TARGET: manifest["runs"]["local"]}
    info = manifest["targets"].pop("local")
    info["preflight"]["target"] = TARGET
    info["preflight"]["details"]["hostname"] = HOST
    info["preflight"]["details"]["address"] = f"connected to {ADDRESS} as {TARGET}"
    manifest["targets"][TARGET] = info
    for run_id, entry in manifest["runs"][TARGET].items():
        err = camp / slug / run_id / "tracer.stderr"
        err.write_text(err.read_text() + f"ssh {TARGET} ({ADDRESS}): ok\n"
                       "Host lab\n    IdentityFile /root/.ssh/id_lab\n")
        entry["files"]["tracer.stderr"] = _sha(err.read_bytes())
    (camp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    (camp / ".scratch" / "id_ed25519").write_text(KEY)
    nbs = tmp_path / "executed"
    nbs.mkdir()
    cell = {"cell_type": "code", "source": f'target = "{TARGET}"\ncampaign = "h"\n',
            "outputs": [{"output_type": "stream", "text": f"{HOST} {ADDRESS}\n"
                         "  IdentityFile ~/.ssh/lab_key\n"}], "metadata": {}}
    (nbs / "1.0-dd-per-event-cost.ipynb").write_text(json.dumps({"cells": [cell]}, indent=1))
    (nbs / "2.0-other.ipynb").write_text(json.dumps({"cells": [], "campaign": "other"}))
    (nbs / "9.9-with-key.ipynb").write_text(json.dumps({"campaign": "h", "key": KEY}))
    return data, nbs


def _leaks(members: dict[str, bytes]) -> list[str]:
    found = []
    for name, data in members.items():
        text = data.decode("utf-8", "replace")
        if "PRIVATE KEY" in text:
            found.append(f"{name}: PRIVATE KEY")
        for m in re.finditer(r"(?im)^\s*IdentityFile\s*=?\s*(\S+)", text):
            if not m.group(1).startswith(("<redacted>", "{")):  # a key path, not a template
                found.append(f"{name}: IdentityFile {m.group(1)}")
        for secret in (HOST, ADDRESS, "zqtester@"):
            if secret in text or secret in name:
                found.append(f"{name}: {secret}")
    return found


def test_no_key_no_identity_file_no_host_name_inside(recorded, tmp_path):
    base, _ = recorded
    data, nbs = _hostile_copy(base, tmp_path)
    result = analysis.make_bundle("h", tmp_path / "h.zip", data_dir=data, notebooks_dir=nbs)
    members = _members(result.path)
    assert _leaks(members) == []
    assert "notebooks-executed/1.0-dd-per-event-cost.ipynb" in members
    assert "notebooks-executed/2.0-other.ipynb" not in members  # another campaign's
    assert "notebooks-executed/9.9-with-key.ipynb" not in members
    manifest = json.loads(members["data/raw/h/manifest.json"])
    assert list(manifest["runs"]) == ["target-1"]
    assert manifest["targets"]["target-1"]["preflight"]["details"]["hostname"] == "host-1"
    assert any(n.startswith("data/raw/h/target-1/") for n in members)
    readme = members["README.md"].decode()
    assert "`target-1`: a target name" in readme and "`host-1`: a host name" in readme
    assert "data/raw/h/.scratch/" in readme and "9.9-with-key.ipynb" in readme
    # the redacted copy is still a campaign whose files match its manifest, and rebuilds
    check = analysis.verify_bundle(result.path, tmp_path / "verify")
    assert check.ok, str(check)
    # the check above can fail: without redaction the names are there
    plain = analysis.make_bundle("h", tmp_path / "plain.zip", data_dir=data, notebooks_dir=nbs,
                            redact_hosts=False)
    leaks = _leaks(_members(plain.path))
    assert any(HOST in x for x in leaks) and any(ADDRESS in x for x in leaks)
    assert not any("PRIVATE KEY" in x or "IdentityFile" in x for x in leaks)


# --------------------------------------------------------------------------- #
# pure Python (no tracer)

def test_redactor_replaces_whole_names_only():
    red = Redactor()
    red.add_target("bob@vm:2222")
    red.add("lab.example.org", "host")
    text = ("bob@vm:2222 vm. vm.swappiness kvm vm-standard lab.example.org lab.example.orgs "
            "folder bob@vm_2222/x 10.0.0.5 127.0.0.1 v1.2.3.4.5 1.2.3\n"
            "  IdentityFile ~/.ssh/k\nIdentityFile {key}\n")
    new, n = red.text(text)
    assert new == ("target-1 host-1. vm.swappiness kvm vm-standard host-2 lab.example.orgs "
                   "folder target-1/x address-1 127.0.0.1 v1.2.3.4.5 1.2.3\n"
                   "  IdentityFile <redacted>\nIdentityFile {key}\n")
    assert n == 6
    assert red.text(new)[0] == new  # idempotent
    with pytest.raises(BundleError, match="blob.bin"):
        red.data("blob.bin", b"\xff\xfe host 10.0.0.5 \x00")


def test_secret_files_and_formats():
    assert secret_problem("x/id_ed25519", b"") and secret_problem("x/known_hosts", b"")
    assert secret_problem("notes.txt", KEY.encode())
    assert secret_problem("notes.txt", b"IdentityFile is a keyword") is None
    assert encoding_format("a/meta") == "text/plain"
    assert encoding_format("f.parquet") == "application/vnd.apache.parquet"
    assert encoding_format("n.ipynb") == "application/x-ipynb+json"


def test_cli_bundle_names_an_unknown_campaign(tmp_path, capsys):
    (tmp_path / "raw").mkdir()
    code = main(["bundle", "nothere", "--out", str(tmp_path / "x.zip"), "--data-dir",
                 str(tmp_path)])
    assert code == 2 and "nothere" in capsys.readouterr().err
    assert not (tmp_path / "x.zip").exists()


def test_cli_verify_bundle_refuses_a_non_zip(tmp_path, capsys):
    bad = tmp_path / "b.zip"
    bad.write_bytes(b"not a zip")
    assert main(["verify-bundle", str(bad), "--workdir", str(tmp_path / "w")]) == 1
    assert "b.zip: not a zip file" in capsys.readouterr().out


def test_rocrate_is_a_dependency_in_pyproject_and_environment_yml():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    ours = [d for d in deps if re.match(r"rocrate\b", d)]
    theirs = [d for d in env if isinstance(d, str) and re.match(r"rocrate\b", d)]
    assert ours == ["rocrate>=0.16"] and theirs == ["rocrate>=0.16"]
