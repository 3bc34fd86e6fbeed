"""What a dd campaign made with the rate method (:mod:`analysis.ratemethod`) contributes to a
comparison, per round, as :func:`analysis.ratemethod.rate_table` measures it, and which of
benchmark 1's methods a campaign holds (``rate``, ``hyperfine``: a ``method="both"``
campaign holds the two).

Per bracket (one meter, untraced - traced - untraced) its difference: the traced block's
time per iteration minus the mean of its untraced neighbours'
(:data:`~analysis.ratemethod.VALUE`: each block's windows in the fast state), the brackets that
:func:`~analysis.ratemethod.rate_table`'s estimate leaves out left out here too (their
untraced blocks in two speed states, or both in the slow one). An experiment whose traced
blocks vary by themselves (:data:`~analysis.ratemethod.SELF_VARYING_SHARE`) is taken, its
references too, from every window instead, as the rate table takes it. Per round: the
experiment's brackets against the **reference brackets of the same round** (the control's
and the A/A slot's, both the control's script, as the rate table pools them; the A/A
slot's against the control's alone); per event with the events per iteration of its
counting run (the blocks are in ns per iteration already: the scale is 1 / events per
iteration, where the hyperfine method's, in seconds per read, is 1e9 / events per read).
A campaign of the earlier design (every block its own run, no control bracket) subtracts
nothing, as its rate table. The machine's speed: the untraced blocks' time per iteration, per round."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from analysis import ratemethod as rm
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.campaign import Campaign
from analysis.errors import NothingFinished
from analysis.ratemethod import meter
from analysis.stats.measures import Blocks

#: the methods of benchmark 1, the rate method's first (a ``both`` campaign's default), and
#: the kinds of their finished runs
METHODS = {"rate": (rm.BRACKET_KIND, rm.KIND), "hyperfine": ("timed",)}
#: the windows a bracket's blocks are taken from (the rate table's ``estimate_from``)
FAST, EVERY = "fast state", "every window"


def methods(camp: Campaign, target: str) -> list[str]:
    """The methods of which ``camp`` holds finished runs on ``target`` (rate first); none:
    the one its parameters name (``both``: the two)."""
    kinds = {e.get("params", {}).get("kind") for e in camp.run_records(target).values()
             if e.get("status") == "done"}
    found = [m for m, k in METHODS.items() if kinds & set(k)]
    declared = camp.parameters.get("method", "hyperfine")
    return found or (list(METHODS) if declared == "both" else [declared])


def _kept(blocks: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every bracket's difference (:func:`analysis.ratemethod.meter.paired_differences`, the
    speed states told by :data:`~analysis.ratemethod.VALUE`) in the fast state and from
    every window, each only for the brackets the rate table's estimate keeps: not across a
    speed-state change, not wholly in the slow state (label, round, diff_ns)."""
    states = blocks.attrs["states"]
    fast, every = (meter.paired_differences(blocks, states["threshold_ns"], v, rm.VALUE)
                   for v in (rm.VALUE, "ns_per_iter"))
    slow = (fast["untraced_ns"] > states["threshold_ns"]) if states["two_states"] else False
    keys, cols = ["label", "round", "position"], ["label", "round", "diff_ns"]
    kept = fast[~fast["mixed"] & ~slow]
    return kept[cols].reset_index(drop=True), every.merge(kept[keys], on=keys)[cols]


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
        varies = self.share.get(label, 1.0) < rm.SELF_VARYING_SHARE
        return EVERY if varies or label in every_window else FAST

    def blocks(self, label: str, how: str = FAST, scale: float | None = None) -> Blocks:
        """Per round: ``label``'s brackets' differences against the reference brackets' of
        that round (a round without any: left out; no control bracket in the campaign:
        None, nothing subtracted), ``scale`` by default 1 / its events per iteration (ns
        per event)."""
        d = self.diffs[how]
        refs = [self.control] if label == rm.AA else [self.control, rm.AA]
        pairs = []
        for r, g in d[d["label"] == label].groupby("round", sort=True):
            ref = d.loc[(d["round"] == r) & d["label"].isin(refs), "diff_ns"].to_numpy(float)
            if self.subtracted and not ref.size:
                continue
            pairs.append((g["diff_ns"].to_numpy(float), ref if self.subtracted else None))
        if scale is None:
            ev = self.per_iter.get(label)
            scale = 1 / ev if ev and math.isfinite(ev) else math.nan
        return Blocks(pairs, scale)

    def aa(self, scale: float, how: str = FAST) -> Blocks:
        """The A/A slot's rounds (against the control's brackets) in a measure's unit."""
        return self.blocks(rm.AA, how, scale)


def load(camp: Campaign, target: str) -> RateData:
    """:class:`RateData` of a rate-method campaign on ``target`` (raises
    :class:`~analysis.errors.NothingFinished` without a finished traced block)."""
    blocks = rm.load_blocks(camp, target)
    if not (blocks["role"] == "B").any():
        raise NothingFinished(camp.name, f"finished rate brackets on {target}")
    fast, every = _kept(blocks)
    control = camp.parameters.get("rate_control") or CONTROL
    a = blocks[blocks["role"] == "A"]
    speed = Blocks([(g[rm.VALUE].to_numpy(float), None) for _, g in a.groupby("round")])
    return RateData({FAST: fast, EVERY: every}, rm.events_per_iteration(camp, target),
                    rm.traced_fast_share(blocks).to_dict(), control,
                    bool((blocks["label"] == control).any()), speed)


def differing_estimates(a: RateData, b: RateData, labels) -> set[str]:
    """The ``labels`` that one campaign takes from every window and the other from the fast
    state: compared, both must take them from every window (the fast state would show the
    estimate's change as the probe's)."""
    return {x for x in labels if a.estimate_from(x) != b.estimate_from(x)}


def method_note(have_a: list, have_b: list, common: list, every=()) -> str:
    """The summary's sentence: which method was compared, what each campaign holds, and the
    experiments taken from every window in both (:func:`differing_estimates`)."""
    held = f"A: {' and '.join(have_a)}; B: {' and '.join(have_b)}"
    if not common:
        return f"methods differ ({held}): their measures are not compared"
    return "; ".join([f"method compared: {' and '.join(common)} ({held})", *(
        [f"from every window in both (one campaign's traced blocks vary by themselves): "
         f"{', '.join(sorted(every))}"] if every else [])])
