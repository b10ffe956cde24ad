"""Plots of a policy comparison (matplotlib, Agg, PNG), drawn from a ScheduleResult only.

* ``schedule_metrics.png``: one bar chart per metric, policies side by side (utilisation
  and goodput, mean queueing delay, fragmentation, TP-crossing share, mean slowdown,
  slowdown spread among co-located jobs);
* ``schedule_slowdown_cdf.png``: the distribution of multi-GPU jobs' slowdowns;
* ``schedule_timeline.png``: utilisation and queue length over the run.

Every file is written into a staging folder and moved into place as a set
(:func:`supernode.outputs.output_folder`): all plots or none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from supernode.outputs import output_folder  # noqa: E402
from supernode.textsafe import plot_safe  # noqa: E402

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


def plot_schedule(result: Any, directory: str | Path, option: str = "--plot") -> list[Path]:
    """Write the three plots of ``result`` into ``directory``; return their final paths."""
    with output_folder(directory, option) as staging:
        _metrics(result, staging / FILES[0])
        _cdf(result, staging / FILES[1])
        _timeline(result, staging / FILES[2])
    return [Path(directory) / f for f in FILES]


def _names(result: Any) -> list[str]:
    return [p["policy"] for p in result.policies]


def _metrics(result: Any, path: Path) -> None:
    names = _names(result)
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    x = np.arange(len(names))
    for ax, (key, title, scale, unit) in zip(axes.flat, BARS, strict=True):
        values = np.array([p[key] for p in result.policies]) * scale
        bars = ax.bar(x, values, color="#4c72b0")
        if key == "utilisation":
            good = np.array([p["goodput_utilisation"] for p in result.policies]) * scale
            ax.bar(x, good, width=0.4, color="#55a868", label="goodput")
            ax.legend(fontsize=8)
        ax.bar_label(bars, fmt="%.3g", fontsize=8)
        ax.set_xticks(x, [plot_safe(n) for n in names], rotation=20, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(unit)
    fig.suptitle(plot_safe(f"{result.cluster['name']} ({result.cluster['gpus']:,} GPUs), "
                           f"trace {result.trace['name']} ({result.trace['jobs']:,} jobs)"))
    fig.tight_layout()
    _save(fig, path)


def _cdf(result: Any, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(8, 5))
    for name in _names(result):
        values = np.sort(result.slowdowns.get(name, np.array([])))
        if len(values):
            ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post",
                    label=plot_safe(name))
    ax.set_xlabel("slowdown from placement (run time / run time at the ideal placement)")
    ax.set_ylabel("share of multi-GPU jobs")
    ax.set_title("Distribution of placement slowdowns")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    _save(fig, path)


def _timeline(result: Any, path: Path) -> None:
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    for name in _names(result):
        tl = result.timelines.get(name, {})
        t = np.asarray(tl.get("t_s", [])) / 86400.0
        top.plot(t, np.asarray(tl.get("utilisation", [])) * 100.0, label=plot_safe(name),
                 linewidth=1)
        bottom.plot(t, tl.get("queued_jobs", []), label=plot_safe(name), linewidth=1)
    top.set_ylabel("GPUs held (%)")
    bottom.set_ylabel("jobs waiting")
    bottom.set_xlabel("time since the first submit (days)")
    top.legend(fontsize=8, ncol=3)
    top.set_title("Utilisation and queue over the run")
    fig.tight_layout()
    _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    try:
        fig.savefig(path, dpi=110, format="png")
    finally:
        plt.close(fig)
