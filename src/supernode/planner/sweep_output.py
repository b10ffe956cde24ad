"""Write a sweep's results table (CSV, JSON, Parquet when available) and its plots.

The writers read the rows only (a lean core, docs/architecture.md: exporters never reach
into model internals).
Plots (:mod:`supernode.planner.sweep_plots`): for each swept key, step time and MFU
against its values: lines over a numeric key, bars over a categorical one, one series per
combination of the other keys (aggregated beyond eight). Swept values are user text:
every label goes through :func:`supernode.textsafe.plot_safe`.

:func:`write_results` writes the whole set (tables and plots) all or none
(:func:`supernode.outputs.output_folder`): a failure or a signal part-way leaves the
output folder as it was.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from supernode.jsontext import json_text
from supernode.outputs import output_errors, output_folder
from supernode.planner.sweep_run import METRIC_COLUMNS


def columns(keys: list[str]) -> list[str]:
    """Table columns: variant, the swept keys (spec order), then the metrics."""
    return ["variant", *keys, *METRIC_COLUMNS]


def _cell(value: Any) -> Any:
    if isinstance(value, list | dict):
        return json.dumps(value)
    return "" if value is None else value


def write_results(rows: list[dict[str, Any]], keys: list[str], meta: dict[str, Any],
                  out: str | Path, option: str = "--out",
                  inputs: tuple[str | Path, ...] = ()) -> list[Path]:
    """Tables and plots of a sweep into ``out``, all or none; returns the final paths.
    A failed write is an :class:`InputError` at ``option``."""
    with output_folder(out, option, inputs) as staging, output_errors(out, option):
        names = [p.name for p in _write_tables(rows, keys, meta, staging)
                 + _plot_axes(rows, keys, staging)]
    return [Path(out) / name for name in names]


def write_tables(rows: list[dict[str, Any]], keys: list[str], meta: dict[str, Any],
                 out: str | Path, option: str = "--out") -> list[Path]:
    """``results.csv`` and ``results.json`` always; ``results.parquet`` if pandas and
    pyarrow are importable (all or none). Returns the paths written; a failed write is an
    :class:`InputError` at ``option``."""
    with output_folder(out, option) as staging, output_errors(out, option):
        names = [p.name for p in _write_tables(rows, keys, meta, staging)]
    return [Path(out) / name for name in names]


def _write_tables(rows: list[dict[str, Any]], keys: list[str], meta: dict[str, Any],
                  out: Path) -> list[Path]:
    """The tables, written into ``out`` (a staging folder)."""
    cols = columns(keys)
    csv_path = out / "results.csv"
    text = json_text({"meta": meta, "columns": cols, "rows": rows}) + "\n"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=cols, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _cell(row.get(c)) for c in cols})
    json_path = out / "results.json"
    json_path.write_text(text, encoding="utf-8")
    paths = [csv_path, json_path]
    parquet = _write_parquet(rows, cols, out / "results.parquet")
    if parquet:
        paths.append(parquet)
    return paths


def _write_parquet(rows: list[dict[str, Any]], cols: list[str], path: Path) -> Path | None:
    try:
        import pandas as pd
        import pyarrow  # noqa: F401
    except ImportError:
        return None
    frame = pd.DataFrame([{c: _cell(r.get(c)) for c in cols} for r in rows], columns=cols)
    frame.to_parquet(path)
    return path


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", key).strip("_")


def plot_axes(rows: list[dict[str, Any]], keys: list[str], out: str | Path,
              option: str = "--out") -> list[Path]:
    """One PNG per swept key: step time and MFU against it (all or none). Returns the
    paths; a failed write is an :class:`InputError` at ``option``."""
    with output_folder(out, option) as staging, output_errors(out, option):
        names = [p.name for p in _plot_axes(rows, keys, staging)]
    return [Path(out) / name for name in names]


def _plot_axes(rows: list[dict[str, Any]], keys: list[str], out: Path) -> list[Path]:
    """One PNG per swept key (:func:`supernode.planner.sweep_plots.plot_key`)."""
    from supernode.planner.sweep_plots import plot_key
    from supernode.plotting import save_png

    return [save_png(plot_key(rows, keys, key), out / f"plot_{_slug(key)}.png")
            for key in keys]
