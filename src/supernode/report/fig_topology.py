"""Drawn diagrams of one supernode and of the scale-out fabric (from results only)."""

from __future__ import annotations

import itertools
import math
from typing import Any

from supernode.report.figbase import figure, safe, svg_of

#: Most boxes of one kind drawn in a row; the rest are summarised in a label.
MAX_DRAWN = 16


def _row(ax: Any, n: int, y: float, width: float, height: float, colour: str,
         label: str) -> list[float]:
    """Draw up to MAX_DRAWN boxes centred on a row; return their x centres."""
    drawn = min(n, MAX_DRAWN)
    xs = [(i + 0.5) / drawn for i in range(drawn)]
    for x in xs:
        ax.add_patch(_rect(x - width / 2, y - height / 2, width, height, colour))
    more = f" (drawn {drawn} of {n:,})" if n > drawn else ""
    ax.text(1.02, y, f"{label}: {n:,}{more}", va="center", fontsize=8)
    return xs


def _rect(x: float, y: float, w: float, h: float, colour: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, facecolor=colour, edgecolor="#333333", linewidth=0.6)


def supernode_svg(cluster: dict[str, Any]) -> str:
    """One scale-up domain: hosts with their accelerators and the switch chips (or the
    direct links of a mesh/torus)."""
    up = cluster["scale_up"]
    fig, ax = figure(9, 3.6)
    ax.set_xlim(-0.02, 1.45)
    ax.set_ylim(0, 1)
    ax.axis("off")
    per_host = cluster["accelerators_per_host"]
    hosts = max(1, math.ceil(up["size"] / per_host))
    host_x = _row(ax, hosts, 0.2, 0.8 / min(hosts, MAX_DRAWN), 0.16, "#dce6f2",
                  f"hosts of {per_host} {safe(cluster['accelerator'])}")
    for x in host_x:
        w = 0.8 / min(hosts, MAX_DRAWN)
        for k in range(min(per_host, 8)):
            ax.add_patch(_rect(x - w / 2 + (k + 0.15) * w / min(per_host, 8), 0.15,
                               0.7 * w / min(per_host, 8), 0.1, "#4c72b0"))
    if up["kind"] in ("nvswitch", "hybrid") and up["switch_chips"]:
        chips = up["switch_chips"] * (2 if up.get("switch_tiers") == 2 else 1)
        chip_x = _row(ax, chips, 0.8, 0.6 / min(chips, MAX_DRAWN), 0.1, "#dd8452",
                      f"switch chips ({safe(up['switch'])})")
        for hx, cx in itertools.product(host_x, chip_x):
            ax.plot([hx, cx], [0.28, 0.75], color="#999999", linewidth=0.3, alpha=0.6)
        note = f"every accelerator: {up['links_per_accelerator']} links to the switch chips"
    elif up["kind"] in ("full_mesh", "torus", "mesh", "hybrid"):
        _direct_links(ax, up)
        note = f"{up['kind']} of {up['size']} accelerators, direct links"
    else:
        note = "no scale-up domain"
    ax.set_title(f"One supernode: {up['size']} accelerators, {up['kind']}; {note}",
                 fontsize=10)
    return svg_of(fig)


def _direct_links(ax: Any, up: dict[str, Any]) -> None:
    """Accelerators as dots above the hosts, with their direct links (up to 16 drawn):
    every pair for a full mesh, grid neighbours (and wrap-around) for a mesh or torus."""
    n = min(up["size"], MAX_DRAWN)
    dims = up.get("dims") or []
    pos: dict[Any, tuple[float, float]]  # a grid point (i, j), or a ring position k
    pairs: list[tuple[Any, Any]]
    if up["kind"] in ("torus", "mesh") and len(dims) >= 1:
        cols = dims[0] if dims[0] <= MAX_DRAWN else 4
        rows = max(1, min(n // cols, 4))
        pos = {(i, j): (0.15 + 0.7 * i / max(cols - 1, 1), 0.45 + 0.4 * j / max(rows - 1, 1))
               for i in range(cols) for j in range(rows)}
        pairs = [((i, j), (i + 1, j)) for i in range(cols - 1) for j in range(rows)]
        pairs += [((i, j), (i, j + 1)) for i in range(cols) for j in range(rows - 1)]
        if up["kind"] == "torus" and cols > 2:
            pairs += [((cols - 1, j), (0, j)) for j in range(rows)]
    else:
        pos = {k: (0.5 + 0.3 * math.cos(2 * math.pi * k / n),
                   0.65 + 0.22 * math.sin(2 * math.pi * k / n)) for k in range(n)}
        pairs = list(itertools.combinations(range(n), 2))
    for a, b in pairs:
        ax.plot([pos[a][0], pos[b][0]], [pos[a][1], pos[b][1]], color="#999999", lw=0.6)
    for x, y in pos.values():
        ax.plot([x], [y], "o", color="#4c72b0", markersize=7)


def fabric_svg(cluster: dict[str, Any]) -> str | None:
    """The scale-out fat tree: supernodes, leaves, spines (and core), with their counts."""
    out = cluster["scale_out"]
    if out is None:
        return None
    fig, ax = figure(9, 4.2)
    ax.set_xlim(-0.02, 1.45)
    ax.set_ylim(0, 1)
    ax.axis("off")
    levels = [("supernodes", cluster["supernodes"], "#4c72b0")]
    levels += [(t, out["switches"][t], "#dd8452") for t in ("leaf", "spine", "core")
               if out["switches"].get(t)]
    ys = [0.12 + 0.76 * i / max(len(levels) - 1, 1) for i in range(len(levels))]
    previous = None
    for (name, count, colour), y in zip(levels, ys, strict=True):
        xs = _row(ax, count, y, 0.6 / min(count, MAX_DRAWN), 0.08, colour, name)
        if previous is not None:
            py, pxs = previous
            for a, b in itertools.product(pxs, xs):
                ax.plot([a, b], [py + 0.04, y - 0.04], color="#999999", linewidth=0.25,
                        alpha=0.5)
        previous = (y, xs)
    ratio = ":".join(f"{r:g}" for r in out["oversubscription"]) or "1"
    ax.set_title(f"Scale-out fabric: {out['tiers']}-tier fat tree of {safe(out['switch'])} "
                 f"({out['radix']} ports), {out['nics_per_host']} NIC(s) per host, "
                 f"oversubscription {ratio}:1" + (", rail-optimised" if out["rail_optimized"]
                                                   else ""), fontsize=10)
    return svg_of(fig)
