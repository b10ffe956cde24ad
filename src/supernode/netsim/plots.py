"""Plots of a run (matplotlib, Agg backend, PNG), drawn from the result tables only.

* ``utilization_<tier>.png``: heatmap of link utilisation over time for the busiest links
  of each tier (rows: links, columns: time bins; 0.8 marked on the colour bar).
* ``timeline.png``: per pipeline stage (or collective), when compute and each kind of
  communication ran (one collection per category: linear in the intervals).

Every user-supplied name drawn (job, collective) goes through
:func:`supernode.textsafe.plot_safe`; the set of files is written all or none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

from supernode.netsim.fluid import HOT_UTILIZATION  # noqa: E402
from supernode.outputs import output_errors, output_folder  # noqa: E402
from supernode.textsafe import plot_safe  # noqa: E402

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
        ax.set_ylabel(plot_safe(f"{tier} links (busiest first)"))
        ax.set_yticks([])
        ax.set_title(plot_safe(f"Link utilisation, tier {tier} ({util.shape[0]} busiest "
                               "links)"))
        path = directory / f"utilization_{tier}.png"
        fig.tight_layout()
        _save(fig, path)
        out.append(path)
    return out


#: Intervals of one lane and category closer than this share of the run are drawn as one
#: bar (finer than a pixel of the 11-inch, 110-dpi figure).
MERGE_FRACTION = 1 / 4000


def merged_intervals(lane: np.ndarray, cat: np.ndarray, start: np.ndarray, end: np.ndarray,
                     gap: float) -> tuple[np.ndarray, ...]:
    """Union of the intervals of each (lane, category), with gaps up to ``gap`` closed.

    Returns ``(lane, cat, start, end)`` arrays of the merged bars, sorted by lane,
    category and start. Vectorised: groups are laid end to end on one axis (offset by
    more than the whole run each), so one running maximum of the ends finds the breaks.
    """
    order = np.lexsort((start, cat, lane))
    lane, cat, start, end = lane[order], cat[order], start[order], end[order]
    group = np.concatenate([[0], np.cumsum((np.diff(lane) != 0) | (np.diff(cat) != 0))])
    width = float(np.max(end) - np.min(start)) + 2 * gap + 1.0
    offset = group * width - np.min(start)
    reach = np.maximum.accumulate(end + offset)
    breaks = np.concatenate([[True], (start[1:] + offset[1:] > reach[:-1] + gap)
                             | (group[1:] != group[:-1])])
    first = np.flatnonzero(breaks)
    ends = np.maximum.reduceat(end, first)
    return lane[first], cat[first], start[first], ends


def _bars(lane: np.ndarray, base: np.ndarray, height: np.ndarray, start: np.ndarray,
          end: np.ndarray) -> np.ndarray:
    """Rectangles as ``N x 4 x 2`` vertices (x in ms)."""
    y0 = lane + base
    y1 = y0 + height
    x0, x1 = start * 1e3, end * 1e3
    return np.stack([np.stack([x0, y0], 1), np.stack([x0, y1], 1),
                     np.stack([x1, y1], 1), np.stack([x1, y0], 1)], 1)


def plot_timeline(rows: list[tuple[str, str, str, float, float]], directory: Path,
                  max_lanes: int = 32) -> Path | None:
    """Gantt chart of compute and communication per lane; None when there is nothing.

    Drawn as one collection per category (not one artist per interval), with each lane's
    touching intervals merged, so the cost grows linearly with the rows.
    """
    if not rows:
        return None
    lanes = sorted({(job, lane) for job, lane, *_ in rows},
                   key=lambda x: (x[0], _lane_key(x[1])))[:max_lanes]
    index = {lane: i for i, lane in enumerate(lanes)}
    cats = sorted({r[2] for r in rows})
    cat_index = {c: k for k, c in enumerate(cats)}
    kept = [(index[(job, lane)], cat_index[cat], start, end)
            for job, lane, cat, start, end in rows if (job, lane) in index]
    lane_i, cat_i, start, end = (np.asarray(col) for col in zip(*kept, strict=True))
    span = float(np.max(end) - np.min(start))
    lane_i, cat_i, start, end = merged_intervals(lane_i, cat_i, start.astype(float),
                                                 end.astype(float), span * MERGE_FRACTION)
    fig, ax = plt.subplots(figsize=(11, 1.6 + 0.35 * len(lanes)))
    for k, c in enumerate(cats):
        pick = cat_i == k
        full = c in ("compute", "optimizer")
        base = np.full(int(pick.sum()), 0.0 if full else (k % 3) * 0.25)
        height = np.full(base.size, 0.8 if full else 0.25)
        ax.add_collection(PolyCollection(_bars(lane_i[pick], base, height, start[pick],
                                               end[pick]),
                                         facecolors=COLOURS.get(c, "#999999"), alpha=0.85,
                                         linewidths=0))
    lo, hi = float(np.min(start)) * 1e3, float(np.max(end)) * 1e3
    ax.set_xlim(lo, hi if hi > lo else lo + 1.0)
    ax.set_ylim(-0.1, len(lanes))
    ax.set_yticks([i + 0.4 for i in range(len(lanes))])
    ax.set_yticklabels([plot_safe(f"{job}: {lane}" if job else lane) for job, lane in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS.get(c, "#999999")) for c in cats]
    ax.legend(handles, [plot_safe(c) for c in cats], loc="upper center",
              bbox_to_anchor=(0.5, -0.12 - 0.6 / len(lanes)), fontsize=8,
              ncol=min(len(cats), 8), frameon=False)
    ax.set_title("Timeline of compute and communication")
    fig.tight_layout()
    path = directory / "timeline.png"
    _save(fig, path)
    return path


def _lane_key(lane: str) -> tuple:
    """Sort key of a lane name: numbers (ASCII digits) by value (``stage 10`` after
    ``stage 9``), words as text; mixed kinds compare by kind first."""
    return tuple((0, int(p), "") if p.isascii() and p.isdigit() and len(p) <= 18
                 else (1, 0, p) for p in lane.split())


def _save(fig: Any, path: Path) -> None:
    """Save ``fig`` as PNG into (a staging) ``path``; the figure is closed either way."""
    try:
        fig.savefig(path, dpi=110, format="png")
    finally:
        plt.close(fig)


def write_plots(tables: Any, directory: str | Path, option: str = "--plot",
                inputs: tuple[str | Path, ...] = ()) -> list[Path]:
    """Write every plot of a run's tables into ``directory``, all or none; return the files.

    The set is staged and moved into place at once (:func:`supernode.outputs.output_folder`):
    a path that is not a folder, a write that fails or a signal leaves ``directory`` as it
    was. Errors are :class:`InputError` at ``option``.
    """
    with output_folder(directory, option, inputs) as staging, \
            output_errors(directory, option):
        files = plot_heatmaps(tables.extra.get("heatmap", {}), staging)
        timeline = plot_timeline(tables.timeline, staging)
        names = [p.name for p in files + ([timeline] if timeline else [])]
    return [Path(directory) / name for name in names]
