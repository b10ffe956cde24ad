"""What every PNG plot of the toolkit shares: the Agg backend, loaded on first use; one
palette; legends outside the data; hot marks; byte-identical files for identical inputs.

Matplotlib costs about 0.3 s to import, so nothing imports it until a plot is drawn
(:func:`pyplot`, or :func:`agg_figure` for a figure pyplot does not manage: no figure
manager, nothing to close, and ``pyplot`` itself not imported). :func:`save_png` writes
with a fixed resolution and no ``Software`` stamp (the PNG then depends on the figure
alone: same inputs and matplotlib version, same bytes) and closes the figure whatever
happens. User text is drawn through :func:`supernode.textsafe.plot_safe` by the callers.

Text is most of what a figure costs to draw (matplotlib 3.11 lays out and renders it
glyph by glyph), so PNGs are drawn with :data:`PNG_RC`: glyphs straight from their
outlines, without FreeType's bytecode grid fitting (which ran the font's hinting program
for every glyph: 1.8 ms a 27-letter label hinted, 1.1 ms unhinted; the letters read the
same at 110 dpi). An opaque figure is written as RGB (no alpha channel to compress), at
zlib level :data:`PNG_COMPRESS_LEVEL` (30 % less time than level 6 for 3 % more bytes).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

#: Colours of the parallel dimensions and step categories (the design report uses them too).
COLOURS = {"compute": "#4c72b0", "optimizer": "#8172b3", "tp": "#dd8452", "cp": "#937860",
           "ep": "#c44e52", "pp": "#55a868", "dp": "#da8bc3", "dp_expert": "#e377c2",
           "communication": "#8c8c8c", "pipeline_bubble": "#ccb974", "other": "#bbbbbb",
           "tp_comm": "#dd8452", "cp_comm": "#937860", "ep_comm": "#c44e52",
           "pp_comm": "#55a868", "dp_comm": "#da8bc3"}
#: Colour of whatever is over a line (hot links, a missed threshold).
HOT = "#d62728"
#: The mark put before the label of a hot link or switch.
HOT_MARK = "▲ "
#: A colour per series beyond the named ones (matplotlib's tab10, fixed order).
SERIES = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf")
DPI = 110
#: What every PNG is drawn with: unhinted glyphs (see the module docstring).
PNG_RC: dict[RcKeyType, Any] = {"text.hinting": "no_hinting"}
#: zlib level of the PNGs (1 fastest .. 9 smallest; PIL's default is 6).
PNG_COMPRESS_LEVEL = 3


def preload() -> None:
    """Import what drawing and writing a figure needs and load the default font, so that
    the first plot does not pay for them (~0.25 s; run in a child beside a simulation,
    :func:`supernode.forked.prepared_child`)."""
    from PIL import Image  # noqa: F401

    fig = agg_figure(1.0, 1.0)
    fig.text(0.5, 0.5, "0")
    fig.canvas.draw()


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (imported on first use)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def agg_figure(width_in: float, height_in: float) -> Any:
    """A new ``width_in`` x ``height_in`` inch :class:`matplotlib.figure.Figure` drawn by
    Agg, outside pyplot (nothing to close; pyplot and its figure manager unused)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in))
    FigureCanvasAgg(fig)
    return fig


def colour(name: str) -> str:
    """The palette colour of a category (grey for anything unnamed)."""
    return COLOURS.get(name, "#999999")


def series_colour(index: int) -> str:
    """The colour of the ``index``-th series of a plot."""
    return SERIES[index % len(SERIES)]


def legend_outside(ax: Any, handles: Any = None, labels: Any = None, **kw: Any) -> Any:
    """A legend right of the axes (never over the data); None when there is nothing."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    options = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 8,
               "frameon": False, "borderaxespad": 0.0, **kw}
    return ax.legend(handles, labels, **options)


def label_rows(ax: Any, labels: list[str], hot: list[bool] | None = None,
               headers: list[bool] | None = None, fontsize: float = 7,
               centre: float = 0.5) -> list[Any]:
    """Label row ``i`` of ``ax`` (its middle at y = ``i + centre``) on its left,
    right-aligned; hot rows in :data:`HOT` bold (their text already starts with
    :data:`HOT_MARK`), header rows bold italic. Returns the texts, first row first.

    One text per row and no ticks: a tick is five artists (two marks, a grid line, two
    labels) made and updated at every draw, which cost as much as drawing its label.
    """
    from matplotlib.transforms import ScaledTranslation

    ax.set_yticks([])
    fig = ax.get_figure()
    left = ax.get_yaxis_transform() + ScaledTranslation(-4 / 72, 0, fig.dpi_scale_trans)
    hot = hot or [False] * len(labels)
    headers = headers or [False] * len(labels)
    return [ax.text(0.0, i + centre, text, transform=left, ha="right", va="center_baseline",
                    fontsize=fontsize, color=HOT if is_hot else None,
                    fontweight="bold" if is_hot or is_header else None,
                    fontstyle="italic" if is_header else None)
            for i, (text, is_hot, is_header) in enumerate(zip(labels, hot, headers,
                                                              strict=True))]


def hot_label(name: str, hot: bool) -> str:
    """A row label with the hot mark in front when ``hot``."""
    return f"{HOT_MARK}{name}" if hot else name


def stacked_axes(rows: list[int], label_chars: int, width_in: float = 11.0,
                 row_in: float = 0.2, right_in: float = 1.3, title_in: float = 0.3,
                 sharex: bool = True) -> tuple[Any, list[Any]]:
    """A figure of panels stacked top to bottom, each ``rows[i]`` rows of ``row_in``
    inches tall, with a left margin for labels of ``label_chars`` characters and
    ``right_in`` inches on the right for a colour bar or legend.

    Laid out by arithmetic (no constrained or tight layout, which measure every text and
    cost several times the drawing), so the figure costs the same at any size. For the
    same reason a y label (the panels have none) has a fixed place, at the figure's left
    edge, and callers give titles ``y=1.0``: matplotlib would otherwise measure every tick
    label at each draw to move them clear of the labels.
    """
    left_in = min(4.5, 0.35 + 0.062 * label_chars)
    top_in, bottom_in = 0.45, 0.55
    heights = [max(r, 1) * row_in for r in rows]
    height_in = top_in + bottom_in + sum(heights) + title_in * len(rows)
    fig = agg_figure(width_in, height_in)
    axes: list[Any] = []
    y = height_in - top_in
    for h in heights:
        y -= title_in + h
        ax = fig.add_axes((left_in / width_in, y / height_in,
                           (width_in - left_in - right_in) / width_in, h / height_in),
                          sharex=axes[0] if sharex and axes else None)
        ax.yaxis.set_label_coords(-(left_in - 0.1) / (width_in - left_in - right_in), 0.5)
        axes.append(ax)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    return fig, axes


def save_png(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` as a PNG at :data:`DPI` (no software stamp: identical inputs give
    identical bytes; RGB when every pixel is opaque) and close it, even when the write
    fails."""
    import matplotlib
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    try:
        canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        with matplotlib.rc_context(PNG_RC):
            fig.set_dpi(DPI)
            canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        image = Image.frombuffer("RGBA", (rgba.shape[1], rgba.shape[0]), rgba, "raw", "RGBA",
                                 0, 1)
        if rgba[..., 3].min() == 255:
            image = image.convert("RGB")
        image.save(path, format="png", dpi=(DPI, DPI), compress_level=PNG_COMPRESS_LEVEL)
    finally:
        if fig.canvas.manager is not None:  # made by pyplot, which holds it until closed
            pyplot().close(fig)
    return Path(path)
