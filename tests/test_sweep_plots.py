"""Sweep plots read at a glance: bars over categorical keys, lines over numeric ones,
aggregation beyond eight series, unplanned values marked, legends beside the data, user
text drawn literally, identical bytes for identical rows."""

from __future__ import annotations

import itertools

import pytest
from matplotlib.container import BarContainer

from supernode.planner.sweep_output import plot_axes
from supernode.planner.sweep_plots import MAX_SERIES, is_numeric, plot_key, tick_label
from supernode.plotting import pyplot
from supernode.textsafe import plot_safe


def _rows(nics=(200, 400), workloads=("llama3-70b", "$w^$"), extra=()) -> list[dict]:
    rows = []
    for i, (n, w, *rest) in enumerate(itertools.product(nics, workloads, *extra)):
        rows.append({"variant": i, "nics": n, "workload": w, **{f"k{j}": v for j, v in
                                                              enumerate(rest)},
                     "status": "ok", "step_time_s": 1.0 + i + n / 1000, "mfu": 0.3 + i / 100})
    return rows


def _lines_with_data(ax) -> list:
    return [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1]


def _close(fig) -> None:
    pyplot().close(fig)


def test_a_categorical_key_is_drawn_as_bars_with_literal_labels() -> None:
    rows = _rows()
    fig = plot_key(rows, ["nics", "workload"], "workload")
    try:
        for ax in fig.axes[:2]:
            bars = [c for c in ax.containers if isinstance(c, BarContainer)]
            assert len(bars) == 2 and all(len(b) == 2 for b in bars)  # 2 series x 2 values
            assert not _lines_with_data(ax)  # no line between unrelated values
            ticks = [t.get_text() for t in ax.get_xticklabels()]
            assert ticks == ["llama3-70b", plot_safe("$w^$")]
        legend = fig.axes[1].get_legend()
        assert [t.get_text() for t in legend.get_texts()] == ["200", "400"]
        assert legend.get_title().get_text() == "nics"
        fig.canvas.draw()
        box = legend.get_window_extent().transformed(fig.transFigure.inverted())
        assert box.x0 >= fig.axes[1].get_position().x1  # beside the data
    finally:
        _close(fig)


def test_a_numeric_key_is_drawn_as_lines_on_its_values() -> None:
    rows = _rows(nics=(100, 400, 1600))
    assert is_numeric(rows, "nics") and not is_numeric(rows, "workload")
    fig = plot_key(rows, ["nics", "workload"], "nics")
    try:
        ax = fig.axes[0]
        lines = _lines_with_data(ax)
        assert len(lines) == 2 and not ax.containers
        assert sorted(lines[0].get_xdata()) == [100, 400, 1600]
        assert ax.get_xscale() == "log"  # a 16x span
        assert ax.get_ylim()[0] == 0
    finally:
        _close(fig)


def test_beyond_eight_series_the_plot_aggregates() -> None:
    rows = _rows(nics=tuple(range(100, 100 + MAX_SERIES + 2)), workloads=("a", "b"))
    fig = plot_key(rows, ["nics", "workload"], "workload")
    try:
        ax = fig.axes[0]
        bars = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert len(bars) == 1  # the best per value, not ten thin bars
        best = {w: min(r["step_time_s"] for r in rows if r["workload"] == w) for w in "ab"}
        assert [b.get_height() for b in bars[0]] == pytest.approx([best["a"], best["b"]])
        legend = fig.axes[1].get_legend()
        assert "best of 10 combinations" in legend.get_texts()[0].get_text().replace("\n", " ")
    finally:
        _close(fig)


def test_values_no_variant_could_plan_are_marked() -> None:
    rows = _rows()
    for r in rows:
        if r["workload"] == "$w^$":
            r.update(status="error", step_time_s=None, mfu=None)
    fig = plot_key(rows, ["nics", "workload"], "workload")
    try:
        marks = [ln for ln in fig.axes[0].get_lines() if ln.get_marker() == "x"]
        assert len(marks) == 1 and list(marks[0].get_xdata()) == [1.0]
    finally:
        _close(fig)


def test_long_values_keep_their_end() -> None:
    text = tick_label("/a/very/long/folder/that/goes/on/and/on/design/flagship/cluster.yaml")
    assert text.startswith("…") and text.replace("\n", "").endswith("flagship/cluster.yaml")
    assert all(len(line) <= 22 for line in text.splitlines()) and text.count("\n") <= 2


def test_the_same_rows_give_the_same_bytes(tmp_path) -> None:
    rows = _rows()
    first = plot_axes(rows, ["nics", "workload"], tmp_path / "a")
    second = plot_axes(rows, ["nics", "workload"], tmp_path / "b")
    assert [p.name for p in first] == ["plot_nics.png", "plot_workload.png"]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes() and a.read_bytes()[:4] == b"\x89PNG"
