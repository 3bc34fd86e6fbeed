"""``analysis.report`` opens a campaign once: it opens it, verifies every raw file against
the manifest, and hands that same campaign to the benchmark that made it, which builds its
report from it without opening or verifying it again."""

from __future__ import annotations

import shutil

import pytest

import analysis
from analysis.campaign import Campaign, open_for_report

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


def test_a_campaign_given_open_is_read_again_from_its_folder(fixtures, tmp_path):
    """Only a campaign this process opened read-only and verified is taken as it is; one
    given otherwise (e.g. a campaign object still being written) is opened and verified."""
    shutil.copytree(fixtures / "looper/data/raw/t1", tmp_path / "raw" / "t1")
    camp = Campaign.open("t1", data_dir=tmp_path)
    assert camp.verified is None
    again = open_for_report(camp)
    assert again is not camp and again.verified == ()
    assert open_for_report(again) is again
    assert open_for_report(again, skip=["r000"]) is not again
