"""Statistics: the estimates and tests every benchmark reports (:mod:`.estimates`, with
the statistics of histograms, :mod:`.histograms`, and the Student-t intervals over a few
units, :mod:`.t_intervals`), the overhead tables built from them (:mod:`.overhead`), the
adaptive-precision rule that decides when a campaign has enough rounds (:mod:`.precision`),
its coverage checked by simulation (:mod:`.simulate`) and a campaign's adaptive step
(:mod:`.adaptive`). ``analysis.stats`` is the door to the estimates; the others are
imported by name."""

from __future__ import annotations

from analysis.stats.estimates import (
    BIMODALITY_THRESHOLD,
    Comparison,
    Drift,
    benjamini_hochberg,
    bimodality_coefficient,
    bootstrap_ci,
    bootstrap_difference_ci,
    bootstrap_ratio_ci,
    cliffs_delta,
    cluster_bootstrap_ci,
    compare,
    drift,
    flags,
    hodges_lehmann,
    holm,
    mad_outliers,
    mann_whitney,
    tukey_outliers,
    welch,
)
from analysis.stats.histograms import (
    HistogramQuantile,
    histogram_ks,
    histogram_mannwhitney,
    histogram_quantiles,
    weighted_quantile,
)
from analysis.stats.t_intervals import mean_ci, paired_ratio_ci, welch_ci

__all__ = ["BIMODALITY_THRESHOLD", "Comparison", "Drift", "HistogramQuantile",
           "benjamini_hochberg", "bimodality_coefficient", "bootstrap_ci",
           "bootstrap_difference_ci", "bootstrap_ratio_ci", "cliffs_delta",
           "cluster_bootstrap_ci", "compare", "drift", "flags", "histogram_ks",
           "histogram_mannwhitney", "histogram_quantiles", "hodges_lehmann", "holm",
           "mad_outliers", "mann_whitney", "mean_ci", "paired_ratio_ci", "tukey_outliers",
           "weighted_quantile", "welch", "welch_ci"]
