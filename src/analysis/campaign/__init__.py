"""Campaigns: the store (:mod:`.store`: the manifest, typed run records, checksums, the
campaign's lock) apart from the runner (:mod:`.runner`: the fan-out over targets). The
names below are the ones the rest of the package and the tests use."""

from __future__ import annotations

from analysis.campaign.records import RunRecord
from analysis.campaign.runner import run_campaign
from analysis.campaign.store import (
    MANIFEST,
    SCHEMA,
    Campaign,
    CampaignResult,
    Execute,
    Problem,
    RunSpec,
    campaigns,
    new_campaign_id,
    open_for_report,
    processed_dir,
    target_slug,
)
from analysis.tracing.lifecycle import traced_execute  # noqa: F401 - kept importable from here

__all__ = ["MANIFEST", "SCHEMA", "Campaign", "CampaignResult", "Execute", "Problem", "RunSpec",
           "campaigns", "new_campaign_id", "open_for_report", "processed_dir", "target_slug",
           "run_campaign", "traced_execute", "RunRecord"]
