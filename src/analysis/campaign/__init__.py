"""Campaigns: the store (:mod:`.store`: the manifest, checksums, the campaign's lock
(:mod:`.lock`), one run's staging and quarantine (:mod:`.staging`)), where campaigns live
and their folders' names (:mod:`.folders`), the records it keeps (:mod:`.records`), apart
from the runner (:mod:`.runner`: the fan-out over targets). The names below are the ones the
rest of the package and the tests use."""

from __future__ import annotations

from analysis.campaign.folders import MANIFEST, campaigns, new_campaign_id, target_slug
from analysis.campaign.records import CampaignResult, Execute, Problem, RunRecord, RunSpec
from analysis.campaign.runner import run_campaign
from analysis.campaign.store import SCHEMA, Campaign, open_for_report, processed_dir, reporting

__all__ = ["MANIFEST", "SCHEMA", "Campaign", "CampaignResult", "Execute", "Problem", "RunSpec",
           "campaigns", "new_campaign_id", "open_for_report", "processed_dir", "reporting",
           "target_slug",
           "run_campaign", "RunRecord"]
