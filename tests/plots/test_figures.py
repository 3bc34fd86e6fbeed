"""Figures and tables as a reader sees them, drawn from realistic data: the published
reference data, a measured benchmark-1 campaign (numbers below, from a run on the 2-core
VM), and the real cyclictest and hyperfine result files under tests/fixtures.

Nothing overlaps and nothing is cut off (every tick label, title, caption, legend entry
and annotation is measured after drawing); every figure says what its bars, boxes or
whiskers are; per-event bars are never log-scaled; one colour per source and one hatch
meaning; low precision is said on the figure; tables are fit for print.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import subprocess
import sys

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import seaborn as sns

from analysis import plots, published, stats
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.cyclictest import report as latency
from analysis.benchmarks.dd.experiments import plan_experiments
from analysis.benchmarks.dd.figures import draw_figures, percent_columns, thesis_tables
from analysis.benchmarks.dd.results import with_published
from analysis.loaders.cyclictest import load_cyclictest
from analysis.loaders.hyperfine import load_hyperfine
from analysis.targets.preflight import Preflight
from conftest import FIXTURES, ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

# --------------------------------------------------------------------------- #
# a measured campaign: dd-20261123-005801 on "local" (experiments 2,4,5,6; count=20k;
# rounds=2; kprobes unavailable, so 02 ran on the sys_enter_read tracepoint)

#: ns per dd read of every timed run, in the order they ran (order, round)
MEASURED_RUNS = {
    "02-kprobe": ([600.6, 588.9, 586.1, 587.4, 751.6, 606.0], [0, 1, 2, 27, 28, 29]),
    "04-tracepoint-entry": ([599.2, 583.0, 579.8, 617.4, 609.0, 609.7], [3, 4, 5, 24, 25, 26]),
    "06-uprobe": ([10981.6, 11006.9, 11117.2, 11074.6, 11349.0, 11233.0], [6, 7, 8, 30, 31, 32]),
    "05-tracepoint-return": ([557.0, 581.6, 559.6, 544.8, 557.2, 537.5], [9, 10, 11, 18, 19, 20]),
    "01-control": ([393.0, 391.0, 381.3, 688.3, 513.4, 495.1], [12, 13, 14, 33, 34, 35]),
    "aa-control": ([393.5, 392.5, 385.4, 497.0, 481.1, 485.1], [15, 16, 17, 21, 22, 23]),
}
#: experiment, events, per-event ns [95 % CI], fastest-run ns, slowdown (fraction)
MEASURED_TABLE = [
    ("01-control", 20481, 0.0, np.nan, np.nan, 0.0, 0.0),
    ("02-kprobe", 20481, 150.7, -6.1, 235.1, 204.8, 0.339),
    ("04-tracepoint-entry", 20481, 160.1, 8.2, 222.9, 198.5, 0.361),
    ("05-tracepoint-return", 20481, 113.0, -41.2, 177.4, 156.2, 0.255),
    ("06-uprobe", 20480, 10651.9, 10465.5, 10842.1, 10600.3, 23.989),
]


def _preflight() -> Preflight:
    lines = ["os=Linux", "cpus=2", "tool.bpftrace.path=/usr/bin/bpftrace", "cap.kprobes=0",
             "cap.uprobes=1", "cap.tracepoints=1", "cap.bpf=1"]
    return Preflight.from_lines("local", "\n".join(lines))


def measured_report(scale_ci: float = 1.0) -> Report:
    """What the dd report hands to its figure and table writers, for the campaign above
    (``scale_ci`` narrows the CIs: 0.1 gives a precise campaign)."""
    planned = plan_experiments(_preflight(), "bpftrace", [2, 4, 5, 6])
    by_id = {p.id: p for p in planned}
    rows = []
    for e, events, cost, low, high, fastest, slow in MEASURED_TABLE:
        low = cost - (cost - low) * scale_ci
        high = cost + (high - cost) * scale_ci
        rows.append({"experiment": e, "name": by_id[e].experiment.name,
                     "attach_point": by_id[e].attach_point or "BEGIN",
                     "substituted": by_id[e].substituted, "events": float(events),
                     "per_event_ns": cost, "per_event_ns_ci_low": low,
                     "per_event_ns_ci_high": high, "per_event_ns_fastest": fastest,
                     "slowdown": slow, "precision_reached": (high - low) / 2 / cost
                     if cost else np.nan})
    table = pd.DataFrame(rows)
    runs = pd.DataFrame([{"experiment": e, "s_per_read": ns * 1e-9, "order": o,
                          "time_s": ns * 1e-9 * 20480}
                         for e, (values, orders) in MEASURED_RUNS.items()
                         for ns, o in zip(values, orders)])
    times = pd.DataFrame({"experiment": ["01-control", "02-kprobe"], "blocks": [4, 2],
                          "attach_median_s": [0.05, 0.05], "attach_max_s": [0.06, 0.06],
                          "stop_median_s": [0.11, 0.22], "stop_max_s": [0.14, 0.22],
                          "killed": [0, 0]})
    return Report(None, {"table": table, "with_published": with_published(table), "runs": runs,
                         "planned": planned, "tracer_times": times,
                         "noise_floor_ns_per_read": 147.5})


# --------------------------------------------------------------------------- #
# real result files


def _cyclictest_histograms() -> dict:
    two = load_cyclictest(FIXTURES / "cyclictest" / "rt-tests-2.40-two-threads.json").histogram
    nsecs = load_cyclictest(FIXTURES / "cyclictest" / "rt-tests-2.40-nsecs.json").histogram
    out = {}
    for label, part in (("none", two[two.thread == 0]), ("kernel-ftrace", two[two.thread == 1]),
                        ("user-bpftrace", nsecs)):
        out[label] = (part["latency_us"].to_numpy(float), part["count"].to_numpy(np.int64))
    return out


def _hyperfine_runs() -> pd.DataFrame:
    runs = load_hyperfine(FIXTURES / "hyperfine" / "v1.15-two-commands.json")
    return runs.rename(columns={"command": "experiment"}).assign(order=lambda r: range(len(r)))


def _binned(lat, cnt, width: float = 5.0):
    """(bin edges, counts) of a cyclictest histogram in bins of ``width`` us."""
    edges = np.arange(np.floor(lat.min()), lat.max() + width, width)
    return edges, np.histogram(lat, bins=edges, weights=cnt)[0]


def every_figure() -> dict:
    """name -> a function drawing it (one per figure the package writes, and each figure
    function of analysis.plots with real data)."""
    hists = _cyclictest_histograms()
    figs = {name: (lambda f=func: f()) for name, (func, _) in published.FIGURES.items()}
    for name in ("per-event-cost", "runs", "run-order"):
        figs[f"dd-measured-{name}"] = lambda n=name: draw_figures(measured_report(), "local",
                                                                    "bpftrace")[n]
    figs["dd-measured-precise-per-event-cost"] = lambda: draw_figures(
        measured_report(0.1), "local", "bpftrace")["per-event-cost"]
    figs["cyclictest-box"] = lambda: plots.box_plot(
        {k: latency.box_stats(lat, cnt, k) for k, (lat, cnt) in hists.items()},
        ylabel="latency (us)", show_fliers=False, title="cyclictest latency, local")
    figs["cyclictest-histogram"] = lambda: plots.latency_histogram(
        hists, overflows={"none": 24, "kernel-ftrace": 0}, title="cyclictest latency, local")
    figs["cyclictest-histogram-nsecs"] = lambda: plots.latency_histogram(
        {"user-bpftrace": hists["user-bpftrace"]}, title="1 ns buckets, merged")
    figs["frequency-polygon"] = lambda: plots.frequency_polygon(
        {k: _binned(*hists[k]) for k in ("none", "kernel-ftrace")},
        xlabel="latency (us)", title="cyclictest latency, frequency")
    figs["hyperfine-runs-box"] = lambda: plots.runs_box(_hyperfine_runs(), title="two commands")
    figs["hyperfine-run-order"] = lambda: plots.run_order_plot(_hyperfine_runs(), order="order")
    figs["hyperfine-run-order-grid"] = lambda: plots.run_order_grid(
        _hyperfine_runs(), reference=_hyperfine_runs()["experiment"].iloc[0])
    return figs


FIGURES = every_figure()


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")  # draw_figures draws three; a test may look at one


# --------------------------------------------------------------------------- #
# what is drawn where


def text_boxes(fig) -> list[tuple[str, matplotlib.transforms.Bbox, matplotlib.text.Text]]:
    """(description, window extent, text) of every non-empty visible text the figure draws:
    tick labels (of ticks inside the view), axis labels, offsets, titles, annotations,
    legend entries and titles, suptitle and the caption."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found, seen = [], set()

    def add(t, where):
        if t is not None and id(t) not in seen and t.get_visible() and t.get_text().strip():
            seen.add(id(t))
            found.append((f"{where} {t.get_text()!r}", t.get_window_extent(renderer), t))

    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        if ax.axison:
            for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y")):
                for tick in axis._update_ticks():  # the ticks drawn: inside the view
                    for label in (tick.label1, tick.label2):
                        add(label, f"axes {i} {name} tick")
                add(axis.label, f"axes {i} {name} label")
                add(axis.get_offset_text(), f"axes {i} {name} offset")
        for t in (ax.title, ax._left_title, ax._right_title, *ax.texts):
            add(t, f"axes {i} text")
        if ax.get_legend() is not None:
            for t in (*ax.get_legend().get_texts(), ax.get_legend().get_title()):
                add(t, f"axes {i} legend")
    for t in (fig._suptitle, fig._supxlabel, fig._supylabel, *fig.texts):
        add(t, "figure")
    for leg in fig.legends:
        for t in (*leg.get_texts(), leg.get_title()):
            add(t, "figure legend")
    return found


def _rectangle(text, box) -> np.ndarray:
    """The four corners of a text's own (possibly rotated) rectangle: its window extent
    is the axis-aligned box around it, far larger for a label rotated by 60 degrees."""
    angle = np.deg2rad(text.get_rotation())
    c, s = abs(np.cos(angle)), abs(np.sin(angle))
    x0, y0, x1, y1 = box.x0, box.y0, box.x1, box.y1
    if abs(c - s) < 1e-3 or s < 1e-6:  # upright (or 45 degrees: not solvable; use the box)
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    big_w, big_h = x1 - x0, y1 - y0  # W = w c + h s, H = w s + h c
    w = (big_w * c - big_h * s) / (c * c - s * s)
    h = (big_h * c - big_w * s) / (c * c - s * s)
    u = np.array([np.cos(angle), np.sin(angle)]) * w / 2
    n = np.array([-np.sin(angle), np.cos(angle)]) * h / 2
    m = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    return np.array([m - u - n, m + u - n, m + u + n, m - u + n])


def overlaps(a, b, slack: float = 0.5) -> bool:
    """Whether two texts' rectangles intersect by more than ``slack`` pixels (separating
    axis test on the rotated rectangles)."""
    (ta, ba), (tb, bb) = a, b
    if not (ba.x0 < bb.x1 and bb.x0 < ba.x1 and ba.y0 < bb.y1 and bb.y0 < ba.y1):
        return False
    pa, pb = _rectangle(ta, ba), _rectangle(tb, bb)
    for poly in (pa, pb):
        for i in range(2):
            edge = poly[i + 1] - poly[i]
            axis = np.array([-edge[1], edge[0]]) / (np.hypot(*edge) or 1.0)
            qa, qb = pa @ axis, pb @ axis
            if qa.max() - slack <= qb.min() + slack or qb.max() - slack <= qa.min() + slack:
                return False
    return True


def caption_text(fig) -> str:
    parts = [fig._supxlabel.get_text() if fig._supxlabel else ""]
    parts += [leg.get_title().get_text() for leg in fig.legends]
    parts += [t.get_text() for t in fig.texts if t is not fig._supxlabel]
    return " ".join(" ".join(parts).split())  # wrapped lines read as one


def test_the_overlap_check_sees_collisions_upright_and_rotated():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xticks(range(8), [f"a long category {i}" for i in range(8)])
    found = text_boxes(fig)
    ticks = [(t, b) for d, b, t in found if "x tick" in d]
    assert overlaps(ticks[0], ticks[1])  # upright: they collide
    ax.set_xticks(range(8), [f"category number {i}" for i in range(8)], rotation=60, ha="right",
                  rotation_mode="anchor")
    ticks = [(t, b) for d, b, t in text_boxes(fig) if "x tick" in d]
    assert ticks[0][1].overlaps(ticks[1][1])  # their boxes do ...
    assert not overlaps(ticks[0], ticks[1])  # ... the rotated labels do not
    ax.set_xticks(np.arange(8) * 0.05, [f"category {i}" for i in range(8)], rotation=60,
                  ha="right", rotation_mode="anchor")
    ticks = [(t, b) for d, b, t in text_boxes(fig) if "x tick" in d]
    assert overlaps(ticks[0], ticks[1])  # rotated and too close: they collide
    plt.close(fig)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_no_two_texts_overlap_and_none_is_cut_off(name):
    fig = FIGURES[name]()
    try:
        boxes = text_boxes(fig)
        assert len(boxes) >= 5, name
        clashes = [(a, b) for (a, ba, ta), (b, bb, tb) in itertools.combinations(boxes, 2)
                   if overlaps((ta, ba), (tb, bb))]
        assert not clashes, f"{name}: overlapping texts {clashes[:5]}"
        width, height = fig.canvas.get_width_height()
        outside = [d for d, bb, _ in boxes if bb.x0 < -1 or bb.y0 < -1 or bb.x1 > width + 1
                   or bb.y1 > height + 1]
        assert not outside, f"{name}: cut off at the figure's edge: {outside}"
        assert fig.get_size_inches()[0] <= plots.THESIS_WIDTH_IN + 1e-9
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_says_what_its_marks_are(name):
    fig = FIGURES[name]()
    try:
        text = caption_text(fig)
        assert re.search(r"error bars|whiskers|no CI", text), f"{name}: caption {text!r}"
        if "box" in name or name.endswith("-runs"):
            assert "quartiles" in text and "1.5 IQR" in text
        if "per-event" in name:
            # which CI: a per-event figure says it (benchmark 1's: the round as the unit)
            assert re.search(r"95 % bootstrap CI \(BCa\)|95 % CI with the round as the unit"
                             r"|no confidence intervals", text), f"{name}: caption {text!r}"
    finally:
        plt.close(fig)


def test_seaborn_is_imported_and_draws(monkeypatch):
    check = subprocess.run([sys.executable, "-c", "import sys, analysis.plots; "
                            "assert 'seaborn' in sys.modules"], capture_output=True, text=True,
                           cwd=ROOT)
    assert check.returncode == 0, check.stderr
    calls = []
    for fn in ("boxplot", "heatmap", "histplot", "lineplot"):
        original = getattr(sns, fn)

        def spy(*args, _original=original, _fn=fn, **kwargs):
            calls.append(_fn)
            return _original(*args, **kwargs)

        monkeypatch.setattr(sns, fn, spy)
    for name in ("published-dd-slowdown", "hyperfine-runs-box", "frequency-polygon",
                 "cyclictest-histogram", "hyperfine-run-order", "hyperfine-run-order-grid"):
        plt.close(FIGURES[name]())
    assert set(calls) == {"boxplot", "heatmap", "histplot", "lineplot"}


# --------------------------------------------------------------------------- #
# per-event bars: linear, one colour per source, one hatch, low precision said


def _bar_colours(fig) -> dict:
    leg = fig.legends[0]
    return {t.get_text(): matplotlib.colors.to_hex(h.get_facecolor())
            for t, h in zip(leg.get_texts(), leg.legend_handles)}


def test_per_event_bars_are_linear_even_across_orders_of_magnitude():
    out = measured_report()
    fig = draw_figures(out, "local", "bpftrace")["per-event-cost"]
    bars = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_yscale() for ax in bars] == ["linear", "linear"]  # 100s of ns | 10,000s
    assert bars[0].get_ylim()[0] < -41  # the whisker below zero is drawn, not clipped
    assert bars[0].get_ylim()[1] < 400 and bars[1].get_ylim()[1] > 10_842
    plt.close(fig)
    table = pd.DataFrame({"experiment": ["a", "b"], "tracer": ["bpftrace", "bpftrace"],
                          "per_event_ns": [100.0, 120.0]})
    fig = plots.per_event_cost_bars(table, log=True)  # an old caller asking for log
    assert {ax.get_yscale() for ax in fig.axes} == {"linear"}
    plt.close(fig)


def test_one_colour_per_source_in_published_and_measured_figures():
    pub = published.fig_dd_per_event_cost()
    ours = draw_figures(measured_report(), "local", "bpftrace")["per-event-cost"]
    a, b = _bar_colours(pub), _bar_colours(ours)
    sources = ["bpftrace (Gregg, 2019)", "bpftrace (Piotrowski)", "DTrace (Piotrowski)"]
    assert [a[s] for s in sources] == [b[s] for s in sources]
    assert len({b[s] for s in [*sources, "bpftrace (this machine)"]}) == 4
    # a DTrace campaign is not the colour of Piotrowski's published DTrace either
    tracer_colours = {plots.tracer_color(t) for t in ("bpftrace", "dtrace", "ftrace", "lttng",
                                                      "none")}
    assert not tracer_colours & {b[s].upper() for s in sources}
    for fig in (pub, ours):
        plt.close(fig)


def test_one_hatch_meaning_substitute_attach_point():
    fig = draw_figures(measured_report(), "local", "bpftrace")["per-event-cost"]
    hatched = [p for ax in fig.axes for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 1  # our 02 Kprobe ran on a tracepoint; nothing else is hatched
    assert matplotlib.colors.to_hex(hatched[0].get_facecolor()) == \
        plots.tracer_color("bpftrace").lower()
    assert {p.get_hatch() for p in hatched} == {plots.SUBSTITUTE_HATCH}
    leg = fig.legends[0]
    marks = {t.get_text(): h.get_hatch() for t, h in zip(leg.get_texts(), leg.legend_handles)}
    assert marks.pop("hatched, *: substitute attach point") == plots.SUBSTITUTE_HATCH
    assert not any(marks.values())  # the source entries are plain colours
    ticks = [" ".join(t.get_text().split()) for ax in fig.axes if ax.axison
             for t in ax.get_xticklabels()]
    assert "02 Kprobe *" in ticks
    plt.close(fig)
    for name in published.FIGURES:
        fig = published.FIGURES[name][0]()
        assert not [p for ax in fig.axes for p in ax.patches if p.get_hatch()], name
        plt.close(fig)


def test_low_precision_is_said_on_the_figure_and_only_then():
    fig = draw_figures(measured_report(), "local", "bpftrace")["per-event-cost"]
    notes = [d for d, *_ in text_boxes(fig) if "low precision" in d]
    assert notes and "low precision: 95 % CI wider than ±25 %" in notes[0]
    assert "3 of 4 experiments" in notes[0]
    plt.close(fig)
    fig = draw_figures(measured_report(0.1), "local", "bpftrace")["per-event-cost"]
    assert not [d for d, *_ in text_boxes(fig) if "low precision" in d]
    plt.close(fig)


def test_figure_with_a_note_is_byte_identical_on_rerun(tmp_path):
    digests = []
    for k in range(2):
        fig = draw_figures(measured_report(), "local", "bpftrace")["runs"]
        written = plots.save_figure(fig, "runs", figures_dir=tmp_path / str(k))
        digests.append([hashlib.sha256(p.read_bytes()).hexdigest() for p in written])
    assert digests[0] == digests[1]


def test_figure_file_names_are_not_doubled():
    assert plots.figure_stem("dd", "dd-20261123-005801") == "dd-20261123-005801"
    assert plots.figure_stem("dd", "ci-full") == "dd-ci-full"
    assert plots.figure_stem("dd", "ddx") == "dd-ddx"
    assert plots.figure_stem("usdt", "usdt-20261123-010000") == "usdt-20261123-010000"
    assert plots.figure_stem("cyclictest", "ci-ct") == "cyclictest-ci-ct"


def test_latency_histogram_merges_nanosecond_buckets_and_says_so():
    fig = FIGURES["cyclictest-histogram-nsecs"]()
    text = caption_text(fig)
    assert "buckets merged" in text and "0.02 us wide" in text
    plt.close(fig)
    fig = FIGURES["cyclictest-histogram"]()
    assert "1 us wide, one per histogram bucket" in caption_text(fig)
    plt.close(fig)


# --------------------------------------------------------------------------- #
# tables


def _tabular(tex: str) -> tuple[str, str, list[str]]:
    """(column spec, header, body rows) of a booktabs table."""
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", tex).group(1)
    head = tex.split("\\toprule\n", 1)[1].split("\n", 1)[0]
    body = tex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0].strip().splitlines()
    return spec, head, body


def _check_print_table(tex: str, name: str) -> None:
    spec, head, body = _tabular(tex)
    assert len(spec) <= plots.MAX_TABLE_COLUMNS, f"{name}: {len(spec)} columns"
    assert not re.search(r"[a-z]\\_[a-z]", head), f"{name}: snake_case header {head}"
    for row in body:
        assert not re.search(r"\d[eE][+-]\d", row), f"{name}: exponent in {row}"
        assert not re.search(r"(?<![\d,.])\d{5,}(?![\d])", row.replace("tab:", "")), \
            f"{name}: no thousands separator in {row}"


def test_published_tables_are_fit_for_print(tmp_path):
    written = published.regenerate(figures_dir=tmp_path)
    texs = [p for p in written if p.suffix == ".tex"]
    assert {p.stem for p in texs} >= {"published-dd-per-event-cost", "published-dd-slowdown",
                                      "published-dd-recomputed", "published-kernel-build",
                                      "published-kernel-build-slowdown",
                                      "published-usdt-microbenchmark"}
    for p in texs:
        _check_print_table(p.read_text(), p.name)
    usdt = (tmp_path / "published-usdt-microbenchmark.tex").read_text()
    assert "58,365" in usdt and "1,446.99" in usdt  # thousands separators, fixed decimals
    dd_pub = (tmp_path / "published-dd-per-event-cost.tex").read_text()
    assert "1,977" in dd_pub and "1977" not in dd_pub


def test_measured_tables_are_fit_for_print(tmp_path):
    out = measured_report()
    tables = thesis_tables(out, out.values["table"], out.values["with_published"], out.values["tracer_times"],
                           "local")
    for name, frame, caption, formats in tables:
        plots.export_table(frame, name, caption=caption, formats=formats, figures_dir=tmp_path)
        _check_print_table((tmp_path / f"{name}.tex").read_text(), name)
    main = (tmp_path / "table.tex").read_text()
    assert "10,652 [10,466, 10,842]" in main and "2,398.9" in main  # slowdown in %
    assert r"Precision ($\pm$\%)" in main and "02 Kprobe *" in main
    md = (tmp_path / "table.md").read_text()
    assert "| 06 Uprobe | 20,480 | 10,652 [10,466, 10,842] | 10,600 | 2,398.9 | 1.8 |" in md


def test_percentages_are_percentages_in_the_files():
    table = measured_report().values["table"].assign(
        slowdown_ci_low=0.1, slowdown_ci_high=0.5, slowdown_fastest=0.3)
    csv = percent_columns(table)
    assert "slowdown" not in csv and "precision_reached" not in csv
    np.testing.assert_allclose(csv["slowdown_pct"], table["slowdown"] * 100)
    np.testing.assert_allclose(csv["precision_reached_pct"], table["precision_reached"] * 100)
    assert {"slowdown_pct_ci_low", "slowdown_pct_ci_high", "slowdown_pct_fastest"} <= set(csv)


def test_numbers_are_formatted_for_print():
    assert plots.format_number(51200.0, ".1f") == "51,200.0"
    assert plots.format_number(51200, ".1f") == "51,200"
    assert plots.format_number(-0.0001, ".1f") == "0.0"
    assert plots.format_number(np.nan) == "--" and plots.format_number(None) == "--"
    assert plots.format_number(0.123, ".1%") == "12.3%"
    with pytest.raises(ValueError, match="fixed decimals"):
        plots.format_number(51200.0, ".3g")
    assert plots.human_name("per_event_ns") == "Per event (ns)"
    assert plots.human_name("slowdown_pct") == "Slowdown (%)"
    assert plots.human_name("Cost (ns) [95 % CI]") == "Cost (ns) [95 % CI]"
    wide = pd.DataFrame({f"c{i}": [1.0] for i in range(8)})
    with pytest.raises(ValueError, match="at most 7"):
        plots.export_table(wide, "wide", figures_dir="/nonexistent-never-written")


def test_bimodality_flag_prints_enough_digits_to_differ(monkeypatch):
    from analysis.stats import estimates

    monkeypatch.setattr(estimates, "bimodality_coefficient", lambda x: 0.5558)
    flag = [f for f in stats.flags(np.arange(12.0)) if f.startswith("bimodal")][0]
    assert flag == "bimodal: coefficient 0.5558 > 5/9 = 0.5556"
    monkeypatch.setattr(estimates, "bimodality_coefficient", lambda x: 0.55560)
    flag = [f for f in stats.flags(np.arange(12.0)) if f.startswith("bimodal")][0]
    assert flag == "bimodal: coefficient 0.55560 > 5/9 = 0.55556"


def test_full_tables_are_written_as_csv_and_parquet_byte_identically(tmp_path):
    frame = pd.DataFrame({"experiment": ["01-control", "02-kprobe"],
                          "per_event_ns": [0.0, 150.72059],
                          "flags": [["outliers: 1 of 6 beyond Tukey fences"], []],
                          "target_met": [None, True], "mixed": ["±1.0", np.nan],
                          "count": [20480, 20480]})
    first = plots.write_frame(frame, tmp_path / "a" / "benchmark1")
    again = plots.write_frame(frame, tmp_path / "b" / "benchmark1")
    assert [p.name for p in first] == ["benchmark1.csv", "benchmark1.parquet"]
    for x, y in zip(first, again):
        assert x.read_bytes() == y.read_bytes(), x.name
    back = pd.read_parquet(first[1])
    assert list(back.columns) == list(frame.columns)
    assert back["flags"].tolist() == ["outliers: 1 of 6 beyond Tukey fences", ""]
    assert back["per_event_ns"].tolist() == [0.0, 150.72059]
    csv = pd.read_csv(first[0])
    assert csv["count"].tolist() == back["count"].tolist() == [20480, 20480]
