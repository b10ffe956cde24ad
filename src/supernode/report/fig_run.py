"""Figures of the plans and of the simulated iteration, drawn from the results only.

Plots scale: the heatmap shows the simulator's busiest links per tier (at most 16 rows,
labelled, hot ones marked), and the timeline one lane per parallel dimension from the
merged intervals, so drawing never grows with the number of GPUs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.report.figbase import COLOURS, HOT, figure, safe, subplots, svg_of

BREAKDOWN = ("compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm",
             "pipeline_bubble", "optimizer", "other")


def comm_compute_svg(plans: dict[str, Any]) -> str | None:
    """Step breakdown per plan (stacked bars) and communication share against the line."""
    rows = plans["plans"]
    if not rows:
        return None
    fig, axes = subplots(1, 2, 11, 1.4 + 0.45 * len(rows),
                         gridspec_kw={"width_ratios": [3, 2]})
    ax, bx = axes[0]
    labels = [f"#{p['rank']} TP{p['tp']} PP{p['pp']} DP{p['dp']} CP{p['cp']} EP{p['ep']}"
              for p in rows]
    y = np.arange(len(rows))
    left = np.zeros(len(rows))
    for key in BREAKDOWN:
        width = np.array([p["breakdown_s"].get(key, 0.0) for p in rows])
        if np.any(width > 0):
            ax.barh(y, width, left=left, color=COLOURS.get(key, "#999999"), label=key)
            left += width
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per step")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=5, fontsize=7,
              frameon=False)
    ax.set_title("Where the step goes", fontsize=10)
    share = [p["comm_compute"]["share"] for p in rows]
    line = rows[0]["comm_compute"]["threshold"]
    bx.barh(y, share, color=[HOT if s > line else "#4c72b0" for s in share])
    bx.axvline(line, color="black", linestyle="--", linewidth=1,
               label=f"seeds' {line:.0%} line")
    bx.legend(loc="lower right", fontsize=7)
    bx.set_yticks(y, [""] * len(rows))
    bx.invert_yaxis()
    bx.set_xlabel("communication / (compute + communication)")
    bx.set_title("Communication share per card", fontsize=10)
    return svg_of(fig)


def heatmap_svg(sim: dict[str, Any], hot_line: float) -> str | None:
    """Link utilisation over time, per tier: busiest links labelled, hot ones marked."""
    heat = sim.get("heatmap") or {}
    tiers = [t for t, v in heat.items() if np.any(np.asarray(v["utilization"]) > 0)]
    if not tiers:
        return None
    heights = [len(heat[t]["links"]) for t in tiers]
    fig, axes = subplots(len(tiers), 1, 10, 1.2 + 0.19 * sum(heights) + 0.5 * len(tiers),
                         gridspec_kw={"height_ratios": heights})
    mesh = None
    for ax, tier in zip(axes[:, 0], tiers, strict=True):
        table = heat[tier]
        util = np.asarray(table["utilization"])
        edges = np.asarray(table["edges_s"]) * 1e3
        mesh = ax.pcolormesh(edges, np.arange(util.shape[0] + 1), util, vmin=0, vmax=1,
                             cmap="magma", shading="flat")
        ax.set_yticks(np.arange(util.shape[0]) + 0.5,
                      [("▲ " if h else "") + safe(n) for n, h in
                       zip(table["links"], table["hot"], strict=True)], fontsize=6)
        for label, hot in zip(ax.get_yticklabels(), table["hot"], strict=True):
            if hot:
                label.set_color(HOT)
        ax.invert_yaxis()
        ax.set_ylabel(tier, fontsize=8)
    axes[-1, 0].set_xlabel("time in the iteration (ms)")
    axes[0, 0].set_title(f"Link utilisation over the simulated iteration (busiest links per "
                         f"tier; ▲ hot: >= {hot_line:.0%} for >= 1% of the run)", fontsize=9)
    bar = fig.colorbar(mesh, ax=axes[:, 0].tolist(), label="utilisation", fraction=0.03)
    bar.ax.axhline(hot_line, color="cyan", linewidth=1.5)
    return svg_of(fig)


def timeline_svg(sim: dict[str, Any]) -> str | None:
    """When compute and each parallel dimension's communication ran (merged lanes); the
    group row ``communication`` is the union of the communication rows above it."""
    tl = sim.get("timeline_by_dimension") or {}
    lanes = tl.get("lanes") or {}
    if not lanes:
        return None
    fig, ax = figure(10, 0.9 + 0.4 * len(lanes))
    for i, (name, lane) in enumerate(lanes.items()):
        spans = [(s * 1e3, (e - s) * 1e3) for s, e in lane["intervals"]]
        ax.broken_barh(spans, (i - 0.35, 0.7), facecolors=COLOURS.get(name, "#999999"))
    ax.set_yticks(range(len(lanes)), [
        f"{n} ({'any part, ' if lane.get('parts') else ''}{lane['busy_share']:.0%} busy)"
        for n, lane in lanes.items()], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("time in the iteration (ms)")
    ax.set_title("Timeline by parallel dimension (all ranks merged)", fontsize=10)
    return svg_of(fig)


def hot_links_svg(sim: dict[str, Any]) -> str | None:
    """Share of the run each of the hottest links spent above the line (bars)."""
    rows = sim["hot_links"][:10]
    if not rows:
        return None
    fig, ax = figure(9, 0.9 + 0.3 * len(rows))
    y = np.arange(len(rows))
    ax.barh(y, [r["hot_share"] for r in rows], color=HOT)
    ax.set_yticks(y, [f"{safe(r['link'])} ({r['tier']})" for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("share of the iteration at or above the hot line")
    ax.set_title("Hottest links", fontsize=10)
    return svg_of(fig)
