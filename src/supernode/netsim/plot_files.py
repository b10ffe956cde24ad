"""A run's plots written as one set (all or none), drawn here or by a child process that
imported matplotlib beside the simulation (:func:`prepare_drawing`), the two figures side
by side (:func:`draw_plots`); the figures are :mod:`supernode.netsim.plots`."""

from __future__ import annotations

from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import Any

from supernode.forked import PreparedChild, prepared_child, run_forked
from supernode.netsim.plots import plot_timeline, plot_utilization
from supernode.outputs import output_errors, output_folder
from supernode.plotting import preload


def write_plots(tables: Any, directory: str | Path, option: str = "--plot",
                inputs: tuple[str | Path, ...] = (), drawer: PreparedChild | None = None
                ) -> list[Path]:
    """Write every plot of a run's tables into ``directory``, all or none; return the files.

    The set is staged and moved into place at once (:func:`supernode.outputs.output_folder`):
    a path that is not a folder, a write that fails or a signal leaves ``directory`` as it
    was. Errors are :class:`InputError` at ``option``. ``drawer``: a child that has
    imported matplotlib (:func:`prepare_drawing`) draws them; else this process.
    """
    with output_folder(directory, option, inputs) as staging, \
            output_errors(directory, option):
        heat = tables.extra.get("heatmap", {})
        names = drawer.run(draw_plots, heat, tables.timeline, staging) if drawer else \
            draw_plots(heat, tables.timeline, staging)
    return [Path(directory) / name for name in names]


def draw_plots(heat: dict[str, dict[str, Any]], timeline: list[tuple], folder: Path
               ) -> list[str]:
    """Draw the utilisation and timeline plots into ``folder``: the names written.

    The two figures are drawn side by side, the timeline in a child forked from this
    process (:func:`supernode.forked.run_forked`: it shares the matplotlib already
    imported, so it starts in milliseconds); the files are those drawn one after the
    other (each figure depends on its own table alone)."""
    files = run_forked([partial(plot_utilization, heat, folder / "utilization.png"),
                        partial(plot_timeline, timeline, folder)])
    return [p.name for p in files if p is not None]


def prepare_drawing() -> AbstractContextManager[PreparedChild]:
    """A child importing matplotlib now, to draw the plots later (a context manager,
    :func:`supernode.forked.prepared_child`; the caller simulates meanwhile)."""
    return prepared_child(preload)
