"""Pricing a probe (notebook 4.1), as notebooks call it: ``analysis.price_probe`` and
``analysis.pricing.save_figure``. The benchmark itself lives in
:mod:`analysis.benchmarks.probe_rate`."""

from __future__ import annotations

from .benchmarks.probe_rate import Price, parse_probe, parse_rate, price_probe, rate_script, save_figure

__all__ = ["price_probe", "save_figure", "Price", "parse_probe", "parse_rate", "rate_script"]
