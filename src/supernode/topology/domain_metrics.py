"""Closed-form metrics of one scale-up domain (no graph needed).

Definitions (all per domain; bandwidths per direction, bytes/s):

* ``links``: physical links per tier (an NVLink bond of 5 counts 5); ``board_links``:
  those with both ends in one host (PCB traces, not cables).
* ``diameter_hops``: the most links on a shortest path between two accelerators;
  ``diameter_switches``: switches crossed on it; ``mean_hops``: mean shortest-path
  links over all pairs of distinct accelerators.
* ``bisection_bytes_per_s``: the capacity of the minimum cut between the canonical
  halves of the accelerators (switches free to sit on either side), i.e. the max flow
  from one half to the other. Canonical halves: the first ``floor(n/2)`` accelerators
  (full mesh, one switch tier); the first ``floor(G/2)`` groups (two tiers, hybrid);
  the two slabs across the longest dimension (torus/mesh, Dally & Towles ch. 3 and 5). With
  every accelerator in ``A`` or ``B`` and only switches free, the min cut is
  ``e(A,B) + sum over switch chips of min(links from A, links from B)``, exact.
* ``injection_bytes_per_s``: scale-up bandwidth one accelerator can send.
* ``ports_used``: most ports used on one switch chip per tier (in port-equivalents).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from supernode.topology.graph import balanced_loads, spread


@dataclass(frozen=True)
class DomainMetrics:
    """Closed-form metrics of one scale-up domain (see the module docstring)."""

    size: int
    switches: dict[str, int] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=dict)
    board_links: dict[str, int] = field(default_factory=dict)
    diameter_hops: int = 0
    diameter_switches: int = 0
    mean_hops: float = 0.0
    bisection_bytes_per_s: float = 0.0
    injection_bytes_per_s: float = 0.0
    ports_used: dict[str, int] = field(default_factory=dict)
    radix: int | None = None


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _host_pairs(n: int, per_host: int | None) -> int:
    """Accelerator pairs of an ``n``-domain that share a host (hosts aligned to the domain)."""
    if per_host is None:
        return 0
    if n <= per_host:
        return _pairs(n)
    return (n // per_host) * _pairs(per_host)


def full_mesh_metrics(
    n: int, bandwidth_bytes_per_s: float, count: int = 1, per_host: int | None = None,
) -> DomainMetrics:
    """Full mesh of ``n``: ``n(n-1)/2`` edges of ``count`` links; diameter 1; bisection
    ``floor(n/2) * ceil(n/2) * count * bandwidth`` (every A-B pair is one edge)."""
    return DomainMetrics(
        size=n,
        links={"scale_up": _pairs(n) * count},
        board_links={"scale_up": _host_pairs(n, per_host) * count},
        diameter_hops=1 if n > 1 else 0,
        mean_hops=1.0 if n > 1 else 0.0,
        bisection_bytes_per_s=(n // 2) * (n - n // 2) * count * bandwidth_bytes_per_s,
        injection_bytes_per_s=(n - 1) * count * bandwidth_bytes_per_s,
    )


def chip_cut(
    members_a: Sequence[int], members_b: Sequence[int], links: int, chips: int,
    offset_of: Callable[[int], int],
) -> int:
    """Links crossing the cheapest cut of a switch tier: ``sum_c min(a_c, b_c)``.

    ``members_*`` are source indices on each side; source ``i`` spreads ``links`` over
    ``chips`` from ``offset_of(i)`` (:func:`~supernode.topology.graph.spread`).
    """
    a, b = [0] * chips, [0] * chips
    for side, members in ((a, members_a), (b, members_b)):
        for i in members:
            for c, count in spread(links, chips, offset_of(i)):
                side[c] += count
    return sum(min(x, y) for x, y in zip(a, b, strict=True))


def prefix_cut(sources: int, prefix: int, links: int, chips: int) -> int:
    """:func:`chip_cut` with side A the first ``prefix`` of ``sources`` rotating sources, in
    ``O(chips)``: the first ``m`` sources load the chips as :func:`balanced_loads` ``(m)``."""
    a = balanced_loads(prefix, links, chips)
    total = balanced_loads(sources, links, chips)
    return sum(min(x, t - x) for x, t in zip(a, total, strict=True))


def uniform_loads(sources: int, links: int, chips: int) -> list[int]:
    """Ports used on each chip when every source wires its ``links`` alike (the first
    ``links % chips`` chips one more): ``sources * count_c``."""
    return [sources * count for _, count in spread(links, chips)] + [0] * max(
        0, chips - min(chips, links))


def switched_metrics(
    n: int, links: int, chips: int, bandwidth_bytes_per_s: float, radix: int | None = None,
    on_board: bool = False,
) -> DomainMetrics:
    """One switch tier (NVSwitch): ``n * links`` links to ``chips`` chips, every accelerator
    wired alike; diameter 2 (accelerator, chip, accelerator) when every accelerator
    reaches every chip (``links >= chips``); bisection ``sum_c min(a_c, b_c)`` =
    ``floor(n/2) * links * bw``."""
    crossing = (n // 2) * links
    return DomainMetrics(
        size=n,
        switches={"scale_up_l1": chips},
        links={"scale_up_l1": n * links},
        board_links={"scale_up_l1": n * links if on_board else 0},
        diameter_hops=2 if n > 1 else 0,
        diameter_switches=1 if n > 1 else 0,
        mean_hops=2.0 if n > 1 else 0.0,
        bisection_bytes_per_s=crossing * bandwidth_bytes_per_s,
        injection_bytes_per_s=links * bandwidth_bytes_per_s,
        ports_used={"scale_up_l1": max(uniform_loads(n, links, chips))},
        radix=radix,
    )


def l2_plan(
    groups: int, group_size: int, links: int, chips: int, radix: int | None,
    l2_per_plane: int | None = None,
) -> list[tuple[int, int]]:
    """Per plane (L1 chip index): ``(uplinks of each L1 chip, L2 chips in the plane)``."""
    from supernode.topology.scale_up import l2_chips_for_plane

    ups = uniform_loads(group_size, links, chips)
    rad = radix or 2 * max(ups)
    return [(up, l2_per_plane or l2_chips_for_plane(groups, up, rad)) for up in ups]


def two_tier_metrics(
    n: int, group_size: int, links: int, chips: int, bandwidth_bytes_per_s: float,
    radix: int | None = None, on_board: bool = False, l2_per_plane: int | None = None,
) -> DomainMetrics:
    """Two switch tiers: groups of ``group_size`` with ``chips`` L1 chips each, L1 chip ``j``
    up to plane ``j`` of L2 chips (as many ports up as down). Diameter 4 across groups
    (acc, L1, L2, L1, acc), 2 inside one; bisection across the group halves is
    ``sum over L2 chips of min(links from A groups, links from B groups)``."""
    groups = n // group_size
    if groups < 2:
        return switched_metrics(n, links, chips, bandwidth_bytes_per_s, radix, on_board)
    plan = l2_plan(groups, group_size, links, chips, radix, l2_per_plane)
    l2_links = sum(groups * up for up, _ in plan)  # physical uplinks (narrow shares split)
    half = groups // 2
    crossing = 0.0
    for up, per in plan:
        if up >= per:
            crossing += prefix_cut(groups, half, up, per)
        else:
            crossing += half * up  # every group reaches every L2 chip with up/per of a link
    return DomainMetrics(
        size=n,
        switches={"scale_up_l1": groups * chips, "scale_up_l2": sum(p for _, p in plan)},
        links={"scale_up_l1": n * links, "scale_up_l2": l2_links},
        board_links={"scale_up_l1": n * links if on_board else 0, "scale_up_l2": 0},
        diameter_hops=4,
        diameter_switches=3,
        mean_hops=(2 * (group_size - 1) + 4 * (n - group_size)) / (n - 1),
        bisection_bytes_per_s=crossing * bandwidth_bytes_per_s,
        injection_bytes_per_s=links * bandwidth_bytes_per_s,
        ports_used={
            "scale_up_l1": 2 * max(up for up, _ in plan),
            "scale_up_l2": max(math.ceil(groups * up / per) for up, per in plan),
        },
        radix=radix,
    )
