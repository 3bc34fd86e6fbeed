"""Figures and tables: every figure function draws, exports are reproducible."""

from __future__ import annotations

import hashlib

import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from analysis import plots

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


@pytest.fixture
def long_table():
    return pd.DataFrame({
        "experiment": ["02 Kprobe", "02 Kprobe", "04 Tracepoint", "04 Tracepoint"],
        "tracer": ["bpftrace", "DTrace", "bpftrace", "DTrace"],
        "per_event_ns": [56.0, 280.0, 74.0, 76.0],
        "low": [50.0, 270.0, 70.0, 70.0],
        "high": [60.0, 290.0, 80.0, 80.0],
    })


def _figures(long_table):
    rng = np.random.default_rng(0)
    runs = pd.DataFrame({"experiment": ["a"] * 5 + ["b"] * 5, "run": list(range(5)) * 2,
                         "time_s": rng.normal(1, 0.01, 10)})
    return {
        "box": plots.box_plot({"none": rng.normal(15, 1, 100), "lttng": rng.normal(185, 5, 100),
                               "ftrace": {"med": 600, "q1": 590, "q3": 620, "whislo": 560,
                                          "whishi": 700, "fliers": [900]}},
                              ylabel="ns", log=True),
        "poly": plots.frequency_polygon({"ebpf": (np.arange(11.0), np.arange(10))},
                                        xlabel="ns"),
        "poly-panels": plots.frequency_polygon({"ebpf": (np.arange(11.0), np.arange(10)),
                                                "lttng": (np.arange(5.0), np.ones(4))},
                                               xlabel="ns", separate=True),
        "hist": plots.latency_histogram({"ftrace": ([10, 11, 12], [5, 50, 3])},
                                        overflows={"ftrace": 2}),
        "bars": plots.per_event_cost_bars(long_table, ci=("low", "high")),
        "heat": plots.slowdown_heatmap(pd.DataFrame({"bpftrace": [21.0, 28.0],
                                                     "DTrace": [121.0, 33.0]},
                                                    index=["Kprobe", "Tracepoint"])),
        "order": plots.run_order_plot(runs),
        "grid": plots.run_order_grid(runs, order="run", reference="a"),
    }


def test_every_figure_function_draws_a_thesis_width_figure(long_table):
    for name, fig in _figures(long_table).items():
        assert isinstance(fig, matplotlib.figure.Figure), name
        assert fig.get_size_inches()[0] <= plots.THESIS_WIDTH_IN + 1e-9, name
        plt.close(fig)


def test_one_colour_per_tracer_everywhere(long_table):
    # one colour per source: each published source has its own, in every figure
    sources = ["bpftrace (this machine)", "bpftrace (Gregg, 2019)", "bpftrace (Piotrowski)",
               "DTrace (Piotrowski)"]
    assert len({plots.tracer_color(s) for s in sources}) == 4
    assert plots.tracer_color("bpftrace (this machine)") == plots.tracer_color("bpftrace")
    assert plots.tracer_color("bpftrace") == plots.tracer_color("eBPF")
    assert plots.tracer_color("ftrace") != plots.tracer_color("bpftrace")  # substring trap
    # a published source never wears a tracer's colour: a DTrace campaign measured here
    # must not look like Piotrowski's published DTrace figures
    tracers = {plots.tracer_color(t) for t in ("bpftrace", "dtrace", "ftrace", "lttng", "none",
                                               "cadets")}
    published = {plots.tracer_color(s) for s in sources[1:]}
    assert len(tracers) == 6 and not tracers & published
    assert plots.tracer_color("dtrace (this machine)") == plots.tracer_color("dtrace")
    fig = plots.per_event_cost_bars(long_table)
    bars = [p for p in fig.axes[0].patches]
    assert matplotlib.colors.to_hex(bars[0].get_facecolor()) == plots.tracer_color("bpftrace").lower()
    plt.close(fig)


def test_save_figure_is_byte_identical_on_rerun_and_carries_provenance(tmp_path, long_table):
    source = tmp_path / "data.csv"
    source.write_text("a,b\n1,2\n")
    digests = []
    for _ in range(2):
        fig = plots.per_event_cost_bars(long_table)
        written = plots.save_figure(fig, "bars", sources=[source], figures_dir=tmp_path)
        assert [p.name for p in written] == ["bars.pdf", "bars.png"]
        digests.append([hashlib.sha256(p.read_bytes()).hexdigest() for p in written])
    assert digests[0] == digests[1]
    pdf = (tmp_path / "bars.pdf").read_bytes()
    assert b"CreationDate" not in pdf
    expected = hashlib.sha256(source.read_bytes()).hexdigest()[:16].encode()
    assert expected in pdf and expected in (tmp_path / "bars.png").read_bytes()
    with pytest.raises(ValueError):
        plots.save_figure(plots.box_plot({"a": [1, 2]}, ylabel="x"), "../escape",
                          figures_dir=tmp_path)


def test_latex_and_markdown_tables(tmp_path):
    df = pd.DataFrame({"Experiment": ["02 Kprobe_x & 50%"], "ns": [56.04], "n": [3]})
    tex = plots.table_to_latex(df, caption="Per-event cost", floatfmt=".1f")
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"02 Kprobe\_x \& 50\%" in tex and "56.0" in tex
    assert r"\begin{tabular}{lrr}" in tex
    md = plots.table_to_markdown(df)
    assert md.splitlines()[1] == "| :--- | ---: | ---: |"
    written = plots.export_table(df, "t", figures_dir=tmp_path)
    assert [p.name for p in written] == ["t.tex", "t.md"]
    assert written[0].read_text().startswith("% analysis ")
