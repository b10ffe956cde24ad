"""Figures as inline SVG (matplotlib, Agg): text stays text, no files, no network."""

from __future__ import annotations

import io
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib._tight_bbox import adjust_bbox  # noqa: E402
from matplotlib.backends.backend_mixed import MixedModeRenderer  # noqa: E402
from matplotlib.backends.backend_svg import FigureCanvasSVG, RendererSVG  # noqa: E402

from supernode.plotting import COLOURS, HOT  # noqa: E402,F401  (one palette for every figure)
from supernode.textsafe import plot_safe  # noqa: E402


def _tight_svg(fig: Any, out: io.StringIO) -> None:
    """Write ``fig`` as SVG cropped to its tight bounding box, drawing it once.

    ``savefig(bbox_inches="tight")`` draws the whole figure twice: a dry draw to lay it out,
    then the SVG. The bounding box needs no dry draw (measuring the figure lays out its
    ticks, labels and titles), so this does what ``Figure.savefig`` does in matplotlib 3.8
    to 3.11 (``backend_bases.FigureCanvasBase.print_figure``: the box measured at the SVG's
    72 points per inch, padded by ``savefig.pad_inches``, the figure adjusted to it by
    ``matplotlib._tight_bbox``, then one draw), without that draw: the same bytes
    (``tests/test_report_figbase.py``); the flagship report's 13 figures take ~13 % less
    CPU (benchmarks/README.md). The figure keeps the SVG canvas: close it after.
    """
    dpi = fig.dpi
    width_in, height_in = fig.get_size_inches()
    canvas = FigureCanvasSVG(fig)  # the figure's canvas while it is written, as savefig's
    try:
        fig.dpi = 72  # the SVG backend's unit: points
        measure = MixedModeRenderer(fig, width_in, height_in, dpi,
                                    RendererSVG(width_in * 72, height_in * 72, io.StringIO(),
                                                image_dpi=dpi))
        pad_in = plt.rcParams["savefig.pad_inches"]
        bbox_in = fig.get_tightbbox(measure).padded(pad_in, pad_in)
        restore = adjust_bbox(fig, bbox_in, measure, canvas.fixed_dpi)
        try:
            fig.dpi = dpi
            canvas.print_svg(out, bbox_inches_restore=(bbox_in, restore))
        finally:
            restore()
    finally:
        fig.dpi = dpi


def svg_of(fig: Any) -> str:
    """The figure as an SVG element cropped to its tight bounding box (XML prolog and
    doctype stripped), then closed."""
    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "supernode"}):
        _tight_svg(fig, buffer)
    plt.close(fig)
    text = buffer.getvalue()
    text = re.sub(r"^.*?(<svg\b)", r"\1", text, flags=re.S)
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return text


def safe(text: Any) -> str:
    """A user string as matplotlib draws it literally."""
    return plot_safe(text)


def figure(width: float, height: float) -> tuple[Any, Any]:
    """A new figure and axes of the given size in inches."""
    return plt.subplots(figsize=(width, height))


def subplots(rows: int, cols: int, width: float, height: float, **kw: Any) -> tuple[Any, Any]:
    """A new figure with a grid of axes."""
    return plt.subplots(rows, cols, figsize=(width, height), squeeze=False, **kw)
