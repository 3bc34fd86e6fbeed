"""``analysis.report`` opens a campaign once: it opens it, verifies every raw file against
the manifest, and hands that same campaign to the benchmark that made it, which builds its
report from it without opening or verifying it again."""

from __future__ import annotations

import shutil

import pytest

import analysis
from analysis.campaign import Campaign, open_for_report, reporting
from analysis.errors import IntegrityError

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

#: a recorded campaign of each benchmark that has one: (folder under tests/fixtures, name)
RECORDED = [("ab/data/raw", "ab-fixture"), ("cyclictest/data/raw", "ct-fixture"),
            ("dd-campaign-v1/raw", "dd-fixture"), ("kbuild/data/raw", "kb-fixture"),
            ("looper/data/raw", "t1"), ("rate-bracket/data/raw", "rate-bracket")]


@pytest.mark.parametrize("folder,name", RECORDED, ids=[n for _, n in RECORDED])
def test_a_report_opens_and_verifies_its_campaign_once(fixtures, tmp_path, monkeypatch,
                                                       folder, name):
    shutil.copytree(fixtures / folder / name, tmp_path / "raw" / name)
    counted = {"open": 0, "verify": 0}
    real_init, real_verify = Campaign.__init__, Campaign.verify

    def init(self, *args, **kwargs):
        counted["open"] += 1
        real_init(self, *args, **kwargs)

    def verify(self, *args, **kwargs):
        counted["verify"] += 1
        return real_verify(self, *args, **kwargs)

    monkeypatch.setattr(Campaign, "__init__", init)
    monkeypatch.setattr(Campaign, "verify", verify)
    rep = analysis.report(name, data_dir=tmp_path, figures_dir=tmp_path / "fig", write=False)
    assert rep.campaign.name == name and rep.outputs
    assert counted == {"open": 1, "verify": 1}


def test_a_campaign_is_taken_as_it_is_only_inside_the_report_that_verified_it(fixtures,
                                                                             tmp_path):
    """Outside a report, a campaign object is opened and verified again at every call (its
    files may have changed since); inside, the one the report verified is handed on, for the
    same runs left out only."""
    shutil.copytree(fixtures / "looper/data/raw/t1", tmp_path / "raw" / "t1")
    camp = open_for_report("t1", tmp_path)
    assert open_for_report(camp) is not camp
    with reporting(camp):
        assert open_for_report(camp) is camp
        assert open_for_report(camp, skip=["r000"]) is not camp
        assert open_for_report("t1", tmp_path) is not camp  # by name: opened anew
    assert open_for_report(camp) is not camp


def test_a_file_changed_after_a_report_is_refused_by_the_next(fixtures, tmp_path):
    """A report's campaign, reported again after a raw file changed, is verified again:
    the change is refused, naming the file."""
    shutil.copytree(fixtures / "looper/data/raw/t1", tmp_path / "raw" / "t1")
    rep = analysis.report("t1", data_dir=tmp_path, write=False)
    raw = next(p for p in sorted((tmp_path / "raw" / "t1").rglob("*"))
               if p.is_file() and p.name != "manifest.json" and p.stat().st_size)
    data = bytearray(raw.read_bytes())
    data[0] ^= 1
    raw.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match=raw.name):
        analysis.report(rep.campaign, write=False)
