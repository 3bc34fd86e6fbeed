"""A reviewer's bundle: :func:`bundle` writes one verified zip (RO-Crate) of campaigns,
:func:`verify_bundle` checks one and rebuilds its figures and tables (:mod:`.build`); the
files it holds and their checks (:mod:`.files`), its README text (:mod:`.text`), its
command-line parsers (:mod:`.cli`)."""

from __future__ import annotations

from analysis.bundle.build import BundleResult, VerifyResult, bundle, verify_bundle

__all__ = ["bundle", "verify_bundle", "BundleResult", "VerifyResult"]
