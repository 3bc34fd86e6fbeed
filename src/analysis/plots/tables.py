"""Tables: LaTeX (booktabs) and Markdown for a thesis page, CSV + Parquet in full, all with
provenance and the caveat in force."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import paths
from analysis.plots.export import provenance
from analysis.plots.style import MAX_TABLE_COLUMNS, caveat, unexplained_marks
from analysis.storage import atomic_write

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "µ": r"$\mu$", "≥": r"$\geq$", "≤": r"$\leq$", "−": r"$-$",
    "<": r"\textless{}", ">": r"\textgreater{}",
}
_UNITS = {"ns": "ns", "us": "us", "ms": "ms", "s": "s", "pct": "%", "pp": "pp"}
_SPEC = re.compile(r"^(?P<head>[<>^=]?[+\- ]?#?0?\d*)(?P<sep>[,_]?)(?P<prec>\.\d+)?"
                   r"(?P<type>[fd%]?)$")
_NUMBER_TEXT = re.compile(r"^(--|[<>≥≤]?=?[-+−]?\d*\.?\d+%?(\[.*\]|±.*)?)$")


def human_name(column) -> str:
    """A column name for a reader: ``per_event_ns`` -> ``Per event (ns)``,
    ``slowdown_pct`` -> ``Slowdown (%)``; names that are not snake_case stay as they are."""
    text = str(column)
    if not re.fullmatch(r"[a-z][a-z0-9_.]*", text):
        return text
    parts = text.split("_")
    unit = _UNITS.get(parts[-1]) if len(parts) > 1 else None
    if unit:
        parts = parts[:-1]
    words = " ".join(parts)
    words = words[0].upper() + words[1:]
    return f"{words} ({unit})" if unit else words


def _thousands_spec(spec: str) -> str:
    """A fixed-point format spec with thousands separators (``.2f`` -> ``,.2f``);
    exponent formats (``g``, ``e``) are refused: a thesis table prints 51,200, not 5.12e+04."""
    m = _SPEC.match(spec)
    if not m:
        raise ValueError(f"format {spec!r}: use fixed decimals ('.1f', ',.0f', 'd', '.1%'), "
                         "not an exponent format")
    kind = m["type"] or "f"
    sep = m["sep"] or ","
    if kind == "%":
        sep = ""
    return f"{m['head']}{sep}{m['prec'] or ''}{kind}"


def format_number(value, spec: str = ".2f") -> str:
    """One cell: ``--`` for missing, integers with thousands separators, floats with the
    fixed decimals of ``spec`` and thousands separators; ``-0.0`` printed as ``0.0``."""
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating))
                                           and np.isnan(value)):
        return "--"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        if spec.endswith("%"):
            return format(float(value), _thousands_spec(spec))
        return format(int(value), ",d")
    if isinstance(value, (float, np.floating)):
        full = _thousands_spec(spec)
        if full.endswith("d"):
            full = full[:-1] + ".0f"
        text = format(float(value), full)
        if re.fullmatch(r"-[0.,]*%?", text):  # a negative number that rounds to zero
            text = text[1:]
        return text
    return str(value)


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _formatted(df: pd.DataFrame, floatfmt: str, formats: Mapping[str, str] | None,
               index: bool) -> tuple[list[str], list[list[str]], list[bool]]:
    """(header, rows of cell text, right-aligned per column) of a table for print."""
    frame = df.reset_index() if index else df
    specs = {c: (formats or {}).get(c, floatfmt) for c in frame.columns}
    rows = [[format_number(v, specs[c]) for c, v in zip(frame.columns, row)]
            for row in frame.itertuples(index=False)]
    right = []
    for j, c in enumerate(frame.columns):
        if pd.api.types.is_bool_dtype(frame[c]):
            right.append(False)
        elif pd.api.types.is_numeric_dtype(frame[c]):
            right.append(True)
        else:  # text that holds numbers ("1,234 [1,100, 1,300]", "12.5", "--") aligns right
            cells = [r[j] for r in rows]
            right.append(bool(cells) and all(_NUMBER_TEXT.match(re.sub(r"[\s,]", "", s))
                                             for s in cells)
                         and any(s != "--" for s in cells))
    return [human_name(c) for c in frame.columns], rows, right


def table_to_latex(df: pd.DataFrame, *, caption: str | None = None, label: str | None = None,
                   floatfmt: str = ".2f", index: bool = False,
                   formats: Mapping[str, str] | None = None) -> str:
    """A booktabs LaTeX table (needs ``\\usepackage{booktabs}``): numbers with fixed
    decimals (``floatfmt``, or per column ``formats``) and thousands separators, snake_case
    column names made readable (:func:`human_name`)."""
    head, rows, right = _formatted(df, floatfmt, formats, index)
    align = "".join("r" if r else "l" for r in right)
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule",
              " & ".join(_latex_escape(h) for h in head) + r" \\", r"\midrule"]
    for row in rows:
        lines.append(" & ".join(_latex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def table_to_markdown(df: pd.DataFrame, *, floatfmt: str = ".2f", index: bool = False,
                      formats: Mapping[str, str] | None = None) -> str:
    """A GitHub-flavoured Markdown table, formatted as :func:`table_to_latex`."""
    head, rows, right = _formatted(df, floatfmt, formats, index)
    align = ["---:" if r else ":---" for r in right]
    lines = ["| " + " | ".join(h.replace("|", r"\|") for h in head) + " |",
             "| " + " | ".join(align) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(v.replace("|", r"\|") for v in row) + " |")
    return "\n".join(lines) + "\n"


def _arrow_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Lists flattened to ``a; b`` text; object columns holding more than one kind of
    value (text and numbers) as text, so Parquet can type every column."""
    flat = frame.copy()
    for col in flat.columns:
        if flat[col].dtype != object:
            continue
        values = flat[col]
        if values.map(lambda v: isinstance(v, (list, tuple))).any():
            values = values.map(lambda v: "; ".join(map(str, v))
                                if isinstance(v, (list, tuple)) else v)
        kinds = {type(v) for v in values if v is not None and not (isinstance(v, float)
                                                                   and np.isnan(v))}
        if len(kinds) > 1 and not kinds <= {bool, np.bool_}:
            values = values.map(lambda v: None if v is None or (isinstance(v, float)
                                                                and np.isnan(v)) else str(v))
        flat[col] = values
    return flat


def write_frame(frame: pd.DataFrame, path_without_suffix: Path) -> list[Path]:
    """A full table as CSV and Parquet side by side (lists flattened to text),
    atomically. Both are byte-identical when the same table is written again (Parquet
    holds no timestamp; its footer names the pyarrow version, so a pyarrow upgrade
    changes the bytes, not the data)."""
    flat = _arrow_safe(frame)
    if caveat():
        flat = flat.assign(caveat=caveat())
    buf = io.BytesIO()
    flat.to_parquet(buf, index=False, engine="pyarrow", compression="snappy")
    base = Path(path_without_suffix)
    return [atomic_write(base.with_suffix(".csv"), flat.to_csv(index=False)),
            atomic_write(base.with_suffix(".parquet"), buf.getvalue())]


def export_table(
    df: pd.DataFrame,
    name: str,
    *,
    caption: str | None = None,
    floatfmt: str = ".2f",
    formats: Mapping[str, str] | None = None,
    index: bool = False,
    sources: Sequence[str | Path] = (),
    figures_dir: str | Path | None = None,
    max_columns: int = MAX_TABLE_COLUMNS,
) -> list[Path]:
    """Write ``<figures_dir>/<name>.tex`` (booktabs) and ``<name>.md``, with provenance.

    A thesis table: at most ``max_columns`` columns (split a wider one, or pick the
    essential columns and leave the full table to :func:`write_frame`), fixed decimals
    (``floatfmt``, or per column ``formats``; exponent formats are refused), thousands
    separators, readable column names."""
    frame = df.reset_index() if index else df
    if frame.shape[1] > max_columns:
        raise ValueError(f"table {name!r} has {frame.shape[1]} columns; a thesis table holds "
                         f"at most {max_columns}: split it, or keep the essential columns "
                         "(the full table belongs in CSV/Parquet)")
    head, rows, _ = _formatted(frame, floatfmt, formats, False)
    marks = unexplained_marks([*head, *(v for r in rows for v in r)], caption or "")
    if marks:
        raise ValueError(f"table {name!r} shows {', '.join(marks)} but its caption never says "
                         f"what it means: add e.g. '{marks[0]} = ...' to the caption")
    out = paths.figures_dir(figures_dir)
    prov = provenance(sources, caveat())
    if caveat():
        caption = f"{caption} ({caveat()})" if caption else caveat()
    tex = f"% {prov}\n" + table_to_latex(frame, caption=caption, label=f"tab:{name}",
                                         floatfmt=floatfmt, formats=formats)
    md = f"<!-- {prov} -->\n" + (f"**{caveat()}**\n\n" if caveat() else "") + \
        table_to_markdown(frame, floatfmt=floatfmt, formats=formats) + \
        (f"\nTable: {caption}\n" if caption else "")  # the caption, marks explained, below
    return [atomic_write(out / f"{name}.tex", tex), atomic_write(out / f"{name}.md", md)]
