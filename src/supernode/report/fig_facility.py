"""Figures of the facility: where a rack's power goes, heat to liquid and air, the floor."""

from __future__ import annotations

from typing import Any

from supernode.report.figbase import COLOURS, HOT, figure, subplots, svg_of

PART_COLOURS = {"accelerators": COLOURS["compute"], "cpus": "#8172b3", "nics": "#55a868",
                "other_units": "#937860", "scale_up_switches": "#dd8452", "base": "#bbbbbb",
                "fans_pumps": "#64b5cd", "psu_loss": "#c44e52"}


def power_svg(fac: dict[str, Any]) -> str:
    """Host power by part and the rack's heat split between liquid and air (bars)."""
    fig, axes = subplots(1, 2, 11, 2.6)
    ax, bx = axes[0]
    parts = fac["power"]["host"]["parts_w"]
    left = 0.0
    for name, watts in parts.items():
        if watts > 0:
            ax.barh([0], [watts / 1e3], left=left, color=PART_COLOURS.get(name, "#999999"),
                    label=name)
            left += watts / 1e3
    ax.set_yticks([0], ["one host (parts)"], fontsize=8)
    ax.set_xlabel("kW")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=4, fontsize=7,
              frameon=False)
    ax.set_title(f"Host power: {fac['power']['host']['total_w'] / 1e3:,.1f} kW "
                 f"({fac['power']['host']['source']})", fontsize=10)
    cool = fac["cooling"]
    bars = [("to liquid", cool["liquid_heat_per_rack_w"], "#4c72b0"),
            ("to air", cool["air_heat_per_rack_w"], "#dd8452")]
    cap = cool["room_air_capacity_per_rack_w"]
    for i, (_name, watts, colour) in enumerate(bars):
        bx.barh([i], [watts / 1e3], color=colour)
        bx.text(watts / 1e3, i, f" {watts / 1e3:,.1f} kW", va="center", fontsize=8)
    if cap:
        bx.axvline(cap / 1e3, color=HOT, linestyle="--")
        bx.text(cap / 1e3, 1.45, " room air per rack", color=HOT, fontsize=8)
    bx.set_yticks(range(len(bars)), [b[0] for b in bars], fontsize=8)
    bx.set_ylim(-0.6, 1.8)
    bx.set_xlabel("kW per rack")
    bx.set_title("A rack's heat", fontsize=10)
    return svg_of(fig)


def floor_svg(fac: dict[str, Any]) -> str | None:
    """Rack positions by row (compute and network racks), aisles between rows."""
    floor = fac["floor"]
    positions = floor["positions"]
    if not positions:
        return None
    rows, per_row = floor["rows"], floor["racks_per_row"]
    fig, ax = figure(min(12, 1.5 + 0.55 * per_row), 1.0 + 0.8 * rows)
    from matplotlib.patches import Rectangle

    for p in positions:
        colour = "#4c72b0" if p["kind"] == "compute" else "#55a868"
        ax.add_patch(Rectangle((p["position"] - 1, (p["row"] - 1) * 2), 0.9, 1,
                               facecolor=colour, edgecolor="#333333"))
        ax.text(p["position"] - 0.55, (p["row"] - 1) * 2 + 0.5, p["rack"], ha="center",
                va="center", fontsize=6, color="white")
    ax.set_xlim(-0.2, per_row + 0.1)
    ax.set_ylim(-0.5, rows * 2)
    ax.set_yticks([(r - 1) * 2 + 0.5 for r in range(1, rows + 1)],
                  [f"row {r}" for r in range(1, rows + 1)], fontsize=8)
    ax.set_xticks([])
    ax.invert_yaxis()
    ax.set_title(f"Floor: {floor['compute_racks']} compute (blue) and {floor['network_racks']} "
                 f"network (green) racks, {floor['aisle_m']:.1f} m aisles", fontsize=10)
    return svg_of(fig)
