"""PNG plots of a reliability result (matplotlib, Agg): what the design report embeds.

* ``goodput_distribution.png``: histogram of Monte Carlo goodput, analytic value marked;
* ``checkpoint_interval.png``: goodput against the checkpoint interval (simulated means and
  Daly's closed form), with Young's, Daly's and the simulated optimum;
* ``interruptions_by_component.png``: failures per day by component, interrupting or not.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from supernode.outputs import output_folder
from supernode.plotting import legend_outside, pyplot, save_png
from supernode.reliability.goodput import daly_goodput
from supernode.reliability.result import ReliabilityResult
from supernode.textsafe import plot_safe


def _distribution(ax, result: ReliabilityResult) -> None:
    mc = result.monte_carlo
    samples = mc["goodput_samples"]
    ax.hist(samples, bins=mc["histogram"]["edges"], color="#4477aa")
    ax.axvline(result.scenario.analytic_goodput, color="#cc3311", ls="--",
               label=f"analytic {result.scenario.analytic_goodput:.3f}")
    ax.axvline(mc["goodput"]["mean"], color="black", label=f"mean {mc['goodput']['mean']:.3f}")
    ax.set_xlabel("goodput (kept progress / wall time)")
    ax.set_ylabel("runs")
    ax.set_title(plot_safe(f"{result.cluster}: {mc['runs']} runs of "
                           f"{mc['horizon_s'] / 86400:g} days"))
    legend_outside(ax)


def _interval(ax, result: ReliabilityResult) -> None:
    s, mc = result.scenario, result.monte_carlo
    grid = [g / 60 for g in mc["interval_grid_s"]]
    ax.plot(grid, mc["goodput_by_interval"], "o-", label="Monte Carlo mean")
    ax.plot(grid, [daly_goodput(g * 60, max(s.checkpoint.blocking_s, 1e-3), s.restart_s,
                                s.mtbf_s) * (1 - s.degraded_share) for g in grid], "--",
            label="Daly closed form")
    for value, name, color in ((s.young_s, "Young", "#228833"), (s.daly_s, "Daly", "#cc3311"),
                               (mc["best_interval_s"], "simulated best", "black")):
        ax.axvline(value / 60, color=color, ls=":", label=f"{name} {value / 60:.3g} min")
    ax.set_xscale("log")
    ax.set_xlabel("checkpoint interval (minutes of work)")
    ax.set_ylabel("goodput")
    legend_outside(ax)


def _components(ax, result: ReliabilityResult) -> None:
    data = result.interruptions()
    names = list(data["failures_per_day_by_component"])
    total = [data["failures_per_day_by_component"][n] for n in names]
    stops = [data["interruptions_per_day_by_component"].get(n, 0.0) for n in names]
    ax.barh([plot_safe(n) for n in names], total, color="#bbbbbb", label="failures")
    ax.barh([plot_safe(n) for n in names], stops, color="#cc3311", label="job interruptions")
    ax.set_xlabel("per day")
    ax.invert_yaxis()
    legend_outside(ax)


def write_plots(result: ReliabilityResult, directory: str | Path, option: str = "--plot",
                inputs: Iterable[str | Path] = ()) -> list[Path]:
    """Write the three PNGs into ``directory`` (all or none, identical bytes for an
    identical result; legends beside the data); return their final paths."""
    plt = pyplot()
    names = {"goodput_distribution.png": _distribution,
             "checkpoint_interval.png": _interval,
             "interruptions_by_component.png": _components}
    with output_folder(directory, option, inputs) as staging:
        for name, draw in names.items():
            fig, ax = plt.subplots(figsize=(9, 4.2))
            draw(ax, result)
            fig.tight_layout()
            save_png(fig, staging / name)
    return [Path(directory) / n for n in names]
