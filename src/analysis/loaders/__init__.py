"""Loaders of what targets produce: hyperfine JSON (:mod:`.hyperfine`), cyclictest JSON
(:mod:`.cyclictest`), microbenchmark sample files (:mod:`.samples`), a run's ``meta`` file
(:mod:`.meta`); :mod:`.jsonio` reads JSON with errors that name the file and field. What two
benchmarks read lives here."""

from __future__ import annotations

from analysis.loaders.cyclictest import CyclictestRun, load_cyclictest
from analysis.loaders.hyperfine import load_blocks, load_hyperfine, load_hyperfine_many
from analysis.loaders.meta import parse_meta
from analysis.loaders.samples import load_samples, summarize_samples

__all__ = ["load_hyperfine", "load_hyperfine_many", "load_blocks", "load_cyclictest",
           "CyclictestRun", "load_samples", "summarize_samples", "parse_meta"]
