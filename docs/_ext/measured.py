"""Measured numbers in the docs come from records; published ones from the seeds' data.

Roles (MyST: ``{measured}`noisy-host:06-uprobe.cost```):

``{measured}`RECORD:KEY```
    a value of docs/_data/records/RECORD.json (made by docs/_ext/record.py from a real
    campaign or test-suite run), formatted, linked to its host on the reference-machines
    page, with the host, date and control's speed as hover text. Keys: ``EXP.cost`` (cost
    per event with its 95 % CI), ``EXP.value`` (the cost alone: a reading without a CI),
    ``EXP.precision``, ``EXP.share`` and ``EXP.stats_share`` (an audited program's share of
    one CPU, and bpf_stats' alone), ``EXP.rate`` (events or runs per second with a CI),
    ``EXP.run`` (an audited program's run time per run), ``control`` (the untraced iteration),
    ``noise_floor`` (the A/A slot's CI half-width: the smallest cost the host resolves),
    ``aa`` (the A/A slot's estimate with its CI), ``wall`` (wall time), ``rounds``, ``met``,
    ``passed``, ``skipped``, ``failed``, ``date``, ``host``.
``{published}`FILE:ROW:COLUMN```
    a figure of data/reference/FILE.csv (the seeds' published numbers): the row whose
    leading cells are ROW (``a/b`` for two), the unit from the column's suffix.
``{setting}`TEXT```
    a configured value (a budget, a default, a target), shown as written: not a measurement.

Directive ``{reference-machines}``: one section per record, with the host's fingerprint,
date, control speed and the pages that quote it.

At ``source-read`` every page is searched for hand-typed measurements (handtyped.find);
each is a warning naming file:line, so ``make docs`` (-W) fails on one.
"""

from __future__ import annotations

import csv
import json
import re
from datetime import date
from pathlib import Path

import handtyped
from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

DOCS = Path(__file__).resolve().parent.parent
RECORDS = DOCS / "_data" / "records"
REFERENCE = DOCS.parent / "data" / "reference"
MACHINES = "reference/machines"
log = logging.getLogger(__name__)


def records() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(RECORDS.glob("*.json"))}


def _n(x: float) -> str:
    """A number as pages print it: three significant figures, thousands separated."""
    if x is None:
        return "n/a"
    ax = abs(x)
    digits = 0 if ax >= 100 else 1 if ax >= 1 else 2
    return f"{x:,.{digits}f}".replace("-", "−")


def _ns(x: float) -> str:
    if x is not None and abs(x) >= 10_000:
        return f"{_n(x / 1000)} µs"
    return f"{_n(x)} ns"


def _ci(lo: float, hi: float) -> str:
    if lo is not None and hi is not None and max(abs(lo), abs(hi)) >= 10_000:
        return f"[{_n(lo / 1000)}, {_n(hi / 1000)}]"
    return f"[{_n(lo)}, {_n(hi)}]"


def host_text(rec: dict) -> str:
    h = rec["host"]
    cpu = re.sub(r"\((R|TM)\)|\bProcessor\b|\bCPU\b", "", h.get("cpu") or "?")
    cpu = " ".join(cpu.split())
    if h.get("model") and h.get("vendor") == "GenuineIntel":
        cpu += f" model {h['model']}"
    return f"{cpu}, {h.get('cpus')} CPUs"


def date_text(rec: dict) -> str:
    return f"{date.fromisoformat(rec['date']):%-d %b %Y}"


def _predicted(made: dict) -> str:
    """A prediction of the record as the summary words it: median and count."""
    if made["median"] is None:  # every CI expected unbounded
        return f"no CI expected, {made['met']} of {made['experiments']} within the target"
    return (f"a median ±{made['median'] * 100:.1f} %, {made['met']} of "
            f"{made['experiments']} within the target")


def value(rec: dict, key: str) -> str:
    """The text a ``{measured}`` key renders as (KeyError when the record lacks it)."""
    if "." in key:
        exp, what = key.rsplit(".", 1)
        row = rec["experiments"][exp]
        if what == "cost":
            return f"{_ns(row['cost_ns'])} {_ci(*row['ci_ns'])}"
        if what == "value":  # one reading, no CI (bpf_stats)
            return _ns(row["cost_ns"])
        if what == "precision":
            return f"±{row['precision'] * 100:.0f} %"
        if what == "share":  # an audited program's share of one CPU, with its CI
            x, lo, hi = row["share_pct"]
            return f"{_n(x)} % of one CPU [{_n(lo)}, {_n(hi)}]"
        if what == "stats_share":  # what bpf_stats alone says of it
            return f"{_n(row['stats_share_pct'])} %"
        if what == "rate":  # events (runs) per second, with the CI over sub-windows
            x, lo, hi = row["rate_per_s"]
            return f"{_n(x)}/s [{_n(lo)}, {_n(hi)}]"
        if what == "run":  # an audited program's run time per run, by bpf_stats
            return _ns(row["run_ns"])
        raise KeyError(key)
    simple = {
        "control": lambda: f"{_ns(rec['control_ns_per_iter'])} per iteration",
        "noise_floor": lambda: f"±{_ns(rec['noise_floor_ns'])} per iteration",
        "aa": lambda: f"{_ns(rec['aa_ns'])} {_ci(*rec['aa_ci_ns'])}",
        "wall": lambda: f"{rec['wall_min']:.1f} min",
        "rounds": lambda: str(rec["adaptive"]["rounds_done"]),
        "met": lambda: f"{rec['adaptive']['met']} of {rec['adaptive']['experiments']}",
        "passed": lambda: f"{rec['passed']:,}",
        "skipped": lambda: f"{rec['skipped']:,}",
        "failed": lambda: f"{rec['failed']:,}",
        "predicted_start": lambda: _predicted(rec["prediction"]["start"]),
        "predicted_refined": lambda: _predicted(rec["prediction"]["refined"]),
        "needs_start": lambda: _needs(rec["prediction"]["start"]),
        "needs_refined": lambda: _needs(rec["prediction"]["refined"]),
        "block_cv": lambda: f"±{rec['prediction']['start']['block_cv'] * 100:.0f} %",
        "reached": lambda: (f"a median ±{rec['reached']['median'] * 100:.1f} %, "
                            f"{rec['reached']['met']} of {len(rec['experiments']) - 2} "
                            "within the target"),
        "budget_used": lambda: (f"{rec['adaptive']['spent_min']:.1f} min of a "
                                f"{rec['adaptive']['budget_s'] / 60:.0f} min budget"),
        "date": lambda: date_text(rec),
        "host": lambda: host_text(rec),
    }
    return simple[key]()


def _needs(made: dict) -> str:
    """The time every experiment needs, with its 10th-90th percentiles where the
    prediction simulated campaigns."""
    low, high = (made.get("needs_range_min") or [None, None])[:2] or (None, None)
    spread = (f" ({low:.1f}-{high:.1f} in 8 of 10 campaigns simulated on the noise model)"
              if low is not None and high is not None else "")
    if made["needs_min"] is None:
        return "longer than the rule's rounds allow"
    return f"{made['needs_min']:.1f} min{spread}"


def hover(rec: dict) -> str:
    text = f"{host_text(rec)}, kernel {rec['host'].get('kernel')}, {date_text(rec)}"
    if rec.get("control_ns_per_iter") is not None:
        text += f"; the control's untraced iteration: {_ns(rec['control_ns_per_iter'])}"
    return text


class MeasuredRole(SphinxRole):
    def run(self):
        name, _, key = self.text.partition(":")
        env = self.env
        env.measured_quotes = getattr(env, "measured_quotes", {})
        env.measured_quotes.setdefault(name, set()).add(env.docname)
        recs = records()
        if name not in recs:
            msg = f"{{measured}}: no record {name!r} in docs/_data/records/"
            return self._fail(msg)
        try:
            text = value(recs[name], key)
        except (KeyError, TypeError) as err:
            return self._fail(f"{{measured}}: record {name!r} has no value {key!r} ({err})")
        uri = self.env.app.builder.get_relative_uri(env.docname, MACHINES) + f"#record-{name}"
        ref = nodes.reference("", "", internal=True, refuri=uri, reftitle=hover(recs[name]))
        ref += nodes.inline(text, text, classes=["measured"])
        return [ref], []

    def _fail(self, msg):
        log.warning(msg, location=self.get_location())
        return [nodes.problematic(self.rawtext, self.rawtext)], []


def published_value(spec: str) -> str:
    file, row, column = spec.split(":")
    with open(REFERENCE / f"{file}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    keys = row.split("/")
    for r in rows:
        cells = list(r.values())
        if [c.strip() for c in cells[:len(keys)]] == keys or r.get("name") == row:
            raw = r[column].strip()
            break
    else:
        raise KeyError(f"no row {row!r} in {file}.csv")
    unit = {"_ns": " ns", "_s": " s", "_pct": " %", "_us": " µs"}
    suffix = next((u for s, u in unit.items() if column.endswith(s)), "")
    return f"{float(raw):,g}{suffix}" if re.fullmatch(r"-?[\d.]+", raw) else raw + suffix


class PublishedRole(SphinxRole):
    def run(self):
        try:
            text = published_value(self.text)
        except (OSError, KeyError, ValueError) as err:
            log.warning(f"{{published}}: {self.text!r}: {err}", location=self.get_location())
            return [nodes.problematic(self.rawtext, self.rawtext)], []
        return [nodes.inline(text, text, classes=["published"])], []


class SettingRole(SphinxRole):
    def run(self):
        return [nodes.inline(self.text, self.text, classes=["setting"])], []


class ReferenceMachines(SphinxDirective):
    """One section per record: host fingerprint, date, control speed, source."""

    def run(self):
        out = []
        for name, rec in records().items():
            section = nodes.section(ids=[f"record-{name}"])
            title = f"{host_text(rec)}, {date_text(rec)}"
            section += nodes.title(title, title)
            h = rec["host"]
            facts = [
                ("what", _what(rec)),
                ("CPU", f"{h.get('cpu')} (vendor {h.get('vendor')}, family {h.get('family')},"
                        f" model {h.get('model')}), {h.get('cpus')} CPUs at {h.get('mhz')} MHz"),
                ("kernel", f"{h.get('kernel')} ({h.get('distro')}); virtualization:"
                           f" {h.get('virtualization') or 'none'}; retpolines:"
                           f" {'yes' if h.get('retpoline') else 'no'}"),
                ("probes", f"kprobes {'yes' if h.get('kprobes') else 'no'}, uprobes"
                           f" {'yes' if h.get('uprobes') else 'no'}"),
                ("CPU flags", f"sha256 {h.get('flags_sha256')}"),
            ]
            if rec.get("control_ns_per_iter") is not None:
                facts.append(("control", f"the untraced iteration took"
                                         f" {_ns(rec['control_ns_per_iter'])}"))
            source = rec.get("raw") or "not kept with the docs"
            sha = rec.get("manifest_sha256") or rec.get("junit_sha256")
            facts.append(("raw data", f"{source}; sha256 {sha[:16]}"))
            facts.append(("record", f"docs/_data/records/{name}.json"))
            lst = nodes.bullet_list()
            for label, text in facts:
                para = nodes.paragraph()
                para += nodes.strong(label, label)
                para += nodes.Text(f": {text}")
                lst += nodes.list_item("", para)
            section += lst
            quoted = sorted(getattr(self.env, "measured_quotes", {}).get(name, ()))
            para = nodes.paragraph(text="Quoted on: " + (", ".join(quoted) or "no page yet"))
            section += para
            out.append(section)
        return out


def _what(rec: dict) -> str:
    if rec["kind"] == "suite":
        return f"the test suite: {rec['passed']} passed, {rec['skipped']} skipped"
    return f"a {rec.get('benchmark')} campaign ({rec.get('method')} method)"


def check_source(app, docname, source):
    """Warn (file:line) on every hand-typed measurement of a Markdown page."""
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".md":
        return
    for line, hit in handtyped.find(source[0]):
        log.warning(f"hand-typed measurement {hit!r}: insert it from a record"
                    " ({measured}), from published data ({published}), mark a configured"
                    " value ({setting}), or write it in words",
                    location=(docname, line), type="measured", subtype="hand-typed")


def _read_all_first(app, env, docnames):
    # the reference page lists which pages quote each record: read it last
    if MACHINES in docnames:
        docnames.remove(MACHINES)
        docnames.append(MACHINES)


def setup(app):
    app.add_role("measured", MeasuredRole())
    app.add_role("published", PublishedRole())
    app.add_role("setting", SettingRole())
    app.add_directive("reference-machines", ReferenceMachines)
    app.connect("source-read", check_source)
    app.connect("env-before-read-docs", _read_all_first)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
