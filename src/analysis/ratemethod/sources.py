"""What a rate-method campaign contributes to a comparison, per round, as
:func:`~analysis.ratemethod.rate_table` measures it (benchmark 1's experiments, the anatomy's
mechanism rows).

Per bracket (one meter, untraced - traced - untraced) its difference: the traced block's
time per iteration minus the mean of its untraced neighbours' (:data:`VALUE`: each block's
windows in the fast state), the brackets that the rate table's estimate leaves out left out
here too (their untraced blocks in two speed states, or both in the slow one). A label
whose traced blocks vary by themselves (:data:`SELF_VARYING_SHARE`) is taken, its
references too, from every window instead, as the rate table takes it. Per round: the
label's brackets against the **reference brackets of the same round** (the control's and
the A/A slot's, both the control's script, as the rate table pools them; the A/A slot's
against the control's alone); per event with the events per iteration of its counting run
(the blocks are in ns per iteration). A campaign of the earlier design (every block its own
run, no control bracket) subtracts nothing, as its rate table. The machine's speed: the
untraced blocks' time per iteration, per round."""

from __future__ import annotations

import math
from dataclasses import dataclass

from analysis.campaign import Campaign
from analysis.errors import NothingFinished
from analysis.ratemethod.execute import AA, SELF_VARYING_SHARE, VALUE
from analysis.ratemethod.table import events_per_iteration, kept_differences, load_blocks, traced_fast_share
from analysis.stats.measures import Blocks

#: the windows a bracket's blocks are taken from (the rate table's ``estimate_from``)
FAST, EVERY = "fast state", "every window"


@dataclass
class RateData:
    """One rate-method campaign's brackets, as a comparison reads them: per estimate
    (:data:`FAST`, :data:`EVERY`) the kept brackets' differences (label, round, diff_ns),
    the events per iteration per label, each label's traced blocks' median share of windows
    in the fast state, the control's label, whether the campaign has control brackets
    (``subtracted``), and the machine's speed (the untraced blocks, per round)."""

    diffs: dict
    per_iter: dict
    share: dict
    control: str
    subtracted: bool
    speed: Blocks

    def estimate_from(self, label: str, every_window=()) -> str:
        """:data:`EVERY` for a label whose traced blocks vary by themselves (or named in
        ``every_window``), else :data:`FAST`."""
        varies = self.share.get(label, 1.0) < SELF_VARYING_SHARE
        return EVERY if varies or label in every_window else FAST

    def blocks(self, label: str, how: str = FAST, scale: float | None = None,
               against: tuple[str, ...] | None = None) -> Blocks:
        """Per round: ``label``'s brackets' differences against those of ``against`` in
        that round (by default the reference brackets; a round without any: left out; no
        control bracket in the campaign: None, nothing subtracted), ``scale`` by default
        1 / its events per iteration (ns per event)."""
        d = self.diffs[how]
        refs = against or ((self.control,) if label == AA else (self.control, AA))
        subtract = self.subtracted or against is not None
        pairs = []
        for r, g in d[d["label"] == label].groupby("round", sort=True):
            ref = d.loc[(d["round"] == r) & d["label"].isin(refs), "diff_ns"].to_numpy(float)
            if subtract and not ref.size:
                continue
            pairs.append((g["diff_ns"].to_numpy(float), ref if subtract else None))
        if scale is None:
            ev = self.per_iter.get(label)
            scale = 1 / ev if ev and math.isfinite(ev) else math.nan
        return Blocks(pairs, scale)

    def aa(self, scale: float, how: str = FAST) -> Blocks:
        """The A/A slot's rounds (against the control's brackets) in a measure's unit."""
        return self.blocks(AA, how, scale)


def rate_data(camp: Campaign, target: str, control: str) -> RateData:
    """:class:`RateData` of a rate-method campaign on ``target`` whose control is labelled
    ``control`` unless its parameters name one (``rate_control``); raises
    :class:`~analysis.errors.NothingFinished` without a finished traced block."""
    blocks = load_blocks(camp, target)
    if not (blocks["role"] == "B").any():
        raise NothingFinished(camp.name, f"finished rate brackets on {target}")
    fast, every = kept_differences(blocks)
    control = camp.parameters.get("rate_control") or control
    a = blocks[blocks["role"] == "A"]
    speed = Blocks([(g[VALUE].to_numpy(float), None) for _, g in a.groupby("round")])
    return RateData({FAST: fast, EVERY: every}, events_per_iteration(camp, target),
                    traced_fast_share(blocks).to_dict(), control,
                    bool((blocks["label"] == control).any()), speed)


def differing_estimates(a: RateData, b: RateData, labels) -> set[str]:
    """The ``labels`` that one campaign takes from every window and the other from the fast
    state: compared, both must take them from every window (the fast state would show the
    estimate's change as the probe's)."""
    return {x for x in labels if a.estimate_from(x) != b.estimate_from(x)}
