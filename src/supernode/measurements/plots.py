"""Plots of a comparison (matplotlib, Agg backend, PNG), drawn from the report's rows only.

``compare_<n>_<op>.png``: busbw against message size (log scale), measured and predicted,
with the binding tier's line rate (in busbw) dashed; the legend beside the data, no software
stamp in the file (identical rows, identical bytes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supernode.outputs import atomic_path
from supernode.plotting import legend_outside, pyplot, save_png
from supernode.textsafe import plot_safe


def plot_collective(index: int, entry: dict[str, Any], directory: Path) -> Path:
    """Measured vs predicted busbw of one comparison entry (``report.collective_dict``)."""
    rows = entry["rows"]
    sizes = [r["message_bytes"] for r in rows]
    fig, ax = pyplot().subplots(figsize=(9, 4.2))
    ax.plot(sizes, [r["measured_busbw_gbyte_per_s"] for r in rows], "o-", label="measured")
    ax.plot(sizes, [r["predicted_busbw_gbyte_per_s"] for r in rows], "s--", label="model")
    bounds: dict[str, list[float]] = {}
    for r in rows:
        for b in r["line_rates"]:
            bounds.setdefault(b["tier"], []).append(b["line_rate_busbw_gbyte_per_s"])
    binding = rows[-1]["line_rate_tier"]
    ax.plot(sizes, bounds[binding], ":", color="grey",
            label=f"line rate ({plot_safe(binding)})")
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    job = entry["job"]
    ax.set_title(plot_safe(f"{Path(entry['source']).name}: {entry['op']}, {job['ranks']} ranks, "
                           f"{job['domains']} domain(s)"), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)
    fig.tight_layout()
    path = directory / f"compare_{index}_{entry['op']}.png"
    with atomic_path(path) as tmp:
        save_png(fig, tmp)
    return path
