"""A reviewer's bundle: :func:`make_bundle` writes one verified zip (RO-Crate) of campaigns
(:mod:`.build`), :func:`verify_bundle` checks one and rebuilds its figures and tables
(:mod:`.verify`); the rebuild both run (:mod:`.rebuild`), the crate's metadata
(:mod:`.crate`), the files it holds and their checks (:mod:`.files`), its README text
(:mod:`.text`), its command-line parsers (:mod:`.cli`)."""

from __future__ import annotations

from analysis.bundle.build import BundleResult, make_bundle
from analysis.bundle.verify import VerifyResult, verify_bundle

__all__ = ["make_bundle", "verify_bundle", "BundleResult", "VerifyResult"]
