"""The ``ro-crate-metadata.json`` of a bundle (RO-Crate 1.1, Process Run Crate 0.5): every
file with its SHA-256 and format, the software that made them, and the actions (measure,
report, notebook run) that produced them."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from analysis.bundle.files import crate_metadata, file_entity
from analysis.bundle.text import describe_output
from analysis.campaign import target_slug

__all__ = ["crate"]


def _campaign_actions(c: str, m: dict, files: dict, facts: dict, contextual: list) -> list:
    """The measurement and the report of campaign ``c`` as CreateActions (the targets'
    tools are added to ``contextual``)."""
    raw = [{"@id": n} for n in files if n.startswith(f"data/raw/{c}/")]
    tools = []
    for target, info in sorted(m.get("targets", {}).items()):
        for name, version in sorted(((info or {}).get("tool_versions") or {}).items()):
            if version:
                tid = f"#tool-{target_slug(target)}-{name}"
                contextual.append({"@id": tid, "@type": "SoftwareApplication",
                                   "name": name, "version": version,
                                   "description": f"on target {target}"})
                tools.append({"@id": tid})
    actions = []
    actions.append({"@id": f"#measure-{c}", "@type": "CreateAction",
                    "name": f"measure campaign {c} ({m.get('benchmark')})",
                    "description": f"python -m analysis run {m.get('benchmark')} on "
                                   f"{', '.join(m.get('runs', {})) or 'its targets'}",
                    "instrument": [{"@id": "#tracelab"}, *tools],
                    "object": [{"@id": n} for n in files
                               if n.startswith(f"preflight/{c}/")],
                    "result": raw, "startTime": m.get("created"),
                    "endTime": m.get("updated")})
    made = facts["made_by"].get(c) or facts["outputs"]
    actions.append({"@id": f"#report-{c}", "@type": "CreateAction",
                    "name": f"report of campaign {c}",
                    "description": f"python -m analysis report {c} (run again by "
                                   "python -m analysis verify-bundle)",
                    "instrument": {"@id": "#tracelab"},
                    "object": raw + [{"@id": n} for n in files
                                     if n.startswith("data/reference/")],
                    "result": [{"@id": n} for n in made]})
    return actions


def crate(members, camps, manifests, facts, lock, title, authors) -> dict:
    files = {name: file_entity(name, data, describe_output(name))
             for name, data in sorted(members.items())}
    datasets: list[dict] = []  # every data entity is a File with its sha256
    versions = dict(line.split("==", 1) for line in lock if "==" in line)
    deps = [{"@id": f"#{n.lower()}", "@type": "SoftwareApplication", "name": n,
             "version": versions[n]} for n in sorted(versions)
            if n.lower() in {"matplotlib", "pandas", "numpy", "scipy", "seaborn", "pyarrow"}]
    deps.append({"@id": "#python", "@type": "SoftwareApplication", "name": "Python",
                 "version": facts["python"]})
    tool = {"@id": "#tracelab", "@type": "SoftwareApplication",
            "name": "analysis (tracer-overhead-lab)", "version": facts["analysis_version"],
            "softwareVersion": facts["source"].get("commit") or facts["analysis_version"],
            "license": {"@id": "https://spdx.org/licenses/BSD-2-Clause"},
            "softwareRequirements": [{"@id": d["@id"]} for d in deps]}
    contextual, actions = [tool, *deps], []
    for camp in camps:
        actions += _campaign_actions(camp.name, manifests[camp.name], files, facts, contextual)
    for nb in facts["notebooks"]:
        source_nb = f"source/notebooks/{Path(nb).name}"
        actions.append({"@id": f"#notebook-{Path(nb).stem}", "@type": "CreateAction",
                        "name": f"papermill run of {Path(nb).name}",
                        "instrument": [{"@id": "#tracelab"}] + (
                            [{"@id": source_nb}] if source_nb in files else []),
                        "result": {"@id": nb}})
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        date = datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]),
                                      timezone.utc).isoformat(timespec="seconds")
    return crate_metadata(name=title, description=(
        "Raw data, manifests, preflights, package source, environment, figures and tables "
        f"of the tracer-overhead campaign(s) {', '.join(facts['campaigns'])}; "
        "`python -m analysis verify-bundle` checks and rebuilds them"),
        date=date, files=list(files.values()), datasets=datasets, contextual=contextual,
        actions=actions, authors=authors)
