"""The files a benchmark's docs page lists under "## Outputs", read from the page, and the
check that a report wrote every one of them (after the command the page promises them
from, on a real or recorded campaign).

The section's list items name one output each, in one form a reader and this module read
alike: ``- `figures/dd-<campaign>-table.tex`, `.md`: what it is`` (the other suffixes of
the same file after the path), or ``- with CONDITION: `...`: ...`` for an output written
only under that condition (``the rate method``, ``bpf_stats``, ...). ``<campaign>`` and
``<target>`` stand for the campaign's and the target's names."""

from __future__ import annotations

import re
from pathlib import Path

from analysis.plots import figure_stem

DOCS = Path(__file__).resolve().parents[1] / "docs"
_ITEM = re.compile(r"^- (?:with (?P<cond>[^:`]+|`[^`]+`): )?`(?P<path>(?:figures|data/processed)"
                   r"/[^`]+)`(?P<alts>(?:, `\.[a-z]+`)*)")


def _items(page: Path) -> list[str]:
    text = page.read_text()
    if "\n## Outputs\n" not in text:
        return []
    section = text.split("\n## Outputs\n", 1)[1].split("\n## ", 1)[0]
    items: list[str] = []
    for line in section.splitlines():
        if line.startswith("- "):
            items.append(line)
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
        elif not line.strip() and items and not items[-1].endswith("\n"):
            items[-1] += "\n"  # a blank line ends the item
    return [i.strip() for i in items]


def listed_outputs(page: Path) -> list[tuple[str | None, list[str]]]:
    """(condition or None, the paths of one output) for every item of the page's Outputs
    section that names an output (starts with a path or ``with``); one not in the form
    above raises, naming it."""
    out = []
    for item in _items(page):
        if not item.startswith(("- `figures/", "- `data/processed/", "- with ")):
            continue  # not an output (e.g. what a column means)
        m = _ITEM.match(item)
        if not m:
            raise AssertionError(f"{page.name}: an Outputs item not in the form "
                                 f"'- [with CONDITION: ]`path`[, `.ext`]: ...': {item[:90]!r}")
        path = m["path"]
        stem = path[:-len(Path(path).suffix)] if Path(path).suffix else path
        out.append((m["cond"], [path, *(stem + a for a in re.findall(r"`(\.[a-z]+)`",
                                                                     m["alts"] or ""))]))
    return out


def missing_outputs(page: str, campaign: str, data_dir: Path, figures_dir: Path,
                    conditions=(), target: str = "local") -> list[str]:
    """The paths ``docs/benchmarks/<page>.md`` lists (unconditional ones and those under
    ``conditions``) that are not files after the report wrote to ``data_dir`` and
    ``figures_dir``."""
    missing = []
    for cond, paths in listed_outputs(DOCS / "benchmarks" / f"{page}.md"):
        if cond is not None and cond not in conditions:
            continue
        for p in paths:
            # a figure's stem as the report makes it (dd-<campaign>, never dd-dd-...)
            p = re.sub(r"^figures/([a-z0-9]+)-<campaign>",
                       lambda m: "figures/" + figure_stem(m[1], campaign), p)
            p = p.replace("<campaign>", campaign).replace("<target>", target)
            actual = (Path(figures_dir) / p[len("figures/"):] if p.startswith("figures/")
                      else Path(data_dir) / "processed" / p[len("data/processed/"):])
            if not actual.is_file():
                missing.append(p)
    return missing
