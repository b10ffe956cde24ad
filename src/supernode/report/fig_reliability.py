"""Figures of the reliability section, drawn from ``results['reliability']`` only.

The goodput distribution is the Monte Carlo histogram (counts and bin edges as the model
stored them); the checkpoint-interval curve is the Monte Carlo mean goodput of each
interval the model scored; the components chart is failures and job interruptions per day.
No model is evaluated here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.ticker import NullFormatter

from supernode.report.figbase import HOT, figure, safe, svg_of

BAR, MEAN, ANALYTIC = "#4c72b0", "#1d2330", "#dd8452"


def goodput_svg(rel: dict[str, Any]) -> str | None:
    """Histogram of Monte Carlo goodput per run, with its mean, p5 and the analytic value."""
    mc = rel["goodput"]["monte_carlo"]
    counts, edges = mc["histogram"]["counts"], mc["histogram"]["edges"]
    if not counts:
        return None
    fig, ax = figure(9, 3.0)
    edges_a = np.asarray(edges)
    ax.bar(edges_a[:-1], counts, width=np.diff(edges_a), align="edge", color=BAR,
           edgecolor="white", linewidth=0.4, label="runs")
    g = mc["goodput"]
    marks = [(g["mean"], MEAN, "-", f"Monte Carlo mean {g['mean']:.4f}"),
             (g["p5"], HOT, ":", f"p5 {g['p5']:.4f}")]
    if rel["goodput"]["analytic"] is not None:
        a = rel["goodput"]["analytic"]
        marks.append((a, ANALYTIC, "--", f"analytic (Daly) {a:.4f}"))
    for value, colour, style, label in marks:
        ax.axvline(value, color=colour, linestyle=style, linewidth=1.4, label=label)
    ax.set_yscale("log")  # the few runs hit hard sit in a long left tail
    ax.set_ylim(0.7, max(counts) * 2.5)
    ax.set_xlabel("goodput of a run (kept progress / wall time)")
    ax.set_ylabel("runs (log scale)")
    ax.set_title(f"Goodput over {mc['runs']:,} simulated runs of "
                 f"{mc['horizon_s'] / 86_400:g} days", fontsize=10)
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    return svg_of(fig)


def interval_svg(rel: dict[str, Any]) -> str | None:
    """Monte Carlo mean goodput against the checkpoint interval; Young, Daly, best marked."""
    mc, c = rel["goodput"]["monte_carlo"], rel["checkpoint"]
    grid = np.asarray(mc["interval_grid_s"]) / 60
    if grid.size < 2:
        return None
    fig, ax = figure(9, 2.8)
    ax.plot(grid, mc["goodput_by_interval"], "o-", color=BAR, markersize=3,
            label="Monte Carlo mean")
    for key, name, colour, style in (("young_interval_s", "Young", "#55a868", ":"),
                                     ("daly_interval_s", "Daly", ANALYTIC, "--"),
                                     ("simulated_best_interval_s", "simulated best", MEAN,
                                      "-")):
        if c[key] is not None:
            ax.axvline(c[key] / 60, color=colour, linestyle=style, linewidth=1.2,
                       label=f"{name} {c[key] / 60:.3g} min")
    ax.set_xscale("log")
    ticks = grid[:: max(1, len(grid) // 5)]
    ax.set_xticks(ticks, [f"{t:.3g}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("checkpoint interval (minutes of work)")
    ax.set_ylabel("goodput")
    ax.set_title("Goodput against the checkpoint interval", fontsize=10)
    ax.legend(loc="lower center", fontsize=7, frameon=False, ncol=4)
    return svg_of(fig)


def components_svg(rel: dict[str, Any]) -> str | None:
    """Failures and job interruptions per day by component (bars)."""
    inter = rel["interruptions"]
    names = list(inter["failures_per_day_by_component"])
    if not names:
        return None
    fig, ax = figure(9, 0.9 + 0.28 * len(names))
    y = np.arange(len(names))
    ax.barh(y, [inter["failures_per_day_by_component"][n] for n in names], color="#bbbbbb",
            label="failures")
    ax.barh(y, [inter["interruptions_per_day_by_component"].get(n, 0.0) for n in names],
            height=0.5, color=HOT, label="job interruptions")
    ax.set_yticks(y, [safe(n) for n in names], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("per day")
    ax.set_title("Failures per day by component", fontsize=10)
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    return svg_of(fig)
