"""Plots of a policy comparison (matplotlib, Agg, PNG), drawn from a ScheduleResult only.

* ``schedule_metrics.png``: one bar chart per metric, policies side by side (utilisation
  and goodput, mean queueing delay, fragmentation, TP-crossing share, mean slowdown,
  slowdown spread among co-located jobs);
* ``schedule_slowdown_cdf.png``: the distribution of multi-GPU jobs' slowdowns (at most
  :data:`CDF_POINTS` quantiles per policy, whatever the number of jobs);
* ``schedule_timeline.png``: utilisation and queue length over the run (the result's
  evenly sampled timeline).

Legends sit beside or above the data, never over it; the PNGs carry no software stamp
(identical results, identical bytes).

Every file is written into a staging folder and moved into place as a set
(:func:`supernode.outputs.output_folder`): all plots or none.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from supernode.outputs import output_folder
from supernode.plotting import legend_outside, pyplot, save_png, series_colour
from supernode.textsafe import plot_safe

#: (metric key, title, scale, unit) of the bar charts.
BARS = (
    ("utilisation", "Utilisation (held / goodput)", 100.0, "%"),
    ("mean_queue_s", "Mean queueing delay", 1 / 3600.0, "h"),
    ("fragmentation", "Fragmentation (free, unusable)", 100.0, "%"),
    ("tp_crossing_share", "TP groups crossing a supernode", 100.0, "% of TP>1 jobs"),
    ("mean_slowdown", "Mean slowdown (multi-GPU jobs)", 1.0, "x"),
    ("slowdown_spread", "Slowdown spread, co-located jobs", 100.0, "% (p95/p5-1)"),
)
FILES = ("schedule_metrics.png", "schedule_slowdown_cdf.png", "schedule_timeline.png")
#: Points of a drawn distribution (quantiles; 100,000 jobs draw as many as 100).
CDF_POINTS = 1000


def plot_schedule(result: Any, directory: str | Path, option: str = "--plot",
                  inputs: Iterable[str | Path] = ()) -> list[Path]:
    """Write the three plots of ``result`` into ``directory`` (never over or around one of
    ``inputs``); return their final paths."""
    with output_folder(directory, option, inputs) as staging:
        _metrics(result, staging / FILES[0])
        _cdf(result, staging / FILES[1])
        _timeline(result, staging / FILES[2])
    return [Path(directory) / f for f in FILES]


def _names(result: Any) -> list[str]:
    return [p["policy"] for p in result.policies]


def _metrics(result: Any, path: Path) -> None:
    names = _names(result)
    fig, axes = pyplot().subplots(2, 3, figsize=(13, 7))
    x = np.arange(len(names))
    for ax, (key, title, scale, unit) in zip(axes.flat, BARS, strict=True):
        values = np.array([p[key] for p in result.policies]) * scale
        bars = ax.bar(x, values, color="#4c72b0")
        if key == "utilisation":
            good = np.array([p["goodput_utilisation"] for p in result.policies]) * scale
            ax.bar(x, good, width=0.4, color="#55a868", label="goodput")
            ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.06), ncol=2,
                      frameon=False)
        ax.bar_label(bars, fmt="%.3g", fontsize=8)
        ax.set_xticks(x, [plot_safe(n) for n in names], rotation=20, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(unit)
    fig.suptitle(plot_safe(f"{result.cluster['name']} ({result.cluster['gpus']:,} GPUs), "
                           f"trace {result.trace['name']} ({result.trace['jobs']:,} jobs)"))
    fig.tight_layout()
    _save(fig, path)


def cdf_points(values: Any, points: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """``(value, share of values <= it)`` of the empirical distribution, at most
    ``points`` of them (evenly spaced quantiles beyond that: the curve, not every job)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    share = np.arange(1, ordered.size + 1) / max(ordered.size, 1)
    if ordered.size <= points:
        return ordered, share
    pick = np.unique(np.round(np.linspace(0, ordered.size - 1, points)).astype(int))
    return ordered[pick], share[pick]


def _cdf(result: Any, path: Path) -> None:
    fig, ax = pyplot().subplots(figsize=(9.5, 5))
    for i, name in enumerate(_names(result)):
        values, share = cdf_points(result.slowdowns.get(name, np.array([])))
        if len(values):
            ax.step(values, share, where="post", label=plot_safe(name), color=series_colour(i))
    ax.set_xlabel("slowdown from placement (run time / run time at the ideal placement)")
    ax.set_ylabel("share of multi-GPU jobs")
    ax.set_title("Distribution of placement slowdowns")
    ax.grid(alpha=0.3)
    legend_outside(ax)
    fig.tight_layout()
    _save(fig, path)


def _timeline(result: Any, path: Path) -> None:
    fig, (top, bottom) = pyplot().subplots(2, 1, figsize=(12, 6), sharex=True)
    for i, name in enumerate(_names(result)):
        tl = result.timelines.get(name, {})
        t = np.asarray(tl.get("t_s", [])) / 86400.0
        top.plot(t, np.asarray(tl.get("utilisation", [])) * 100.0, label=plot_safe(name),
                 linewidth=1, color=series_colour(i))
        bottom.plot(t, tl.get("queued_jobs", []), label=plot_safe(name), linewidth=1,
                    color=series_colour(i))
    top.set_ylabel("GPUs held (%)")
    bottom.set_ylabel("jobs waiting")
    bottom.set_xlabel("time since the first submit (days)")
    legend_outside(top)
    top.set_title("Utilisation and queue over the run")
    fig.tight_layout()
    _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    save_png(fig, path)
