"""Figures as inline SVG (matplotlib, Agg): text stays text, no files, no network."""

from __future__ import annotations

import io
import re
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from supernode.plotting import COLOURS, HOT  # noqa: E402,F401  (one palette for every figure)
from supernode.textsafe import plot_safe  # noqa: E402


def svg_of(fig: Any) -> str:
    """The figure as an SVG element (XML prolog and doctype stripped), then closed."""
    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "supernode"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
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
