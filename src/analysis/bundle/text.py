"""The texts of a bundle (:mod:`analysis.bundle`): the reviewer's README, ``CITATION.cff``,
``.zenodo.json`` and a one-line description of each figure and table."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

#: what a figure or table is, from the end of its file name (the reports' naming)
_KINDS = [
    ("per-event-cost", "per-event cost per experiment (ns) with 95 % bootstrap CIs, our "
                       "measurement next to the published numbers"),
    ("run-order", "run-order plot: every timed run in the order it ran (drift, warm-up)"),
    ("runs", "box plots of every timed run per experiment"),
    ("tracer-times", "how long each tracer took to attach and to stop"),
    ("published", "our per-event costs next to the published ones"),
    ("histogram", "latency histogram"),
    ("polygon", "frequency polygons of the latency distributions"),
    ("heatmap", "slowdown heat map"),
    ("table", "the results table: per-event cost with 95 % CI, fastest run, slowdown"),
]
_EXT = {".pdf": "figure (vector PDF)", ".png": "figure (PNG, 200 dpi)",
        ".tex": "table (LaTeX, booktabs)", ".md": "table (Markdown)",
        ".csv": "full table (CSV)", ".parquet": "full table (Parquet)"}


def describe_output(name: str) -> str | None:
    """A one-line description of a bundled file, or None (no description needed)."""
    p = PurePosixPath(name)
    if name.startswith("figures/"):
        what = next((text for key, text in _KINDS if p.stem.endswith(key)),
                    "a figure or table of the campaign's report")
        return f"{_EXT.get(p.suffix, 'output')}: {what}"
    if name.startswith("data/processed/"):
        return f"{_EXT.get(p.suffix, 'processed table')}: {p.stem.replace('_', ' ')}, " \
               "derived from the raw files by the report"
    if name.startswith("data/raw/") and p.name == "manifest.json":
        return "campaign manifest: parameters, target preflights, per-run status and the " \
               "SHA-256 of every raw file"
    if name.startswith("preflight/"):
        return "what the target could do when the campaign ran (from the manifest)"
    if name.startswith("notebooks-executed/"):
        return "the notebook as executed (papermill), with its outputs"
    return {"README.md": "for the reviewer: what is here and how to check it",
            "CITATION.cff": "how to cite this artifact", ".zenodo.json": "Zenodo metadata stub",
            "LICENSE": "BSD-2-Clause", "bundle.json": "machine-readable facts of the bundle",
            "environment/requirements-lock.txt": "the Python distributions installed when the "
                                                 "bundle was made"}.get(name)


def _machine(pf: dict) -> list[str]:
    d = pf.get("details") or {}
    noise = {k: v for k, v in (pf.get("noise") or {}).items() if v is not None}
    tools = {k: (v or {}).get("version") for k, v in (pf.get("tools") or {}).items()
             if (v or {}).get("version")}
    rows = [("OS", f"{pf.get('os')} {d.get('distro') or ''}".strip()),
            ("kernel", f"{pf.get('kernel')} {d.get('kernel_version') or ''}".strip()),
            ("CPU", f"{pf.get('cpu_model')} x {pf.get('cpus')} ({d.get('machine') or ''})"),
            ("virtualization", f"{pf.get('virtualization') or 'none detected'}"
                               + (" - EMULATED CPU: timings not representative"
                                  if pf.get("emulated") else "")),
            ("preemption", pf.get("preempt") or d.get("preempt")),
            ("mitigations", d.get("mitigations")),
            ("noise settings", ", ".join(f"{k}={v}" for k, v in sorted(noise.items()))
                               or "none recorded"),
            ("tools", "; ".join(f"{k}: {v}" for k, v in sorted(tools.items())))]
    return [f"  - {k}: {v}" for k, v in rows if v]


#: the README's fixed part: how a reviewer checks and rebuilds the bundle
_HOW_TO_CHECK = [
    "## Check and rebuild it (one command)", "",
    "```", "pip install tracer-overhead-lab  # or: pip install ./source",
    "python -m analysis verify-bundle THIS.zip", "```", "",
    "It unpacks the bundle into an empty folder, checks every file against the "
    "crate's SHA-256 (and against nothing else: a missing, extra or changed file is "
    "named and refused), checks every raw file against its campaign manifest, then "
    "rebuilds every figure and table below from `data/raw/` with the package source "
    "in `source/` (on `PYTHONPATH`, with the installed dependencies) and says per "
    "file whether it is identical byte for byte. No tracer and no root are needed "
    "for the rebuild; measuring again is `python -m analysis run` (see "
    "`source/README.md`).", "",
    "Byte identity: PDF and PNG figures carry no date (matplotlib "
    "`metadata={'CreationDate': None, 'ModDate': None, 'Producer': None}` for PDF, "
    "no `Software` or date chunk in PNG), `SOURCE_DATE_EPOCH` is fixed during the "
    "rebuild, and the provenance in each file's metadata names the raw files by "
    "their path in this bundle and their SHA-256. With the versions in "
    "`environment/requirements-lock.txt` every output is identical byte for byte. "
    "With another matplotlib or pyarrow the bytes may differ: then a PNG is compared "
    "on its decoded pixels and a Parquet file on its data, and the report says "
    "`same pixels` / `same data`; a PDF, LaTeX, Markdown or CSV file must be "
    "identical.", "",
]


def readme(facts: dict, manifests: dict, outputs: list[str], red) -> str:
    src = facts["source"]
    commit = src.get("commit") or "unknown (not a git checkout)"
    lines = [f"# Artifact: tracer-overhead campaign(s) {', '.join(facts['campaigns'])}", "",
             "A self-checking bundle (an RO-Crate 1.1, Process Run Crate profile: "
             "`ro-crate-metadata.json` lists every file with its SHA-256 and format, and the "
             "actions that made them).", "",
             *_HOW_TO_CHECK,
             "## What is here", "",
             "- `data/raw/<campaign>/`: the raw files and the manifest (parameters, "
             "preflights, SHA-256 of every raw file), verified before bundling",
             "- `data/reference/`: the published numbers the reports compare with",
             "- `data/processed/<campaign>/`: the full tables (CSV, Parquet)",
             "- `figures/`: every figure (PDF, PNG) and table (LaTeX, Markdown), rebuilt by "
             "the bundled source when the bundle was made",
             "- `preflight/<campaign>/<target>.json`: what each target could do",
             "- `notebooks-executed/`: the executed notebooks of these campaigns "
             f"({len(facts['notebooks'])})",
             f"- `source/`: the package source, commit `{commit}`"
             + (", **with uncommitted changes** (`source/UNCOMMITTED.diff`; the bundled "
                "files are the working tree's, the ones that made the figures)"
                if src.get("dirty") else ", clean tree"),
             "- `environment/requirements-lock.txt`: the installed Python distributions",
             "- `CITATION.cff`, `.zenodo.json` (a stub: add a DOI when you deposit), "
             "`LICENSE` (BSD-2-Clause), `bundle.json` (these facts, machine-readable)", "",
             "## Figures and tables", ""]
    for name in outputs:
        if name.startswith("figures/"):
            lines.append(f"- `{name}`: {describe_output(name)}")
    lines += ["", "## Where the numbers come from", ""]
    for c, m in manifests.items():
        p = m.get("parameters") or {}
        lines.append(f"Campaign `{c}`: benchmark `{m.get('benchmark')}` (notebook "
                     f"`{m.get('notebook')}`), {m.get('created')} to {m.get('updated')}; "
                     f"parameters: `{json.dumps({k: v for k, v in p.items() if k != 'plan'})}`")
        for target, info in sorted(m.get("targets", {}).items()):
            lines.append(f"- target `{target}`:")
            lines += _machine((info or {}).get("preflight") or {})
        lines.append("")
    lines += ["What not to expect elsewhere: per-event costs depend on the CPU (model, "
              "frequency governor, turbo, SMT), the kernel (version, configuration, "
              "speculative-execution mitigations, preemption model), virtualization and the "
              "tracer's version. On other hardware the absolute numbers will differ; the "
              "ordering of attach points is what should carry over. A rerun on the same "
              "machine differs within the confidence intervals, not byte for byte; the "
              "byte-identical claim is about rebuilding the figures from these raw files.",
              ""]
    lines += _left_out(facts, red)
    return "\n".join(lines) + "\n"


def _left_out(facts: dict, red) -> list[str]:
    """The README's last section: what was redacted and what was never bundled."""
    lines = ["## Redacted and left out", ""]
    if red.kinds:
        lines.append("Target and host names were replaced (in manifests, raw files, preflights "
                     "and notebooks; the raw files' checksums in the manifests were recomputed "
                     "after redaction):")
        lines += [f"- `{ph}`: a {kind} name" for ph, kind in sorted(red.kinds.items())]
    else:
        lines.append("No target or host names were redacted (`--no-redact-hosts`, or none "
                     "found).")
    if red.changed:
        lines.append("")
        lines.append("Files changed by redaction (names or `IdentityFile` values replaced):")
        lines += [f"- `{n}` ({k} replacement(s))" for n, k in sorted(red.changed.items())]
    lines += ["", "Left out (never bundled: private keys, ssh_config and known_hosts files, "
              "campaign working folders):"]
    lines += [f"- `{item}`" for item in facts["left_out"]] or ["- nothing"]
    return lines


def _yaml(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML string


def citation(title: str, authors: list[str], version: str, source: dict) -> str:
    lines = ["cff-version: 1.2.0", "message: If you use these data or figures, please cite "
             "them as below.", "type: dataset", f"title: {_yaml(title)}", "authors:"]
    for a in authors:
        parts = a.rsplit(" ", 1)
        if "authors" in a or len(parts) == 1:
            lines.append(f"  - name: {_yaml(a)}")
        else:
            lines += [f"  - given-names: {_yaml(parts[0])}",
                      f"    family-names: {_yaml(parts[1])}"]
    lines += [f"version: {_yaml(version)}", "license: BSD-2-Clause",
              "# doi: add the DOI Zenodo (or FigShare) gives the deposit"]
    if source.get("commit"):
        lines.append(f"commit: {_yaml(source['commit'])}")
    lines += ["keywords:", "  - tracing", "  - tracer overhead", "  - bpftrace", "  - eBPF",
              "  - benchmark"]
    return "\n".join(lines) + "\n"


def zenodo(title: str, authors: list[str], version: str, campaigns: list[str],
           source: dict) -> dict:
    return {
        "title": title, "upload_type": "dataset", "version": version,
        "description": f"Raw data, figures and the code to rebuild them for campaign(s) "
                       f"{', '.join(campaigns)} (tracer-overhead-lab, commit "
                       f"{source.get('commit')}). Check with `python -m analysis "
                       "verify-bundle`.",
        "creators": [{"name": re.sub(r"^(.*) (\S+)$", r"\2, \1", a) if "authors" not in a
                      else a} for a in authors],
        "license": "BSD-2-Clause", "access_right": "open",
        "keywords": ["tracing", "tracer overhead", "bpftrace", "eBPF", "benchmark",
                     "RO-Crate"],
        "notes": "Stub written by tracelab bundle: check the creators, add related "
                 "identifiers (the thesis or paper), then deposit.",
    }
