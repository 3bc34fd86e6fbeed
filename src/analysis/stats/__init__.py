"""Statistics: the estimates and tests every benchmark reports (:mod:`.estimates`), the
overhead tables built from them (:mod:`.overhead`) and the adaptive-precision rule that
decides when a campaign has enough rounds (:mod:`.precision`). ``analysis.stats`` is the
door to the estimates; the other two are imported by name."""

from __future__ import annotations

from analysis.stats.estimates import (
    BIMODALITY_THRESHOLD,
    Comparison,
    Drift,
    HistogramQuantile,
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
    histogram_ks,
    histogram_mannwhitney,
    histogram_quantiles,
    hodges_lehmann,
    holm,
    mad_outliers,
    mann_whitney,
    mean_ci,
    paired_ratio_ci,
    tukey_outliers,
    weighted_quantile,
    welch,
    welch_ci,
)

__all__ = ["BIMODALITY_THRESHOLD", "Comparison", "Drift", "HistogramQuantile",
           "benjamini_hochberg", "bimodality_coefficient", "bootstrap_ci",
           "bootstrap_difference_ci", "bootstrap_ratio_ci", "cliffs_delta",
           "cluster_bootstrap_ci", "compare", "drift", "flags", "histogram_ks",
           "histogram_mannwhitney", "histogram_quantiles", "hodges_lehmann", "holm",
           "mad_outliers", "mann_whitney", "mean_ci", "paired_ratio_ci", "tukey_outliers",
           "weighted_quantile", "welch", "welch_ci"]
