"""The short README and the docs site (docs/, `make docs`): what each promises is there.

The README's reference material moved to docs/; the checks that used to read it read the
page the content moved to (hyperfine quirks: reference/input-formats.md, and so on).
"""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

import analysis
from analysis.benchmarks.core import listing
from conftest import FIXTURES, ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

DOCS = ROOT / "docs"
README = ROOT / "README.md"
FIGURES = DOCS / "_static" / "figures"


def _readme() -> str:
    return README.read_text()


def _page(name: str) -> str:
    return (DOCS / name).read_text()


def _makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z_-]*):", (ROOT / "Makefile").read_text(), re.M))


# --------------------------------------------------------------------------- #
# README


def test_readme_is_at_most_150_lines():
    lines = _readme().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; the rest belongs in docs/"


def test_every_make_target_the_readme_names_exists():
    named = set(re.findall(r"\bmake ([a-z][a-z_-]*)", _readme()))
    assert {"demo", "test", "docs"} <= named
    missing = named - _makefile_targets()
    assert not missing, f"README names make targets the Makefile lacks: {sorted(missing)}"


def test_readme_says_root_before_the_two_commands_and_links_the_docs():
    text = _readme()
    commands = text.index("make demo    #")
    assert text.index("make test    #") > commands
    before = text[:commands]
    assert "root" in before and "sudo" in before, "say what root/sudo is needed for first"
    assert "build/docs/html" in text and "make docs" in text


def test_readme_paths_exist_on_a_fresh_clone():
    text = _readme()
    generated = ("build/", ".venv/", "data/raw/<", "data/processed/<")
    for path in sorted(set(re.findall(r"`([A-Za-z._][\w.-]*/[\w./<>-]*)`", text))):
        if path.startswith(generated) or "<campaign>" in path:
            continue  # made by a command: make demo's files by the demo's test (test_progress)
        assert (ROOT / path.split("<")[0]).exists(), f"README names {path}, which does not exist"
    for name in ("LICENSE", "environment.yml", ".ci/run", "docs/index.md"):
        assert name in text or name == "docs/index.md"
        assert (ROOT / name).exists()


def test_readme_tables_name_every_notebook():
    text = _readme()
    rows = re.findall(r"^\| `([\w.-]+)` \| `?([^|`]*)`? \|", text, re.M)
    stems = {n for n, _ in rows} | {nb for _, nb in rows}
    notebooks = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert notebooks <= stems, f"notebooks not in the README: {sorted(notebooks - stems)}"


def test_readme_benchmark_table_is_the_registrys():
    """The README's table of benchmarks is generated (``python -m analysis benchmarks
    --markdown README.md``): its block equals the registry's table, every registered
    benchmark in it once."""
    text = _readme()
    assert text.count(listing.README_BEGIN) == 1 and text.count(listing.README_END) == 1
    block = text.split(listing.README_BEGIN + "\n", 1)[1].split(listing.README_END, 1)[0]
    assert block == listing.markdown_table() + "\n", (
        "the README's table of benchmarks is not the registry's: run "
        "`python -m analysis benchmarks --markdown README.md`")
    named = re.findall(r"^\| `([\w-]+)` \|", block, re.M)
    assert sorted(named) == sorted(analysis.benchmarks.registry())
    assert listing.replace_block(text) == text


def test_the_readme_block_is_regenerated_by_the_command_line(tmp_path, capsys):
    from analysis.__main__ import main
    from analysis.errors import ParameterError

    stale = tmp_path / "README.md"
    stale.write_text(f"# x\n\n{listing.README_BEGIN}\n| old |\n{listing.README_END}\n\nend\n")
    assert main(["benchmarks", "--markdown", str(stale)]) == 0
    assert stale.read_text() == f"# x\n\n{listing.README_BEGIN}\n{listing.markdown_table()}\n" \
        f"{listing.README_END}\n\nend\n"
    assert main(["benchmarks", "--markdown"]) == 0
    assert capsys.readouterr().out.startswith(f"{stale}\n{listing.markdown_table()}")
    with pytest.raises(ParameterError, match="no generated block in it"):
        listing.replace_block("# no markers\n")
    assert main(["benchmarks", "--markdown", str(tmp_path / "none.md")]) == 2


def test_ci_builds_the_docs_then_runs_exactly_make_test():
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert lines[-1] == "make test"
    assert "make docs" in lines[:-1]


def test_make_docs_is_strict_and_writes_build_docs_html():
    text = (ROOT / "Makefile").read_text()
    assert "docs" in _makefile_targets()
    rule = re.search(r"^docs:.*?(?=^\S|\Z)", text, re.M | re.S).group(0)
    assert "sphinx-build" in rule and " -W " in rule and "--keep-going" in rule
    assert "build/docs/html" in text
    # executed notebooks when build/notebooks has them, the committed ones otherwise
    assert "$(EXECUTED)/" in rule and "notebooks/*.ipynb" in rule


# --------------------------------------------------------------------------- #
# the site


def _toctree_pages() -> set[str]:
    index = _page("index.md")
    pages = set()
    for block in re.findall(r"```\{toctree\}(.*?)```", index, re.S):
        pages |= {ln.strip() for ln in block.splitlines()
                  if ln.strip() and not ln.strip().startswith(":")}
    return pages


def test_the_promised_pages_exist():
    pages = _toctree_pages()
    for page in ("getting-started", "targets/remote", "targets/vm", "benchmarks/index",
                 "benchmarks/adding", "reference/api", "reference/cli", "reference/manifest",
                 "reference/tsmp", "reference/statistics", "design", "notebooks"):
        assert page in pages, page
        assert (DOCS / f"{page}.md").is_file(), page


def test_every_benchmark_has_its_page_in_the_generated_table_and_navigation():
    """Each registered benchmark's page exists (docs/benchmarks/NAME.md); the table of
    benchmarks/index and the toctree of their pages are generated from the registry
    (``{benchmarks-table}``), and no page lists them by hand."""
    assert "```{benchmarks-table}" in _page("benchmarks/index.md")
    assert "```{notebooks-table}" in _page("notebooks.md")
    ext = _registry_tables()
    text = ext.benchmarks_markdown()
    for name in analysis.benchmarks.registry():
        assert (DOCS / "benchmarks" / f"{name}.md").is_file(), name
        assert f"{{doc}}`{name} <{name}>`" in text and f"\n{name}\n" in text, name
    rows, lacking = ext.notebook_rows([])
    hosting = {b.notebook for b in analysis.benchmarks.registry().values()}
    assert set(lacking) == {p.stem for p in (ROOT / "notebooks").glob("*.ipynb")} - hosting
    assert len(rows) == 2 + len(hosting)


def _registry_tables():
    import sys

    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import registry_tables
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    return registry_tables


def test_getting_started_says_root_before_the_commands():
    text = _page("getting-started.md")
    assert text.index("sudo") < text.index("make demo    #") < text.index("make test    #")


def test_every_public_name_is_on_the_api_page():
    text = _page("reference/api.md")
    for name in analysis.__all__:
        assert re.search(rf"analysis\.{re.escape(name)}\b", text), f"{name} is not documented"


def test_the_cli_page_is_generated_from_the_parser():
    text = _page("reference/cli.md")
    assert ".. argparse::" in text
    import sys

    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import cli_parser
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    parser = cli_parser.parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {"figures", "benchmarks", "run", "report", "preflight", "bootstrap", "verify", "vm",
            "summarize"} <= set(sub.choices)


def test_benchmark_pages_have_captioned_figures_that_exist():
    total = 0
    for page in sorted((DOCS / "benchmarks").glob("*.md")):
        text = page.read_text()
        assert "FIGURE_CAPTION" not in text and "_FIGURE" not in text, f"{page.name}: placeholder"
        figures = re.findall(r"```\{figure\} ([^\n]+)\n(.*?)```", text, re.S)
        if page.stem in ("index", "adding"):
            continue
        assert figures, f"{page.name} has no figure"
        for path, body in figures:
            assert (page.parent / path.strip()).is_file(), f"{page.name}: {path}"
            caption = body.split("\n\n", 1)[-1]
            assert re.search(r"run|generated|campaign", caption, re.I), \
                f"{page.name}: say which run made {path}"
    for png in FIGURES.glob("*.png"):
        total += png.stat().st_size
    assert total < 3_000_000, f"docs/_static/figures holds {total} bytes"


# --------------------------------------------------------------------------- #
# what the README used to say, checked where it now is


def test_loader_example_points_at_the_run_layout():
    text = _page("reference/input-formats.md")
    assert "02-kprobe.json" not in text and "02-kprobe.json" not in _readme()
    pattern = "data/raw/<campaign>/<target>/<run_id>/hyperfine.json"
    assert pattern in text
    example = re.search(r"tests/fixtures/(\S+/hyperfine\.json)", text).group(1)
    path = FIXTURES / example
    parts = path.relative_to(FIXTURES).parts
    assert parts[-6:-4] == ("data", "raw")  # data/raw/<campaign>/<target>/<run_id>/hyperfine.json
    runs = analysis.load_hyperfine(path)
    assert {"command", "run", "time_s", "user_s", "system_s", "exit_code"} <= set(runs.columns)


def test_hyperfine_and_cyclictest_quirks_are_documented():
    text = " ".join(_page("reference/input-formats.md").split())
    for quirk in ("`parameter`", "`parameters`", "`exit_codes`", "`stddev: null`",
                  "`memory_usage_byte`", "`parameter_name=`", "repeat the mean",
                  "`avg: -nan`", "`cmdline:`", "`--nsecs`", "overflows = cycles",
                  "`analysis.DataFormatError`"):
        assert quirk in text, quirk


def test_the_worked_numbers_on_the_input_formats_page_hold():
    text = _page("reference/input-formats.md")
    assert "events=10_000_000)  # 78.1" in text and "# 0.131" in text
    assert round(analysis.per_event_cost_ns(runtime_s=6.75364, control_s=5.97243,
                                            events=10_000_000), 1) == 78.1
    assert round(analysis.relative_slowdown(6.75364, 5.97243), 3) == 0.131


def test_the_tsmp_page_matches_the_public_loader(tmp_path):
    """A file written by hand from the page's table reads back through analysis.loaders.load_samples."""
    text = _page("reference/tsmp.md")
    assert '"<8sIIQdI"' in text and "| 64 | n x b |" in text and "2 CLOCK_MONOTONIC_RAW" in text
    ticks = np.array([3, 1, 2], dtype="<u4")
    header = struct.pack("<8sIIQdI", b"TSMPv1\0\0", 64, 4, len(ticks), 2.0, 2).ljust(64, b"\0")
    path = tmp_path / "hand.tsmp"
    path.write_bytes(header + ticks.tobytes())
    assert analysis.loaders.load_samples(path).tolist() == [6.0, 2.0, 4.0]
    summary = analysis.loaders.summarize_samples(path).as_row()
    assert (summary["count"], summary["min_ns"], summary["max_ns"]) == (3, 2.0, 6.0)
    path.write_bytes(header + ticks.tobytes()[:-1])  # shorter than its header promises
    with pytest.raises(analysis.DataFormatError):
        analysis.loaders.load_samples(path)


def test_published_pitfalls_and_rt_notes_are_kept():
    published = _page("benchmarks/published.md")
    assert "10,240,000" in published and "1.024 times" in published and "swapped" in published
    vm = _page("targets/vm.md")
    assert "TRACELAB_VM_RT=1" in vm and "1,865 of 2,000" in vm


@pytest.mark.parametrize("page", ["reference/manifest.md", "reference/campaigns.md"])
def test_manifest_pages_match_the_code(page):
    import json

    text = _page(page)
    m = json.loads((FIXTURES / "looper/data/raw/t1/manifest.json").read_text())
    if page.endswith("manifest.md"):
        assert f"**Schema version {m['schema']}**" in text
        documented = {key for cell in re.findall(r"^\| ([^|]+)\|", text, re.M)
                      for key in re.findall(r"`(\w+)`", cell)}
        assert set(m) <= documented, set(m) - documented
        entry = next(iter(next(iter(m["runs"].values())).values()))
        assert set(entry) <= documented, set(entry) - documented
    else:
        assert "python -m analysis verify CAMPAIGN" in text


#: what a reader should never meet in the docs' prose: the team's issue numbers, the
#: history of how a thing was first built, internal campaign ids (a name with a date and
#: time, e.g. demo-20261129-043609), outside code blocks (example output keeps its form)
FOR_THE_TEAM = re.compile(r"\bissues? #?\d+\b|\bas first built\b|"
                          r"\b[a-z][a-z0-9]*-20\d{6}(?:-\d{4,6})?\b", re.I)


def _prose(text: str) -> str:
    """A Markdown page without its fenced code blocks and inline literals."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`]*`", "", text)


def test_the_docs_are_written_for_the_reader_not_the_team():
    found = [f"{p.relative_to(ROOT)}: {m.group(0)!r}"
             for p in sorted((ROOT / "docs").rglob("*.md")) if "_data" not in p.parts
             for m in FOR_THE_TEAM.finditer(_prose(p.read_text()))]
    assert not found, found
    assert FOR_THE_TEAM.search(_prose("see issue 37, and demo-20261129-043609 as first built"))
    assert not FOR_THE_TEAM.search(_prose("run `demo-20261129-043609`"))
