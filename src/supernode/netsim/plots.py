"""Plots of a run (matplotlib, Agg backend, PNG), drawn from the result tables only.

Every plot aggregates, so drawing costs the same at 64 GPUs as at 131,072:

* ``utilization.png``: link utilisation over time, a panel per tier that carried traffic
  on one time axis and colour bar (a figure a tier cost half a panel more each): the tier
  as a whole, its busiest switches (each switch's links together) and its busiest links;
  every row labelled, hot rows (at or above 80 % for at least 1 % of the run) marked
  ``▲`` in red, 80 % marked on the colour bar;
* ``timeline.png``: when compute and each parallel dimension's communication ran: one
  lane per dimension (all ranks merged) above a sample of the pipeline stages (at most
  :data:`MAX_LANES`, first and last included), each drawn as one collection per
  category from merged intervals.

Every user-supplied name drawn (job, collective, link) goes through
:func:`supernode.textsafe.plot_safe`; each file has the same bytes for the same run
(:func:`supernode.plotting.save_png`). The set is written all or none by
:mod:`supernode.netsim.plot_files`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from supernode.netsim.fluid import HOT_UTILIZATION
from supernode.netsim.results import PARALLEL_DIMS
from supernode.plotting import (
    colour,
    hot_label,
    label_rows,
    legend_outside,
    save_png,
    stacked_axes,
)
from supernode.textsafe import plot_safe

#: Rows of the switch and link heatmaps (busiest first).
HEATMAP_ROWS = 12
#: Pipeline stages (or collectives) drawn in the timeline's lower panel.
MAX_LANES = 8
#: Timeline categories in lane order (others after them, alphabetically).
CATEGORY_ORDER = ("compute", "optimizer", *PARALLEL_DIMS, "communication")
#: Intervals of one lane and category closer than this share of the run are drawn as one
#: bar (finer than a pixel of the 11-inch, 110-dpi figure).
MERGE_FRACTION = 1 / 4000


def heat_rows(table: dict[str, Any], rows: int = HEATMAP_ROWS
              ) -> tuple[list[str], list[bool], list[bool], np.ndarray]:
    """The rows of one tier's heatmap: ``(labels, hot, header, utilisation)``.

    First the whole tier (every link in service), then a header and the busiest switches
    (their links of the tier together, with how many are hot), then a header and the
    busiest links; header rows have no data (NaN). Hot rows are marked ``▲``.
    """
    util = table["utilization"]
    names = table.get("links") or [f"link {i + 1}" for i in range(len(util))]
    count = table.get("link_count", len(names))
    bins = len(table["edges_s"]) - 1
    labels: list[str] = []
    hot: list[bool] = []
    header: list[bool] = []
    data: list[Any] = []

    def add(label: str, is_hot: bool, row: Any) -> None:
        labels.append(label)
        hot.append(is_hot)
        header.append(row is None)
        data.append(np.full(bins, np.nan) if row is None else row)

    if "mean" in table:
        add(plot_safe(f"whole tier: all {count:,} links"), False, table["mean"])
    sw = table.get("switches") or {}
    n = min(rows, len(sw.get("names", ())))
    if n:
        add(f"busiest {n} switches", False, None)
        for name, k, h, row in zip(sw["names"][:n], sw["links"][:n], sw["hot_links"][:n],
                                   sw["utilization"][:n], strict=True):
            add(hot_label(plot_safe(f"{name} ({k} links, {h} hot)"), h > 0), h > 0, row)
    n = min(rows, len(names))
    add(f"busiest {n} of {count:,} links", False, None)
    flags = list(table.get("hot", [False] * n))
    for name, h, row in zip(names[:n], flags[:n], util[:n], strict=True):
        add(hot_label(plot_safe(name), bool(h)), bool(h), row)
    return labels, hot, header, np.asarray(data, dtype=float)


def carried(table: dict[str, Any]) -> bool:
    """Whether a tier's heatmap table shows any traffic."""
    whole = np.asarray(table.get("mean", table["utilization"]))
    return bool(whole.size and np.any(whole > 0))


def _heat_panel(ax: Any, tier: str, edges_s: list[float],
                rows: tuple[list[str], list[bool], list[bool], np.ndarray]) -> Any:
    """Draw one tier's rows (from :func:`heat_rows`) on ``ax``; returns the mesh."""
    labels, hot, header, util = rows
    mesh = ax.pcolormesh(np.asarray(edges_s) * 1e3, np.arange(len(labels) + 1),
                         np.ma.masked_invalid(util), vmin=0.0, vmax=1.0, cmap="magma",
                         shading="flat")
    label_rows(ax, labels, hot, header)
    for i in np.flatnonzero(header).tolist():
        ax.axhspan(i, i + 1, color="white", zorder=2)
    ax.set_ylim(len(labels), 0)
    ax.set_title(plot_safe(f"tier {tier}"), fontsize=9, loc="left", y=1.0)
    return mesh


def plot_utilization(heat: dict[str, dict[str, Any]], path: Path, rows: int = HEATMAP_ROWS
                     ) -> Path | None:
    """Link utilisation over time: a panel per tier that carried traffic (whole tier,
    busiest switches, busiest links; see :func:`heat_rows`) on one time axis (ms) and
    one colour bar (utilisation 0..1, the hot line at 80 %); None when no tier carried
    anything."""
    panels = [(tier, table["edges_s"], heat_rows(table, rows))
              for tier, table in heat.items() if carried(table)]
    if not panels:
        return None
    fig, axes = stacked_axes([len(r[0]) for *_, r in panels],
                             max(len(t) for *_, r in panels for t in r[0]), row_in=0.19,
                             right_in=1.4, title_in=0.32)
    for ax, (tier, edges_s, r) in zip(axes, panels, strict=True):
        mesh = _heat_panel(ax, tier, edges_s, r)
    axes[-1].set_xlabel("time in the iteration (ms)")
    fig.suptitle("Link utilisation by tier", fontsize=10, y=1 - 0.12 / fig.get_figheight(),
                 va="top")
    first, last = axes[0].get_position(), axes[-1].get_position()
    cax = fig.add_axes((first.x1 + 0.015, last.y0, 0.012, first.y1 - last.y0))
    bar = fig.colorbar(mesh, cax=cax, label=f"utilisation (▲ hot: >= {HOT_UTILIZATION:.0%} "
                                            "for >= 1% of the run)")
    bar.ax.axhline(HOT_UTILIZATION, color="cyan", linewidth=1.5)
    return _save(fig, path)


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


def dimension(category: str) -> str:
    """The parallel dimension (or ``compute``, ``optimizer``...) a timeline category
    belongs to: ``tp all_gather`` -> ``tp``."""
    first = category.split(" ")[0]
    return first if first in PARALLEL_DIMS else category


def _category_key(name: str) -> tuple[int, str]:
    return (CATEGORY_ORDER.index(name) if name in CATEGORY_ORDER else len(CATEGORY_ORDER),
            name)


def sampled(items: list[Any], limit: int) -> list[Any]:
    """At most ``limit`` items spread evenly over ``items`` (first and last included)."""
    if len(items) <= limit:
        return list(items)
    picks = np.unique(np.round(np.linspace(0, len(items) - 1, limit)).astype(int))
    return [items[i] for i in picks.tolist()]


def _bars(lane: np.ndarray, base: np.ndarray, height: np.ndarray, start: np.ndarray,
          end: np.ndarray) -> np.ndarray:
    """Rectangles as ``N x 4 x 2`` vertices (x in ms)."""
    y0 = lane + base
    y1 = y0 + height
    x0, x1 = start * 1e3, end * 1e3
    return np.stack([np.stack([x0, y0], 1), np.stack([x0, y1], 1),
                     np.stack([x1, y1], 1), np.stack([x1, y0], 1)], 1)


def _draw_lanes(ax: Any, lane: np.ndarray, cat: np.ndarray, start: np.ndarray,
                end: np.ndarray, cats: list[str], stacked: bool) -> None:
    """One PolyCollection per category; ``stacked``: compute full height, each kind of
    communication in a third of the lane (so overlaps stay visible)."""
    from matplotlib.collections import PolyCollection

    for k, c in enumerate(cats):
        pick = cat == k
        if not pick.any():
            continue
        full = not stacked or dimension(c) in ("compute", "optimizer")
        slot = CATEGORY_ORDER.index(dimension(c)) if dimension(c) in CATEGORY_ORDER else k
        base = np.full(int(pick.sum()), 0.0 if full else (slot % 3) * 0.27)
        height = np.full(base.size, 0.8 if full else 0.26)
        # an N x 4 x 2 array (PolyCollection's fast path); the stubs ask for a Sequence
        ax.add_collection(PolyCollection(_bars(lane[pick], base, height, start[pick],  # type: ignore[arg-type]
                                               end[pick]),
                                         facecolors=colour(dimension(c)), alpha=0.9,
                                         linewidths=0), autolim=False)  # limits set


def _lane_arrays(rows: list[tuple[str, str, str, float, float]], key: Any,
                 lanes: list[Any], cats: list[str], gap: float) -> tuple[np.ndarray, ...]:
    index = {lane: i for i, lane in enumerate(lanes)}
    cat_index = {c: k for k, c in enumerate(cats)}
    kept = [(index[key(r)], cat_index[r[2]], r[3], r[4]) for r in rows if key(r) in index]
    if not kept:
        return tuple(np.zeros(0) for _ in range(4))
    lane, cat, start, end = (np.asarray(col) for col in zip(*kept, strict=True))
    return merged_intervals(lane, cat, start.astype(float), end.astype(float), gap)


def plot_timeline(rows: list[tuple[str, str, str, float, float]], directory: Path,
                  max_lanes: int = MAX_LANES) -> Path | None:
    """Timeline of compute and communication; None when there is nothing to draw.

    Upper panel: one lane per (job, parallel dimension), every rank's intervals merged,
    with the share of the run the dimension was busy. Lower panel: a sample of at most
    ``max_lanes`` pipeline stages (or collectives), each category in its own colour.
    The cost grows linearly with the rows (one sort, one collection per category).
    """
    if not rows:
        return None
    first = min(r[3] for r in rows)
    span = max(r[4] for r in rows) - first
    gap = span * MERGE_FRACTION
    cats = sorted({r[2] for r in rows}, key=lambda c: (_category_key(dimension(c)), c))
    dims = sorted({(r[0], dimension(r[2])) for r in rows},
                  key=lambda x: (x[0], _category_key(x[1])))
    dim_cats = sorted({d for _, d in dims}, key=_category_key)
    by_dim = [(r[0], r[1], dimension(r[2]), r[3], r[4]) for r in rows]
    d_lane, d_cat, d_start, d_end = _lane_arrays(by_dim, lambda r: (r[0], r[2]), dims,
                                                 dim_cats, gap)
    all_lanes = sorted({(r[0], r[1]) for r in rows}, key=lambda x: (x[0], _lane_key(x[1])))
    lanes = sampled(all_lanes, max_lanes)
    s_lane, s_cat, s_start, s_end = _lane_arrays(rows, lambda r: (r[0], r[1]), lanes, cats, gap)
    dim_labels = [plot_safe(f"{job + ': ' if job else ''}{d} (busy ") + "100%)"
                  for job, d in dims]
    lane_labels = [plot_safe(f"{job}: {lane}" if job else lane) for job, lane in lanes]
    fig, (top, bottom) = stacked_axes([len(dims), len(lanes)],
                                      max(len(t) for t in dim_labels + lane_labels),
                                      row_in=0.32, right_in=1.5)
    _draw_lanes(top, d_lane, d_cat, d_start, d_end, dim_cats, stacked=False)
    busy = np.bincount(d_lane.astype(int), weights=d_end - d_start, minlength=len(dims))
    label_rows(top, [plot_safe(f"{job + ': ' if job else ''}{d} (busy "
                               f"{busy[i] / max(span, 1e-300):.0%})")
                     for i, (job, d) in enumerate(dims)], fontsize=8, centre=0.4)
    top.set_title("by parallel dimension (all ranks merged)", fontsize=9, loc="left", y=1.0)
    _draw_lanes(bottom, s_lane, s_cat, s_start, s_end, cats, stacked=True)
    label_rows(bottom, lane_labels, fontsize=8, centre=0.4)
    shown = f"all {len(lanes)} shown" if len(lanes) == len(all_lanes) else \
        f"{len(lanes)} of {len(all_lanes)} shown (sampled evenly, first and last included)"
    bottom.set_title(f"each lane: {shown}", fontsize=9, loc="left", y=1.0)
    for ax, n in ((top, len(dims)), (bottom, len(lanes))):
        ax.set_ylim(-0.1, n)
        ax.invert_yaxis()
    lo, hi = first * 1e3, (first + span) * 1e3
    bottom.set_xlim(lo, hi if hi > lo else lo + 1.0)
    bottom.set_xlabel("time (ms)")
    from matplotlib.patches import Rectangle

    handles = [Rectangle((0, 0), 1, 1, color=colour(d)) for d in dim_cats]
    legend_outside(top, handles, [plot_safe(d) for d in dim_cats])
    fig.suptitle("Timeline of compute and communication", fontsize=10)
    return _save(fig, directory / "timeline.png")


def _save(fig: Any, path: Path) -> Path:
    """Write one figure (:func:`supernode.plotting.save_png`); the tests' hook."""
    return save_png(fig, path)


def _lane_key(lane: str) -> tuple:
    """Sort key of a lane name: numbers (ASCII digits) by value (``stage 10`` after
    ``stage 9``), words as text; mixed kinds compare by kind first."""
    return tuple((0, int(p), "") if p.isascii() and p.isdigit() and len(p) <= 18
                 else (1, 0, p) for p in lane.split())
