"""The report's one-draw SVG writer gives the bytes ``savefig(bbox_inches="tight")`` gives."""

from __future__ import annotations

import io
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from supernode.report import figbase


def _figures():
    """Figures of the kinds the report draws: bars with long tick labels and a legend
    below the axes, a grid of axes with a colorbar (an embedded image), text beyond the
    axes."""
    fig, ax = figbase.figure(6, 2.5)
    ax.barh(np.arange(4), [3.0, 1.5, 2.25, 0.5], color="#4c72b0", label="bars")
    ax.set_yticks(np.arange(4), [f"a long label {i} ▲" for i in range(4)], fontsize=7)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=2, frameon=False)
    ax.set_title("a title", fontsize=10)
    yield fig
    fig, axes = figbase.subplots(2, 1, 8, 4, gridspec_kw={"height_ratios": [3, 1]})
    mesh = None
    for ax in axes[:, 0]:
        mesh = ax.pcolormesh(np.linspace(0, 5, 6), np.arange(4),
                             np.linspace(0, 1, 15).reshape(3, 5), vmin=0, vmax=1)
        ax.set_ylabel("tier")
    fig.colorbar(mesh, ax=axes[:, 0].tolist(), label="utilisation", fraction=0.03)
    yield fig
    fig, ax = figbase.figure(4, 4)
    ax.set_aspect("equal")
    ax.plot([0, 1], [0, 1])
    ax.text(1.4, 0.5, "outside the axes", transform=ax.transAxes)
    ax.axis("off")
    yield fig


def _matplotlib_tight(fig) -> str:
    """The figure as ``savefig(bbox_inches="tight")`` writes it, stripped as
    :func:`figbase.svg_of` strips its own."""
    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "supernode"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = re.sub(r"^.*?(<svg\b)", r"\1", buffer.getvalue(), flags=re.S)
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)


@pytest.mark.parametrize("index", range(3))
def test_one_draw_svg_equals_matplotlib_tight_svg(index: int) -> None:
    mine = figbase.svg_of(list(_figures())[index])
    theirs = _matplotlib_tight(list(_figures())[index])
    plt.close("all")
    assert mine.startswith("<svg") and "<text" in mine
    assert mine == theirs
