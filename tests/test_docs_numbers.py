"""Measured numbers in the docs come from records kept with them (docs/_data/records/).

The check itself (docs/_ext/handtyped.py) runs in the docs build; these tests run it
without Sphinx, plant a hand-typed measurement in a copy of the docs and build it, rebuild
a record from its raw data, and hold the README's numbers to the records.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

DOCS = ROOT / "docs"
EXT = DOCS / "_ext"
RECORDS = DOCS / "_data" / "records"
sys.path.insert(0, str(EXT))
import handtyped  # noqa: E402
import record  # noqa: E402

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_the_check_finds_measurements_and_exempts_what_it_says():
    page = (
        "A tracepoint cost 212 ns here, a uprobe 4.6 us, the run took 25 min.\n"
        "It was 13 % slower, between 4.6 and 9.7 us.\n"
        "Settings are marked: {setting}`4 min`, and recorded values come from records:\n"
        "{measured}`noisy-host:06-uprobe.cost`; code is exempt: `budget=240 s`.\n"
        "A 95 % CI names a method, 2 CPUs and 18 experiments are no measurement.\n"
        "```sh\nmake demo   # 4 min\n```\n"
        "```{note}\nA note is prose: 5 ms.\n```\n"
        "<!-- 7 ns in a comment -->\n"
    )
    found = handtyped.find(page)
    assert found == [(1, "212 ns"), (1, "4.6 us"), (1, "25 min"), (2, "13 %"),
                     (2, "4.6 and 9.7 us"), (10, "5 ms")]


def test_the_docs_have_no_hand_typed_measurement():
    problems = handtyped.check_tree(DOCS)
    assert not problems, "hand-typed measurements:\n" + "\n".join(problems)


def test_a_planted_measurement_fails_the_docs_build(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("planted")
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("_build"))
    page = docs / "design.md"
    lines = page.read_text().splitlines()
    lines.insert(3, "A probe costs 123 ns on any machine.")
    page.write_text("\n".join(lines) + "\n")
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q",
         str(docs), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=600)
    assert out.returncode != 0
    assert re.search(r"design\.md:4: WARNING: hand-typed measurement '123 ns'", out.stderr), \
        out.stderr[-3000:]
    assert out.stderr.count("hand-typed measurement") == 1, out.stderr[-3000:]


def test_the_noisy_host_record_rebuilds_from_its_raw_data_byte_for_byte():
    committed = (RECORDS / "noisy-host.json").read_text()
    archive = DOCS / "_data" / "campaigns" / "demo-20261129-043609.tar.xz"
    assert archive.stat().st_size < 500_000
    rebuilt = record.dumps(record.from_archive(archive, "noisy-host"))
    assert rebuilt == committed
    rec = json.loads(committed)
    assert rec["host"]["model"] == "207" and rec["date"] == "2026-11-29"
    assert rec["host"]["kprobes"] is False


@pytest.mark.parametrize("name", sorted(
    p.stem for p in RECORDS.glob("*.json") if json.loads(p.read_text())["kind"] == "campaign"))
def test_every_campaign_record_is_kept_with_its_raw_data_and_rebuilds_from_it(name):
    """A record the pages quote is reproducible from raw data with one command: its
    campaign's tarball is kept in docs/_data/campaigns/, and rebuilds it byte for byte."""
    committed = (RECORDS / f"{name}.json").read_text()
    archive = DOCS / "_data" / "campaigns" / f"{json.loads(committed)['campaign']}.tar.xz"
    assert archive.is_file(), f"{name}: its campaign's raw data is not kept ({archive.name})"
    assert archive.stat().st_size < 500_000
    assert record.dumps(record.from_archive(archive, name)) == committed


def test_a_python_without_tarfiles_data_filter_rebuilds_the_same_record(monkeypatch):
    """Debian 12's Python (3.11.2) has no ``filter=`` for extractall: the same refusals
    by hand, the same record."""
    import tarfile

    monkeypatch.delattr(tarfile, "data_filter", raising=False)  # 3.11.2: not there at all
    committed = (RECORDS / "noisy-host.json").read_text()
    archive = DOCS / "_data" / "campaigns" / f"{json.loads(committed)['campaign']}.tar.xz"
    assert record.dumps(record.from_archive(archive, "noisy-host")) == committed


def test_records_are_small_and_named_as_their_files():
    for path in RECORDS.glob("*.json"):
        assert path.stat().st_size < 20_000, path.name
        assert json.loads(path.read_text())["name"] == path.stem


def test_a_suite_record_is_made_from_junit_xml(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("junit")
    xml = tmp_path / "suite.xml"
    xml.write_text('<testsuites><testsuite name="pytest" errors="0" failures="1" '
                   'skipped="2" tests="10" time="90.0" timestamp="2026-12-06T10:00:00" '
                   'hostname="h"/></testsuites>')
    rec = record.from_junit(xml, "x", host={"cpu": "c"})
    assert (rec["passed"], rec["skipped"], rec["failed"], rec["wall_min"], rec["date"]) == \
        (7, 2, 1, 1.5, "2026-12-06")


def test_every_record_a_page_quotes_exists():
    import measured

    names = set(measured.records())
    for page in DOCS.rglob("*.md"):
        for name, key in re.findall(r"(?<!` )\{measured\}`([\w-]+):([\w.-]+)`", page.read_text()):
            assert name in names, f"{page.name} quotes record {name}, which is not made"
            if name in measured.records():
                measured.value(measured.records()[name], key)  # KeyError if the key is wrong


def test_the_readme_quotes_only_recorded_numbers():
    """A measured number in the README carries <!-- measured NAME:KEY --> and equals the record;
    a configured value carries <!-- setting -->."""
    import measured

    lines = (ROOT / "README.md").read_text().splitlines()
    for number, text in handtyped.find("\n".join(lines)):
        after = lines[number - 1].split(text, 1)[-1]
        tag = re.match(r"\**<!-- (setting|measured ([\w-]+):([\w.-]+)) -->", after)
        assert tag, f"README.md:{number}: {text!r} is neither recorded nor a setting"
        if tag.group(2):
            rec = measured.records()[tag.group(2)]
            assert measured.value(rec, tag.group(3)).startswith(text), (number, text)
