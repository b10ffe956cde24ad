"""Write a sweep's results table (CSV, JSON, Parquet when available) and its plots.

The writers read the rows only (STYLE §12: exporters never reach into model internals).
Plots: for each swept key, step time and MFU against its values, one line per
combination of the other keys (categorical x for non-numeric values).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from supernode.outputs import atomic_path, check_output_folder, output_errors
from supernode.planner.sweep_run import METRIC_COLUMNS

MAX_LINES_WITH_LEGEND = 8


def columns(keys: list[str]) -> list[str]:
    """Table columns: variant, the swept keys (spec order), then the metrics."""
    return ["variant", *keys, *METRIC_COLUMNS]


def _cell(value: Any) -> Any:
    if isinstance(value, list | dict):
        return json.dumps(value)
    return "" if value is None else value


def write_tables(rows: list[dict[str, Any]], keys: list[str], meta: dict[str, Any],
                 out: Path, option: str = "--out") -> list[Path]:
    """``results.csv`` and ``results.json`` always; ``results.parquet`` if pandas and
    pyarrow are importable. Returns the paths written; a failed write is an
    :class:`InputError` at ``option``."""
    out = check_output_folder(out, option)
    with output_errors(out, option):
        return _write_tables(rows, keys, meta, out)


def _write_tables(rows: list[dict[str, Any]], keys: list[str], meta: dict[str, Any],
                  out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    cols = columns(keys)
    csv_path = out / "results.csv"
    text = json.dumps({"meta": meta, "columns": cols, "rows": rows}, indent=2,
                      allow_nan=False) + "\n"
    with atomic_path(csv_path) as tmp, tmp.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=cols, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _cell(row.get(c)) for c in cols})
    json_path = out / "results.json"
    with atomic_path(json_path) as tmp:
        tmp.write_text(text, encoding="utf-8")
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
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp)
    return path


def _label(value: Any) -> str:
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", key).strip("_")


def plot_axes(rows: list[dict[str, Any]], keys: list[str], out: Path,
              option: str = "--out") -> list[Path]:
    """One PNG per swept key: step time and MFU against it. Returns the paths; a failed
    write is an :class:`InputError` at ``option``."""
    with output_errors(out, option):
        return _plot_axes(rows, keys, out)


def _plot_axes(rows: list[dict[str, Any]], keys: list[str], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if r.get("status") == "ok"]
    paths = []
    for key in keys:
        values = list(dict.fromkeys(_label(r.get(key)) for r in rows))
        numeric = all(isinstance(r.get(key), int | float) and not isinstance(r.get(key), bool)
                      for r in rows)
        others = [k for k in keys if k != key]
        lines: dict[str, list[dict[str, Any]]] = {}
        for r in ok:
            name = ", ".join(f"{k}={_label(r.get(k))}" for k in others) or "all"
            lines.setdefault(name, []).append(r)
        fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4))
        for name, group in lines.items():
            group = sorted(group, key=lambda r: r[key] if numeric else values.index(
                _label(r.get(key))))
            xs = [r[key] if numeric else values.index(_label(r.get(key))) for r in group]
            ax_t.plot(xs, [r["step_time_s"] for r in group], marker="o", label=name)
            ax_m.plot(xs, [100 * r["mfu"] for r in group], marker="o", label=name)
        for ax, title in ((ax_t, "step time (s)"), (ax_m, "MFU (%)")):
            ax.set_xlabel(key)
            ax.set_title(title)
            ax.grid(True, alpha=0.3)
            if not numeric:
                ax.set_xticks(range(len(values)), values, rotation=30, ha="right")
        if 1 < len(lines) <= MAX_LINES_WITH_LEGEND:
            ax_m.legend(fontsize=7)
        fig.tight_layout()
        path = out / f"plot_{_slug(key)}.png"
        try:
            with atomic_path(path) as tmp:
                fig.savefig(tmp, dpi=110, format="png")
        finally:
            plt.close(fig)
        paths.append(path)
    return paths
