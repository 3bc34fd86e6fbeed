"""What a bystander campaign runs: the counting runs, then per round a bracket per case,
each group's control and its A/A slot, shuffled."""

from __future__ import annotations

import random

from analysis import ratemethod
from analysis.benchmarks.bystander.cases import BY_ID, GROUPS
from analysis.campaign import RunSpec


def count_iterations() -> dict[str, int]:
    """Iterations of a counting run: the loop of reads (~150 ns each) the rate method's,
    the loops of loads (~25 us each) and of mappings (~1.6 us) a tenth of that."""
    n = ratemethod.counting_runs(["x"])[0].params["iterations"]  # (read when called)
    return {"read": n, "load": max(n // 10, 1000), "map": max(n // 10, 1000)}


_RULE = ("per crossing within +-precision, or under the A/A noise floor (the estimate within "
         "it, the CI no wider)")


def counting_runs(chosen: list[str]) -> list[RunSpec]:
    n = count_iterations()
    return [RunSpec(f"rcount-{c}", c, {"kind": ratemethod.COUNT_KIND,
                                       "iterations": n[BY_ID[c].group]}) for c in chosen]


def round_runs(chosen: list[str], r: int, seed, aa: bool = True) -> list[RunSpec]:
    """One round: a bracket per case, the control of each group present and, with ``aa``,
    each group's A/A slot (a second control bracket), all shuffled together."""
    groups = [g for g in GROUPS if any(BY_ID[c].group == g for c in chosen)]
    slots = [(c, False) for c in chosen if BY_ID[c].role != "control"]
    slots += [(GROUPS[g], False) for g in groups]
    slots += [(GROUPS[g], True) for g in groups] if aa else []
    random.Random(f"{seed}-bystander-{r}").shuffle(slots)
    out = []
    for pos, (case, is_aa) in enumerate(slots):
        params = {"kind": ratemethod.BRACKET_KIND, "round": r, "position": pos}
        if is_aa:
            params["aa"] = True
        out.append(RunSpec(f"q{r:03d}-{pos:02d}-{'aa-' if is_aa else ''}{case}", case, params))
    return out


def first_runs(chosen: list[str], rounds: int, seed) -> list[RunSpec]:
    runs = counting_runs(chosen)
    for r in range(rounds):
        runs += round_runs(chosen, r, seed)
    return runs
