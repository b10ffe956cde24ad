"""Plans whose groups straddle a scale-up domain rank after those that do not (issue 24).

A plan *straddles* when one of its tensor-, context- or expert-parallel groups (the
step's most frequent and heaviest traffic) does not sit inside one scale-up domain under
its rank order: the worst group of the dimension crosses a tier beyond tier 0
(:func:`~supernode.planner.mapping.slowest_tier`, the same group view the estimate and
the simulator cost: :func:`supernode.collectives.groups.group_view`). EP 16 on 72-GPU
racks is one: 72 / 16 = 4.5, so some EP groups cross the rack boundary.

Ranking (:func:`rank_straddling`): plans inside the domains first, by the objective; a
straddling plan may rank among them only when its objective beats the best plan inside by
more than the margin (:data:`STRADDLE_MARGIN`); otherwise it is demoted after every plan
inside, and its note says why. ``supernode design``, where the simulator runs, then asks
the simulation to confirm a straddling winner by the same margin
(:func:`supernode.design.plans.confirm_straddling_best`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from supernode.errors import InputError
from supernode.estimate.system import SystemModel
from supernode.planner.mapping import Layout, group_factors, group_size, slowest_tier

#: Share of the objective a straddling plan must win by to rank above the plans inside
#: the domains. 10 %: the design review already treats a disagreement of 10 % between the
#: estimate and the simulation as one to reconcile (``supernode.design.simulation.
#: RECONCILE_GAP``); a straddling win smaller than what the two models may disagree by is
#: not one either can vouch for, and a straddling group's cost depends on where the
#: scheduler puts the job (the estimate assumes the planner's rank order from rank 0).
STRADDLE_MARGIN = 0.10
#: The groups whose straddling demotes a plan (their collectives are on the critical path
#: every layer; DP and PP cross the scale-out tier by design).
STRADDLE_DIMS = ("tp", "cp", "ep")
_NAMES = {"tp": "TP", "cp": "CP", "ep": "EP"}


class Ranked(Protocol):
    """What :func:`rank_straddling` reads and writes on a search record."""

    layout: Layout
    objective: float
    straddles: tuple[tuple[str, int], ...]
    rank_note: str | None


_R = TypeVar("_R", bound=Ranked)


def check_margin(margin: float, path: str = "--straddle-margin") -> float:
    """``margin`` when it is a share in [0, 1); InputError naming ``path`` otherwise."""
    if not 0.0 <= margin < 1.0:
        raise InputError(path, f"must be a share in [0, 1) (0.1 = 10 %), got {margin}")
    return float(margin)


def straddling_groups(layout: Layout, system: SystemModel) -> tuple[tuple[str, int], ...]:
    """The ``(dimension, group size)`` of each TP, CP and EP group of ``layout`` that does
    not sit inside one scale-up domain (empty when the fabric has no scale-up tier: there
    is no domain to straddle)."""
    if system.fabric.tiers[0].name != "scale_up":
        return ()
    factors = group_factors(layout)
    if factors is None:
        return ()
    out = []
    for dim in STRADDLE_DIMS:
        f = factors.get(dim)
        if f and group_size(f) > 1 and slowest_tier(system.fabric, f) > 0:
            out.append((dim, group_size(f)))
    return tuple(out)


def describe(straddles: Sequence[tuple[str, int]], domain_size: int) -> str:
    """``EP group of 16 straddles 72-GPU domains`` (groups joined with ``and``)."""
    groups = " and ".join(f"{_NAMES[d]} group of {n}" for d, n in straddles)
    verb = "straddle" if len(straddles) > 1 else "straddles"
    return f"{groups} {verb} {domain_size}-GPU domains"


def win_share(straddling: float, inside: float) -> float:
    """How much a straddling plan's objective (or step time) beats the best plan inside
    by, as a share of the latter (negative when it is worse)."""
    return 1.0 - straddling / inside if inside > 0 else 0.0


def rank_straddling(records: list[_R], system: SystemModel, domain_size: int,
                    margin: float = STRADDLE_MARGIN, label=None) -> list[_R]:
    """``records`` (already sorted best first) re-ranked: plans inside the domains and the
    straddling ones that win by more than ``margin`` first, then the demoted straddlers,
    each group in the given order; sets ``straddles`` and ``rank_note`` on every record.

    ``label``: the text naming a record in a note (default: its sizes).
    """
    label = label or _label
    for r in records:
        r.straddles = straddling_groups(r.layout, system)
    inside = next((r for r in records if not r.straddles), None)
    if inside is None:
        return records
    kept: list[_R] = []
    demoted: list[_R] = []
    for r in records:
        if not r.straddles:
            kept.append(r)
            continue
        win = win_share(r.objective, inside.objective)
        what = describe(r.straddles, domain_size)
        if win > margin:
            r.rank_note = (f"kept above {label(inside)}: {what}, but wins by {win:.0%} "
                           f"(> the {margin:.0%} margin)")
            kept.append(r)
        else:
            r.rank_note = f"ranked after {label(inside)}: {what}; " + (
                f"wins by only {win:.0%}" if win > 0 else "no faster than it")
            demoted.append(r)
    return kept + demoted


def _label(r: Ranked) -> str:
    x = r.layout
    return f"TP={x.tp} PP={x.pp} DP={x.dp} CP={x.cp} EP={x.ep}"
