"""analysis.loaders.load_hyperfine on real exports of hyperfine 1.10, 1.11, 1.15 and 1.20."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import DataFormatError
from analysis.loaders import load_hyperfine, load_hyperfine_many
from conftest import FIXTURES, need_tool

HF = FIXTURES / "hyperfine"
ALL = sorted(HF.glob("*.json"))


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_one_row_per_timed_run_matching_hyperfines_own_summary(path):
    doc = json.loads(path.read_text())
    df = load_hyperfine(path)
    assert list(df.columns[:7]) == ["command", "run", "time_s", "user_s", "system_s",
                                    "exit_code", "memory_bytes"]
    assert len(df) == sum(len(r["times"]) for r in doc["results"])
    # hyperfine computed mean/min/max/median itself: an independent check of our rows
    start = 0
    for result in doc["results"]:
        n = len(result["times"])
        rows = df.iloc[start:start + n]
        start += n
        assert (rows["command"] == result["command"]).all()
        assert rows["run"].tolist() == list(range(n))
        assert rows["time_s"].mean() == pytest.approx(result["mean"], rel=1e-12)
        assert rows["time_s"].min() == pytest.approx(result["min"], rel=1e-12)
        assert rows["time_s"].max() == pytest.approx(result["max"], rel=1e-12)
        assert rows["time_s"].median() == pytest.approx(result["median"], rel=1e-12)
        assert (rows["user_s"] == result["user"]).all()
        if result.get("stddev") is not None:
            assert rows["time_s"].std(ddof=1) == pytest.approx(result["stddev"], rel=1e-9)
    assert df.attrs["source"] == str(path)


def test_old_single_parameter_becomes_a_named_column():
    df = load_hyperfine(HF / "v1.10-parameter-scan.json")
    assert df["param_parameter"].tolist() == ["10000"] * 3 + ["20000"] * 3
    named = load_hyperfine(HF / "v1.10-parameter-scan.json", parameter_name="count")
    assert "param_count" in named.columns and "param_parameter" not in named.columns
    # hyperfine 1.10 has no exit codes
    assert df["exit_code"].isna().all()


def test_parameters_map_gives_one_column_per_parameter():
    df = load_hyperfine(HF / "v1.11-parameter-list.json")
    assert {"param_bs", "param_count"} <= set(df.columns)
    assert set(zip(df["param_bs"], df["param_count"])) == {
        ("1", "10000"), ("1", "20000"), ("2", "10000"), ("2", "20000")}
    assert df["exit_code"].isna().all()  # before 1.12


def test_exit_codes_and_single_run_and_memory():
    failing = load_hyperfine(HF / "v1.15-failing-command.json")
    assert failing.loc[failing["command"] == "false", "exit_code"].tolist() == [1, 1, 1]
    assert failing.loc[failing["command"] == "true", "exit_code"].tolist() == [0, 0, 0]
    single = load_hyperfine(HF / "v1.15-single-run.json")
    assert len(single) == 1  # stddev is null in the file
    mem = load_hyperfine(HF / "v1.20-memory-usage.json")
    assert (mem["memory_bytes"] > 1_000_000).all()
    assert mem["exit_code"].tolist() == [0] * len(mem)
    assert mem["memory_bytes"].dtype == "Int64"


def test_exit_code_null_means_killed_by_a_signal(tmp_path):
    doc = json.loads((HF / "v1.15-failing-command.json").read_text())
    doc["results"][0]["exit_codes"] = [None, 1, None]
    path = tmp_path / "signal.json"
    path.write_text(json.dumps(doc))
    df = load_hyperfine(path)
    assert df["exit_code"].iloc[:3].isna().tolist() == [True, False, True]


def test_many_files_in_one_table_with_a_file_column():
    df = load_hyperfine_many(ALL)
    assert len(df) == sum(len(load_hyperfine(p)) for p in ALL)
    assert set(df["file"]) == {str(p) for p in ALL}
    # parameter columns from some files are NA for the rows of the others
    assert df["param_count"].isna().any() and df["param_count"].notna().any()


def test_a_fresh_export_of_the_installed_hyperfine(tmp_path):
    hyperfine = need_tool("hyperfine")
    out = tmp_path / "fresh.json"
    subprocess.run(
        [hyperfine, "--style", "none", "-N", "--runs", "3", "--export-json", str(out),
         "dd if=/dev/zero of=/dev/null bs=1 count=2000"],
        check=True, capture_output=True,
    )
    df = load_hyperfine(out)
    assert len(df) == 3 and (df["time_s"] > 0).all() and (df["exit_code"] == 0).all()


# ---------------------------------------------------------------- bad input

def _write(tmp_path, text, name="bad.json"):
    p = tmp_path / name
    p.write_text(text) if isinstance(text, str) else p.write_bytes(text)
    return p


@pytest.mark.parametrize("cut", [1, 10, 100, 300, -2])
def test_truncated_file_names_file_and_says_truncated(tmp_path, cut):
    text = (HF / "v1.15-two-commands.json").read_text()
    p = _write(tmp_path, text[:cut])
    with pytest.raises(DataFormatError) as exc:
        load_hyperfine(p)
    assert str(p) in str(exc.value)
    assert "truncated" in str(exc.value) or "not valid JSON" in str(exc.value)


@pytest.mark.parametrize(
    "text, field",
    [
        ("", None),
        ("   \n", None),
        ("[1, 2]", "<top level>"),
        ("{}", "results"),
        ('{"results": {}}', "results"),
        ('{"results": []}', "results"),
        ('{"results": [42]}', "results[0]"),
        ('{"results": [{"times": [1.0]}]}', "results[0].command"),
        ('{"results": [{"command": "x", "user": 0, "system": 0}]}', "results[0].times"),
        ('{"results": [{"command": "x", "times": "1.0", "user": 0, "system": 0}]}',
         "results[0].times"),
        ('{"results": [{"command": "x", "times": [1.0, "2"], "user": 0, "system": 0}]}',
         "results[0].times[1]"),
        ('{"results": [{"command": "x", "times": [true], "user": 0, "system": 0}]}',
         "results[0].times[0]"),
        ('{"results": [{"command": "x", "times": [-1.0], "user": 0, "system": 0}]}',
         "results[0].times[0]"),
        ('{"results": [{"command": "x", "times": [1.0], "user": "0", "system": 0}]}',
         "results[0].user"),
        ('{"results": [{"command": "x", "times": [1.0, 2.0], "user": 0, "system": 0, '
         '"exit_codes": [0]}]}', "results[0].exit_codes"),
        ('{"results": [{"command": "x", "times": [1.0], "user": 0, "system": 0, '
         '"exit_codes": [0.5]}]}', "results[0].exit_codes[0]"),
        ('{"results": [{"command": "x", "times": [1.0], "user": 0, "system": 0, '
         '"parameters": [1]}]}', "results[0].parameters"),
        ('{"results": [{"command": "x", "times": [NaN], "user": 0, "system": 0}]}', None),
        ('{"schema_version": 2, "results": []}', "schema_version"),
    ],
)
def test_wrong_schema_names_the_field(tmp_path, text, field):
    p = _write(tmp_path, text)
    with pytest.raises(DataFormatError) as exc:
        load_hyperfine(p)
    assert exc.value.path == str(p)
    assert exc.value.field == field
    assert str(p) in str(exc.value)


def test_missing_file_and_binary_garbage(tmp_path):
    with pytest.raises(DataFormatError, match="no such"):
        load_hyperfine(tmp_path / "absent.json")
    with pytest.raises(DataFormatError, match="UTF-8"):
        load_hyperfine(_write(tmp_path, b"\xff\xfe\x00garbage"))


# ---------------------------------------------------------------- fuzzing

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["results", "command", "times", "user", "system",
                                       "exit_codes", "parameters", "parameter", "mean",
                                       "stddev", "memory_usage_byte", "x"]), children,
                      max_size=6),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=json_values)
def test_fuzz_any_json_loads_or_raises_data_format_error(tmp_path, doc):
    p = _write(tmp_path, json.dumps(doc))
    try:
        df = load_hyperfine(p)
    except DataFormatError:
        return
    assert isinstance(df, pd.DataFrame) and len(df) > 0
    assert np.isfinite(df["time_s"]).all()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    source=st.sampled_from(ALL),
    cut=st.integers(0, 3000),
    pos=st.integers(0, 3000),
    byte=st.integers(0, 255),
)
def test_fuzz_damaged_real_files(tmp_path, source, cut, pos, byte):
    raw = bytearray(source.read_bytes())
    if pos < len(raw):
        raw[pos] = byte
    raw = bytes(raw[: cut or None])
    p = _write(tmp_path, raw)
    try:
        df = load_hyperfine(p)
    except DataFormatError as exc:
        assert str(p) in str(exc)
        return
    assert len(df) > 0


@pytest.mark.parametrize("folder, campaign, loader, controls", [
    ("dd-campaign-v1/raw", "dd-fixture", "dd.results", ["01-control"]),
    ("looper/data/raw", "t1", "looper.report", ["none", "startup"]),
    ("kbuild/data/raw", "kb-fixture", "kbuild.results", ["00"]),
])
def test_a_campaign_without_its_controls_runs_is_told_as_not_yet_far_enough(
        tmp_path, folder, campaign, loader, controls):
    """Every benchmark timed by hyperfine measures each cost against its control(s); a
    campaign cut off before they ran (real recorded campaigns, their control runs taken
    out) is told as such by the shared loader, naming what did finish, not with the
    statistics' 'control is not among the experiments'."""
    import importlib
    import shutil

    from analysis.campaign import Campaign
    from analysis.errors import CampaignError
    shutil.copytree(FIXTURES / folder / campaign, tmp_path / "raw" / campaign)
    load_runs = importlib.import_module(f"analysis.benchmarks.{loader}").load_runs
    assert set(controls) <= set(load_runs(Campaign.open(campaign, data_dir=tmp_path),
                                          "local")["experiment"])
    path = tmp_path / "raw" / campaign / "manifest.json"
    manifest = json.loads(path.read_text())
    runs = manifest["runs"]["local"]
    for run_id in [r for r, e in runs.items() if e["experiment"] in controls[-1:]]:
        del runs[run_id]
        shutil.rmtree(path.parent / "local" / run_id)
    path.write_text(json.dumps(manifest))
    with pytest.raises(CampaignError, match=rf"campaign {campaign} has no finished .* of "
                       rf"'{controls[-1]}' on local yet \(finished: .*\)") as err:
        load_runs(Campaign.open(campaign, data_dir=tmp_path), "local")
    assert "resume" in str(err.value)
