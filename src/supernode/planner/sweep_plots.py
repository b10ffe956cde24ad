"""Plots of a sweep: step time and MFU against each swept key, drawn from the rows only.

A key whose values are all numbers is a numeric axis (lines, log scale when the values
span a decade or more); any other key (a cluster file, a workload, a list) is categorical
and drawn as bars, never as a line between unrelated values. Each series is one
combination of the other keys; beyond :data:`MAX_SERIES` combinations the plot
aggregates instead: the best value per x (bars or a line) with the range over the
combinations (whiskers or a band). Values no variant could plan are marked on the axis.
Legends sit right of the data. Swept values are user text: every label goes through
:func:`supernode.textsafe.plot_safe`.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import numpy as np

from supernode.plotting import legend_outside, pyplot, series_colour
from supernode.textsafe import plot_safe

#: Series drawn one by one (more are aggregated: best and range).
MAX_SERIES = 8
#: (row key, axis title, scale, better is lower) of the two panels.
METRICS = (("step_time_s", "step time (s)", 1.0, True), ("mfu", "MFU (%)", 100.0, False))


def label(value: Any) -> str:
    """How a swept value is shown (JSON for lists and mappings)."""
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


def is_numeric(rows: list[dict[str, Any]], key: str) -> bool:
    """True when every row's ``key`` is a number (not a bool): a numeric axis."""
    return bool(rows) and all(isinstance(r.get(key), int | float)
                              and not isinstance(r.get(key), bool) for r in rows)


def series_of(rows: list[dict[str, Any]], keys: list[str], key: str
              ) -> dict[str, list[dict[str, Any]]]:
    """Planned rows grouped by the values of the other keys (first appearance order),
    each series named by those values (``200, llama3-70b``; ``all`` without other keys)."""
    others = [k for k in keys if k != key]
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("status") == "ok":
            name = ", ".join(label(r.get(k)) for k in others) or "all"
            out.setdefault(name, []).append(r)
    return out


def _wrapped(text: str, width: int = 34) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=True)) or text


def tick_label(value: str, width: int = 22, lines: int = 3) -> str:
    """A categorical value on at most ``lines`` lines of ``width``; a longer one keeps its
    end (a file path's distinguishing part) after an ellipsis."""
    text = plot_safe(value)
    limit = width * lines
    if len(text) > limit:
        text = "…" + text[-(limit - 1):]
    return "\n".join(text[i:i + width] for i in range(0, len(text), width)) or text


def _values(series: list[dict[str, Any]], key: str, positions: dict[str, float],
            metric: str, scale: float) -> tuple[np.ndarray, np.ndarray]:
    pairs = sorted((positions[label(r.get(key))], float(r[metric]) * scale) for r in series)
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _aggregate(groups: dict[str, list[dict[str, Any]]], key: str,
               positions: dict[str, float], metric: str, scale: float, lower: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per x: best, min and max of ``metric`` over every series."""
    by_x: dict[float, list[float]] = {}
    for rows in groups.values():
        for r in rows:
            by_x.setdefault(positions[label(r.get(key))], []).append(float(r[metric]) * scale)
    xs = np.array(sorted(by_x))
    vals = [np.array(by_x[x]) for x in xs]
    best = np.array([v.min() if lower else v.max() for v in vals])
    return xs, best, np.array([v.min() for v in vals]), np.array([v.max() for v in vals])


def _draw_panel(ax: Any, groups: dict[str, list[dict[str, Any]]], key: str,
                positions: dict[str, float], numeric: bool, metric: tuple) -> None:
    name, title, scale, lower = metric
    if len(groups) > MAX_SERIES:
        xs, best, lo, hi = _aggregate(groups, key, positions, name, scale, lower)
        what = f"best of {len(groups)} combinations of the other keys"
        if numeric:
            ax.plot(xs, best, marker="o", color=series_colour(0), label=_wrapped(what))
            ax.fill_between(xs, lo, hi, color=series_colour(0), alpha=0.2, label="range")
        else:
            ax.bar(xs, best, width=0.6, color=series_colour(0),
                   label=_wrapped(f"{what} (whiskers: range)"),
                   yerr=np.stack([best - lo, hi - best]), capsize=3, ecolor="black")
    else:
        width = 0.8 / max(len(groups), 1)
        for i, (series, rows) in enumerate(groups.items()):
            xs, ys = _values(rows, key, positions, name, scale)
            if numeric:
                ax.plot(xs, ys, marker="o", color=series_colour(i),
                        label=_wrapped(plot_safe(series)))
            else:
                bars = ax.bar(xs - 0.4 + width * (i + 0.5), ys, width=width,
                              color=series_colour(i), label=_wrapped(plot_safe(series)))
                if len(groups) == 1:
                    ax.bar_label(bars, fmt="%.3g", fontsize=7)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_ylim(0, max(ax.get_ylim()[1], 1e-9) * 1.08)


def _mark_unplanned(ax: Any, rows: list[dict[str, Any]], key: str,
                    positions: dict[str, float]) -> None:
    """An ``x`` on the axis at every value no variant could plan."""
    planned = {label(r.get(key)) for r in rows if r.get("status") == "ok"}
    missing = [positions[v] for v in positions if v not in planned]
    if missing:
        ax.plot(missing, [0.0] * len(missing), "x", color="#d62728", markersize=9,
                clip_on=False, label="no plan (error or infeasible)")


def plot_key(rows: list[dict[str, Any]], keys: list[str], key: str) -> Any:
    """The figure of one swept key: step time and MFU against its values."""
    plt = pyplot()
    values = list(dict.fromkeys(label(r.get(key)) for r in rows))
    numeric = is_numeric(rows, key)
    positions = ({v: float(r[key]) for r in rows for v in [label(r.get(key))]} if numeric
                 else {v: float(i) for i, v in enumerate(values)})
    groups = series_of(rows, keys, key)
    ticks = [tick_label(v) for v in values]
    bottom_in = 0.75 + (0.0 if numeric else 0.16 * max(t.count("\n") for t in ticks))
    names = [plot_safe(g) for g in groups] if len(groups) <= MAX_SERIES else ["x" * 34]
    legend_in = 0.0 if len(groups) <= 1 else 0.3 + 0.07 * min(34, max(
        [len(n) for n in names] + [len(o) for o in keys if o != key]))
    width_in, height_in = 11.0 + legend_in, 3.6 + bottom_in
    fig, axes = plt.subplots(1, 2, figsize=(width_in, height_in))
    for ax, metric in zip(axes, METRICS, strict=True):
        _draw_panel(ax, groups, key, positions, numeric, metric)
        _mark_unplanned(ax, rows, key, positions)
        ax.set_xlabel(plot_safe(key))
        if numeric:
            xs = sorted(positions.values())
            if xs[0] > 0 and xs[-1] / xs[0] >= 10:
                ax.set_xscale("log")
            ax.set_xticks(xs, [plot_safe(v) for v in sorted(positions, key=positions.__getitem__)])
            ax.minorticks_off()
        else:
            ax.set_xticks(range(len(values)), ticks, fontsize=8)
    others = ", ".join(k for k in keys if k != key)
    if len(groups) > 1 or any(r.get("status") != "ok" for r in rows):
        title = "\n".join(_wrapped(plot_safe(k)) for k in keys if k != key)
        legend_outside(axes[1], title=title if others and len(groups) <= MAX_SERIES else None,
                       title_fontsize=8)
    fig.subplots_adjust(left=0.75 / width_in, right=1 - (legend_in + 0.2) / width_in,
                        bottom=bottom_in / height_in, top=1 - 0.75 / height_in,
                        wspace=0.22)
    kind = "numeric" if numeric else "categorical"
    fig.suptitle(plot_safe(f"Sweep over {key} ({len(values)} values, {kind}; "
                           f"{len(groups)} combination{'s' if len(groups) != 1 else ''} "
                           "of the other keys)"), fontsize=10)
    return fig
