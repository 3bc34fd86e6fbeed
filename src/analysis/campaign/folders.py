"""Where campaigns live and what their folders are called: ``data/raw/<campaign>/`` with its
``manifest.json``, a folder per target in it (:func:`target_slug`), and the campaign's name
(:func:`new_campaign_id` when none is given)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from analysis import paths
from analysis.errors import ParameterError
from analysis.storage import check_name

MANIFEST = "manifest.json"


def new_campaign_id(prefix: str = "") -> str:
    """A new timestamped campaign id, e.g. ``20261122-093512``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{check_name(prefix, 'campaign prefix')}-{stamp}" if prefix else stamp


def target_slug(target: str) -> str:
    """A folder name for a target: ``root@host:2222`` -> ``root@host_2222``."""
    slug = re.sub(r"[^A-Za-z0-9._@-]", "_", target).lstrip("._-@") or "target"
    if ".." in slug or len(slug) > 128:
        raise ParameterError("target", target, "invalid target name: '..' in it, or longer "
                             "than 128 characters")
    return slug


def raw_root(data_dir) -> Path:
    """``data/raw`` (under ``data_dir`` if given): the folder of every campaign."""
    return paths.raw_dir(Path(data_dir) / "raw" if data_dir else None)


def campaigns(data_dir=None) -> list[str]:
    """Names of the campaigns in data/raw (folders with a manifest)."""
    return [m.parent.name for m in sorted(raw_root(data_dir).glob(f"*/{MANIFEST}"))]
