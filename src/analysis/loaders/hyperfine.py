"""hyperfine ``--export-json`` files as tidy tables: one row per timed run.

Handles every 1.x format in use:

* ``parameters`` (a name -> value map, hyperfine >= 1.11) and the older single
  ``parameter`` value (1.6 - 1.10; the file does not say the parameter's name,
  so it becomes ``param_<parameter_name>``, by default ``param_parameter``);
* ``exit_codes`` missing (before 1.12) -> ``exit_code`` is NA; ``null`` entries
  (killed by a signal) -> NA;
* ``stddev`` ``null`` (a single run);
* ``memory_usage_byte`` (1.20) -> ``memory_bytes`` (NA when absent).

hyperfine exports user and system time only as means over the runs, so
``user_s`` and ``system_s`` repeat the benchmark's mean on each of its rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import DataFormatError, NothingFinished
from analysis.loaders.jsonio import read_json, require

COLUMNS = ["command", "run", "time_s", "user_s", "system_s", "exit_code", "memory_bytes"]


def load_hyperfine(path: str | Path, *, parameter_name: str = "parameter") -> pd.DataFrame:
    """Load one hyperfine JSON export: one row per timed run.

    Columns: ``command, run`` (0-based), ``time_s, user_s, system_s, exit_code,
    memory_bytes`` and ``param_<name>`` for each hyperfine parameter.
    Raises :class:`analysis.DataFormatError` naming the file and field on bad input.
    """
    columns: dict[str, list] = {c: [] for c in COLUMNS}
    _parse_into(columns, Path(path), parameter_name)
    return _frame(columns, source=str(path))


def load_hyperfine_many(
    paths: Iterable[str | Path], *, parameter_name: str = "parameter"
) -> pd.DataFrame:
    """Load many exports into one table, with a ``file`` column naming each row's file.

    Faster than concatenating :func:`load_hyperfine` results: one DataFrame is
    built at the end.
    """
    columns: dict[str, list] = {c: [] for c in COLUMNS}
    columns["file"] = []
    for p in paths:
        before = len(columns["run"])
        _parse_into(columns, Path(p), parameter_name)
        columns["file"].extend([str(p)] * (len(columns["run"]) - before))
    return _frame(columns, source=None)


def load_blocks(camp, target: str, *, keep=None, label=None, extra=None,
                what: str = "runs", controls: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every timed run of a campaign's finished blocks (one ``hyperfine.json`` per run of
    the campaign): experiment, round, position, block (the run id), run, time_s, ...,
    in the order they ran. ``camp``: an :class:`analysis.campaign.Campaign`.

    ``keep(record)``: which finished runs are blocks (default: all); ``label(record)``: the
    experiment column (default: the run's experiment); ``extra(record, frame)``: columns
    added after ``experiment`` (before ``round``); ``what``: the runs named in the error
    when there is none; ``controls``: the experiments every cost is measured against,
    without which the campaign is told as not yet far enough, e.g. one cut off
    in its first round (:class:`analysis.errors.NothingFinished`)."""
    rows = []
    for run_id, entry in sorted(camp.run_records(target).items()):
        if entry.get("status") != "done" or (keep is not None and not keep(entry)):
            continue
        df = load_hyperfine(camp.run_dir(target, run_id) / "hyperfine.json")
        df["experiment"] = label(entry) if label is not None else entry["experiment"]
        if extra is not None:
            extra(entry, df)
        df["round"] = entry["params"]["round"]
        df["position"] = entry["params"]["position"]
        df["block"] = run_id
        rows.append(df)
    if not rows:
        raise NothingFinished(camp.name, f"finished {what} on {target}")
    done = list(dict.fromkeys(df["experiment"].iat[0] for df in rows if len(df)))
    missing = [c for c in controls if c not in done]
    if missing:
        raise NothingFinished(camp.name, f"finished {what} of {', '.join(map(repr, missing))} "
                              f"on {target} yet (finished: {', '.join(done)}), and every cost "
                              f"is measured against {'it' if len(missing) == 1 else 'them'}: "
                              "run the campaign again under the same name to resume it")
    runs = pd.concat(rows, ignore_index=True)
    return runs.sort_values(["round", "position", "run"], kind="stable").reset_index(drop=True)


def _frame(columns: dict[str, list], source: str | None) -> pd.DataFrame:
    n = len(columns["run"])
    data = {
        "command": pd.array(columns.pop("command"), dtype="string"),
        "run": np.asarray(columns.pop("run"), dtype=np.int64),
        "time_s": np.asarray(columns.pop("time_s"), dtype=np.float64),
        "user_s": np.asarray(columns.pop("user_s"), dtype=np.float64),
        "system_s": np.asarray(columns.pop("system_s"), dtype=np.float64),
        "exit_code": pd.array(columns.pop("exit_code"), dtype="Int64"),
        "memory_bytes": pd.array(columns.pop("memory_bytes"), dtype="Int64"),
    }
    file_col = columns.pop("file", None)
    for name in sorted(columns):  # parameter columns, padded with NA
        values = columns[name]
        data[name] = pd.array(values + [None] * (n - len(values)), dtype="string")
    if file_col is not None:
        data["file"] = pd.array(file_col, dtype="string")
    frame = pd.DataFrame(data)
    if source is not None:
        frame.attrs["source"] = source
    return frame


def _parse_into(columns: dict[str, list], path: Path, parameter_name: str) -> None:
    doc = read_json(path, "hyperfine")
    require(doc, dict, path, "<top level>")
    if "schema_version" in doc:  # hyperfine 2.0's new export format
        raise DataFormatError(path, "schema_version", f"hyperfine 2 JSON (schema version "
                              f"{doc['schema_version']!r}) is not supported yet; export with 1.x")
    if "results" not in doc:
        raise DataFormatError(path, "results", "missing: not a hyperfine --export-json file")
    results = require(doc["results"], list, path, "results")
    if not results:
        raise DataFormatError(path, "results", "empty: the export holds no benchmark")
    for i, result in enumerate(results):
        where = f"results[{i}]"
        require(result, dict, path, where)
        command = require(result.get("command"), str, path, f"{where}.command")
        times = _numbers(result.get("times"), path, f"{where}.times")
        if not times:
            raise DataFormatError(path, f"{where}.times", "empty: no timed run")
        n = len(times)
        user = _number(result.get("user"), path, f"{where}.user")
        system = _number(result.get("system"), path, f"{where}.system")
        _check_summary(result, path, where)
        exit_codes = _optional_ints(result, "exit_codes", n, path, where)
        memory = _optional_ints(result, "memory_usage_byte", n, path, where)
        params = _parameters(result, path, where, parameter_name)

        columns["command"].extend([command] * n)
        columns["run"].extend(range(n))
        columns["time_s"].extend(times)
        columns["user_s"].extend([user] * n)
        columns["system_s"].extend([system] * n)
        columns["exit_code"].extend(exit_codes)
        columns["memory_bytes"].extend(memory)
        rows_before = len(columns["run"]) - n
        for name, value in params.items():
            col = columns.setdefault(f"param_{name}", [])
            col.extend([None] * (rows_before - len(col)))
            col.extend([value] * n)


def _number(value, path: Path, field: str) -> float:
    require(value, (int, float), path, field)
    if not np.isfinite(value):
        raise DataFormatError(path, field, f"not a finite number: {value!r}")
    return float(value)


def _numbers(values, path: Path, field: str) -> list[float]:
    if values is None:
        raise DataFormatError(path, field, "missing: the export has no per-run times")
    require(values, list, path, field)
    out = []
    for j, v in enumerate(values):
        x = _number(v, path, f"{field}[{j}]")
        if x < 0:
            raise DataFormatError(path, f"{field}[{j}]", f"negative time {x}")
        out.append(x)
    return out


def _check_summary(result: dict, path: Path, where: str) -> None:
    for key in ("mean", "median", "min", "max"):
        if key in result:
            _number(result[key], path, f"{where}.{key}")
    stddev = result.get("stddev")
    if stddev is not None:  # null with a single run
        _number(stddev, path, f"{where}.stddev")


def _optional_ints(result: dict, key: str, n: int, path: Path, where: str) -> list:
    if key not in result or result[key] is None:
        return [None] * n
    values = require(result[key], list, path, f"{where}.{key}")
    if len(values) != n:
        raise DataFormatError(
            path, f"{where}.{key}", f"has {len(values)} entries for {n} timed runs"
        )
    out = []
    for j, v in enumerate(values):
        if v is None:
            out.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            raise DataFormatError(path, f"{where}.{key}[{j}]", f"expected integer, found {v!r}")
        out.append(v)
    return out


def _parameters(result: dict, path: Path, where: str, parameter_name: str) -> dict[str, str]:
    if "parameters" in result and result["parameters"] is not None:
        params = require(result["parameters"], dict, path, f"{where}.parameters")
        out = {}
        for name, value in params.items():
            require(value, (str, int, float), path, f"{where}.parameters.{name}")
            out[str(name)] = str(value)
        return out
    if "parameter" in result and result["parameter"] is not None:
        value = require(result["parameter"], (str, int, float), path, f"{where}.parameter")
        return {parameter_name: str(value)}
    return {}
