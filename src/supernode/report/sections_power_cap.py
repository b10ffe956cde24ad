"""The facility section's power-cap table: the reviewed plan at a ladder of board power
caps, the highest cap that fits the power budget, and fewer supernodes at TDP
(``facility.power_cap`` of ``results.json``, :mod:`supernode.design.power_cap`)."""

from __future__ import annotations

from typing import Any

from supernode.report.blocks import Paragraph, Table
from supernode.report.sections_core import L, N, T

PC = ("facility", "power_cap")
COLUMNS = ("lever", "SM clock", "step time", "tokens/s", "energy per token (J)", "rack",
           "cluster peak", "fits the budget")


def _cap_row(*key: Any, lever: str = "cap ") -> tuple:
    k = PC + key
    return ((L(lever), N(*k, "power_limit_w", kind="count"), L(" W")),
            N(*k, "sustained_clock_ratio", kind="share"),
            N(*k, "step_time_s", kind="s"), N(*k, "tokens_per_s", kind="tokens_per_s"),
            N(*k, "energy_per_token_j", kind="number"), N(*k, "rack_w", kind="w"),
            N(*k, "cluster_peak_w", kind="w"), N(*k, "fits_budget", kind="bool"))


def power_cap_blocks(r: dict[str, Any]) -> list:
    """The table and its notes, or nothing without a reviewed plan."""
    trade = r["facility"].get("power_cap")
    if not trade:
        return []
    rows = [_cap_row("caps", i) for i in range(len(trade["caps"]))]
    if trade["fitting_cap"] is not None:
        rows.append(_cap_row("fitting_cap", lever="highest cap that fits: "))
    if trade["fewer_supernodes"] is not None:
        f = PC + ("fewer_supernodes",)
        rows.append(((N(*f, "supernodes", kind="count"), L(" of "),
                      N(*f, "of_supernodes", kind="count"), L(" supernodes at TDP")),
                     L("100.0%"), L("-"), N(*f, "tokens_per_s", kind="tokens_per_s"),
                     N(*f, "energy_per_token_j", kind="number"), N(*f, "rack_w", kind="w"),
                     N(*f, "cluster_peak_w", kind="w"), L("yes")))
    blocks: list = [Table("Power cap against fewer racks (board power cap per accelerator)",
                          COLUMNS, tuple(rows)),
                    Paragraph((L("recommended: "), T(*PC, "recommended"))),
                    Paragraph((L("DVFS curve: "), T(*PC, "source")))]
    blocks += [Paragraph((T(*PC, "notes", i),)) for i in range(len(trade["notes"]))]
    return blocks
