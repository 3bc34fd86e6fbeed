"""The campaign's lock: one process at a time runs a campaign (``.lock`` in its folder,
held with flock; re-entrant within one :class:`~analysis.campaign.Campaign` object)."""

from __future__ import annotations

from analysis.storage import mkdirs


class Held:
    """Holds a campaign's lock (what :meth:`Campaign.locked
    <analysis.campaign.Campaign.locked>` returns); on first acquisition the campaign reloads
    its manifest and clears what a dead process left behind."""

    def __init__(self, camp):
        self.camp = camp

    def __enter__(self):
        first = not self.camp._flock.held
        mkdirs(self.camp.folder.parent)
        self.camp._flock.acquire(campaign=self.camp.name)
        if first:
            try:
                self.camp._on_acquire()
            except BaseException:
                self.camp._flock.release()
                raise
        return self.camp

    def __exit__(self, *exc):
        self.camp._flock.release()
