"""Figures of the scheduling section, drawn from ``results['scheduling']`` only.

The policy chart shows each policy's metrics as the scheduler computed them (bars: the
policies are categories); the distribution is the multi-GPU jobs' slowdown quantiles the
design stage kept. No model is evaluated here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.patches import Patch

from supernode.report.figbase import safe, subplots, svg_of

#: Colours of the two kinds of policy (and a lighter shade for the second bar of a pair).
KIND_COLOURS = {"topology-blind": ("#dd8452", "#f0c4a3"),
                "topology-aware": ("#4c72b0", "#a9bde0")}
LINES = {"random": ":", "first-fit": "--", "best-fit": "-", "slurm-block": "-."}


def _pairs(ax: Any, kinds: list[str], first: list[float], second: list[float],
           labels: tuple[str, str], text: Any) -> None:
    """Two bars per policy (the first metric solid and darker, the second lighter and
    hatched: the legend shows the pattern, the colour is the policy's kind), each value
    written at its end."""
    y = np.arange(len(kinds))
    for offset, values, shade, hatch in ((-0.2, first, 0, ""), (0.2, second, 1, "///")):
        ax.barh(y + offset, values, height=0.38, color=[KIND_COLOURS[k][shade] for k in kinds],
                edgecolor="#333333", linewidth=0.3, hatch=hatch)
        for yi, v in zip(y + offset, values, strict=True):
            ax.text(v, yi, f" {text(v)}", va="center", fontsize=6.5)
    ax.set_xlim(right=ax.get_xlim()[1] * 1.25)
    ax.legend(handles=[Patch(facecolor="white", edgecolor="#333333", linewidth=0.3,
                             hatch=hatch, label=label)
                       for hatch, label in zip(("", "///"), labels, strict=True)],
              loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=1, fontsize=7,
              frameon=False)


def policies_svg(sch: dict[str, Any]) -> str | None:
    """Per policy: TP across supernodes and slowdown spread; mean and p95 slowdown;
    GPUs held and useful GPU share (orange: topology-blind, blue: topology-aware)."""
    policies = sch["schedule"]["policies"]
    if not policies:
        return None
    names = [safe(p["policy"]) for p in policies]
    kinds = [k["kind"] for k in sch["policies"]]
    fig, axes = subplots(1, 3, 11, 1.2 + 0.45 * len(names), sharey=True)
    ax, bx, cx = axes[0]
    share = lambda v: f"{v:.1f}%"  # noqa: E731
    _pairs(ax, kinds, [100 * p["tp_crossing_share"] for p in policies],
           [100 * p["slowdown_spread"] for p in policies],
           ("TP jobs across supernodes", "slowdown spread (p95/p5 - 1)"), share)
    ax.set_xlabel("%")
    ax.set_title("Crossings and spread", fontsize=10)
    ax.set_yticks(np.arange(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    _pairs(bx, kinds, [p["mean_slowdown"] for p in policies],
           [p["p95_slowdown"] for p in policies], ("mean slowdown", "p95 slowdown"),
           lambda v: f"{v:.3f}x")
    bx.set_xlim(left=0.95)
    bx.set_xlabel("x the ideal placement")
    bx.set_title("Slowdown of multi-GPU jobs", fontsize=10)
    _pairs(cx, kinds, [100 * p["utilisation"] for p in policies],
           [100 * p["goodput_utilisation"] for p in policies],
           ("GPUs held", "useful GPU share (held / slowdown)"), share)
    cx.set_xlabel("% of the cluster's GPU time")
    cx.set_title("GPUs held and useful GPU share", fontsize=10)
    fig.legend(handles=[Patch(facecolor=c[0], label=k) for k, c in KIND_COLOURS.items()],
               loc="upper center", bbox_to_anchor=(0.5, 1.08), ncol=2, fontsize=8,
               frameon=False)
    fig.subplots_adjust(wspace=0.12)
    return svg_of(fig)


def slowdowns_svg(sch: dict[str, Any]) -> str | None:
    """Distribution (CDF) of the multi-GPU jobs' slowdowns under each policy."""
    q = sch["slowdown_quantiles"]
    curves = {n: v for n, v in q["by_policy"].items() if v}
    if not curves:
        return None
    fig, axes = subplots(1, 1, 9, 2.8)
    ax = axes[0][0]
    kinds = {k["policy"]: k["kind"] for k in sch["policies"]}
    for name, values in curves.items():
        ax.step(values, q["q"], where="post", color=KIND_COLOURS[kinds[name]][0],
                linestyle=LINES.get(name, "-"), linewidth=1.4,
                label=f"{safe(name)} ({kinds[name]})")
    ax.set_xlabel("slowdown of a multi-GPU job (x its run time at the ideal placement)")
    ax.set_ylabel("share of jobs at or below")
    ax.set_ylim(0, 1.02)
    ax.set_title("Slowdowns from placement", fontsize=10)
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    return svg_of(fig)
