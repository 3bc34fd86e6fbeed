"""Every campaign's report, through the benchmark that made it."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .. import plots
from ..campaign import Campaign, CampaignResult
from ..preflight import TIMING_CAVEAT
from .base import for_campaign


def report(campaign, *, data_dir=None, figures_dir=None, **kwargs) -> dict:
    """Tables and figures of any campaign (a name, a :class:`Campaign` or the result of
    :func:`run_benchmark`), rebuilt from its raw files by the benchmark that made it."""
    if isinstance(campaign, CampaignResult):
        data_dir = data_dir if data_dir is not None else campaign.folder.parent.parent
        campaign = campaign.campaign
    camp = campaign if isinstance(campaign, Campaign) else Campaign.open(campaign,
                                                                          data_dir=data_dir)
    if isinstance(campaign, Campaign) and data_dir is None:
        data_dir = camp.folder.parent.parent
    with plots.timing_caveat(emulated_caveat(camp)):
        out = for_campaign(camp).report(camp.name, data_dir=data_dir, figures_dir=figures_dir,
                                        **kwargs)
    plt.close("all")  # saved and returned: a notebook shows them with analysis.show()
    return out


def emulated_caveat(camp: Campaign) -> str | None:
    """"<target>: emulated CPU: ..." for a campaign with targets whose preflight says their
    CPU is emulated (QEMU TCG): its timings are not representative. None otherwise."""
    emulated = [t for t, info in sorted(camp.manifest.get("targets", {}).items())
                if ((info or {}).get("preflight") or {}).get("emulated")]
    return f"{', '.join(emulated)}: {TIMING_CAVEAT}" if emulated else None
