"""Plots of a run (matplotlib, Agg backend, PNG), drawn from the result tables only.

* ``utilization_<tier>.png``: heatmap of link utilisation over time for the busiest links
  of each tier (rows: links, columns: time bins; 0.8 marked on the colour bar).
* ``timeline.png``: per pipeline stage (or collective), when compute and each kind of
  communication ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from supernode.netsim.fluid import HOT_UTILIZATION  # noqa: E402
from supernode.outputs import atomic_path, check_output_folder, output_errors  # noqa: E402

#: Colours of timeline categories (anything else: grey).
COLOURS = {"compute": "#4c72b0", "optimizer": "#8172b3", "tp": "#dd8452", "cp": "#937860",
           "ep": "#c44e52", "pp": "#55a868", "dp": "#da8bc3", "dp_expert": "#da8bc3",
           "communication": "#dd8452"}


def plot_heatmaps(heat: dict[str, dict[str, Any]], directory: Path) -> list[Path]:
    """One utilisation heatmap per tier; returns the files written."""
    out = []
    for tier, table in heat.items():
        util = np.asarray(table["utilization"])
        if util.size == 0 or not np.any(util > 0):
            continue
        edges = np.asarray(table["edges_s"]) * 1e3
        fig, ax = plt.subplots(figsize=(9, 0.5 + 0.12 * util.shape[0] + 1.5))
        mesh = ax.pcolormesh(edges, np.arange(util.shape[0] + 1), util, vmin=0.0, vmax=1.0,
                             cmap="magma", shading="flat")
        bar = fig.colorbar(mesh, ax=ax, label="utilisation")
        bar.ax.axhline(HOT_UTILIZATION, color="cyan", linewidth=1.5)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel(f"{tier} links (busiest first)")
        ax.set_yticks([])
        ax.set_title(f"Link utilisation, tier {tier} ({util.shape[0]} busiest links)")
        path = directory / f"utilization_{tier}.png"
        fig.tight_layout()
        _save(fig, path)
        out.append(path)
    return out


def plot_timeline(rows: list[tuple[str, str, str, float, float]], directory: Path,
                  max_lanes: int = 32) -> Path | None:
    """Gantt chart of compute and communication per lane; None when there is nothing."""
    if not rows:
        return None
    lanes = sorted({(job, lane) for job, lane, *_ in rows},
                   key=lambda x: (x[0], _lane_key(x[1])))[:max_lanes]
    index = {lane: i for i, lane in enumerate(lanes)}
    cats = sorted({r[2] for r in rows})
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.35 * len(lanes)))
    offsets = {c: (k % 3) * 0.25 for k, c in enumerate(cats)}
    for job, lane, cat, start, end in rows:
        key = (job, lane)
        if key not in index:
            continue
        y = index[key] + (0.0 if cat in ("compute", "optimizer") else offsets[cat])
        height = 0.8 if cat in ("compute", "optimizer") else 0.25
        ax.broken_barh([(start * 1e3, (end - start) * 1e3)], (y, height),
                       facecolors=COLOURS.get(cat, "#999999"), alpha=0.85)
    ax.set_yticks([i + 0.4 for i in range(len(lanes))])
    ax.set_yticklabels([f"{job}: {lane}" if job else lane for job, lane in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS.get(c, "#999999")) for c in cats]
    ax.legend(handles, cats, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.6 / len(lanes)),
              fontsize=8, ncol=min(len(cats), 8), frameon=False)
    ax.set_title("Timeline of compute and communication")
    fig.tight_layout()
    path = directory / "timeline.png"
    _save(fig, path)
    return path


def _lane_key(lane: str) -> tuple:
    parts = lane.split()
    return tuple(int(p) if p.isdigit() else p for p in parts)


def _save(fig: Any, path: Path) -> None:
    """Save ``fig`` as PNG through a temporary file: no half-written plot is left."""
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png")
    finally:
        plt.close(fig)


def write_plots(tables: Any, directory: str | Path, option: str = "--plot") -> list[Path]:
    """Write every plot of a run's tables into ``directory``; return the files.

    A path that is not a folder, or a write that fails, is an :class:`InputError` at
    ``option``.
    """
    directory = check_output_folder(directory, option)
    with output_errors(directory, option):
        directory.mkdir(parents=True, exist_ok=True)
        files = plot_heatmaps(tables.extra.get("heatmap", {}), directory)
        timeline = plot_timeline(tables.timeline, directory)
    return files + ([timeline] if timeline else [])
