"""Closed-form sizing of a scale-out fat tree (leaf-spine, 1 to 3 tiers).

Rules (one place, used by the loader's radix check, the graph builder and the metrics):

* A switch of radix ``k`` below the top tier splits its ports ``d`` down and ``u`` up with
  ``d/u`` the tier's oversubscription: ``u = ceil(k / (1 + o))``, ``d = k - u``.
* Leaves: rail-optimised fabrics give every rail (NIC index inside a host) its own leaves,
  ``ceil(hosts / d1)`` of them; otherwise ``ceil(endpoints / d1)``. On an oversubscribed
  leaf tier the hosts are then spread evenly over a rail's leaves (``ceil(hosts / leaves)``
  on each, the last one fewer when they do not divide) and each leaf gets the uplinks its
  hosts need at the tier's ratio, ``ceil(fill / o)``: 64 hosts at 2:1 on 64-port leaves
  are two leaves of 32 hosts and 16 uplinks (2.00:1), not 42 + 22 hosts on 22 uplinks
  each (1.91:1 and 1:1). A non-blocking leaf keeps every uplink cabled (the reference
  architectures' rule: the spine count divides the uplinks of a full leaf).
* Two tiers: every leaf reaches every spine; the spine count is the smallest ``S >=
  ceil(L*u1/k)`` that divides ``u1`` (equal links per leaf-spine pair). NVIDIA's DGX H100
  SuperPOD reference architecture (RA-11333-001, Table 4) sizes 1/2/3/4 SUs as 8/16/24/32
  leaves and 4/8/16/16 spines: the same rule. A two-tier tree holds at most ``k*d1``
  endpoints (``k^2/2`` non-blocking).
* Three tiers: pods of ``P = min(d2, L)`` leaves, ``A`` aggregation switches per pod (the
  smallest ``A >= ceil(P*u1/d2)`` dividing ``u1``), and cores that take every aggregation
  uplink. A k-ary fat tree (Al-Fares et al., SIGCOMM 2008) has ``k^3/4`` hosts and
  ``5k^2/4`` switches; at most ``k*d2*d1`` endpoints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


class RadixError(ValueError):
    """A design needs more switch ports than the switch has."""

    def __init__(self, message: str, needed_ports: int, radix: int) -> None:
        super().__init__(message)
        self.needed_ports = needed_ports
        self.radix = radix


@dataclass(frozen=True)
class FatTreeSizing:
    """Switch and link counts of one fat tree; tier 0 is the leaf tier."""

    tiers: int
    radix: int
    endpoints: int
    rails: int
    down_ports: tuple[int, ...]
    up_ports: tuple[int, ...]
    switches: tuple[int, ...]
    uplinks: tuple[int, ...]
    pods: int
    max_endpoints: int

    @property
    def links_per_tier(self) -> tuple[int, ...]:
        """Links entering each tier from below: endpoint-leaf, leaf-spine, spine-core."""
        return (self.endpoints, *self.uplinks[: self.tiers - 1])

    @property
    def free_ports(self) -> tuple[int, ...]:
        """Unused ports per tier, left for growth."""
        used = []
        for tier in range(self.tiers):
            below = self.links_per_tier[tier]
            above = self.uplinks[tier] if tier < self.tiers - 1 else 0
            used.append(self.switches[tier] * self.radix - below - above)
        return tuple(used)


def split_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """Return (down, up) ports of a switch of ``radix`` ports at ``oversubscription`` (d/u)."""
    up = math.ceil(radix / (1.0 + oversubscription))
    return radix - up, up


def _smallest_even_divisor(minimum: int, total: int) -> int:
    """Smallest s >= minimum that divides total (or total itself if none is smaller)."""
    for s in range(max(1, minimum), total + 1):
        if total % s == 0:
            return s
    return max(minimum, total)


def max_endpoints(tiers: int, radix: int, oversubscription: tuple[float, ...]) -> int:
    """Most endpoints (NIC ports) a fat tree of ``tiers`` and ``radix`` can hold."""
    ratios = tuple(oversubscription) + (1.0,) * (tiers - 1 - len(oversubscription))
    if tiers == 1:
        return radix
    d1, _ = split_ports(radix, ratios[0])
    if tiers == 2:
        return radix * d1
    d2, _ = split_ports(radix, ratios[1])
    return radix * d2 * d1


def size_fat_tree(
    hosts: int,
    nics_per_host: int,
    radix: int,
    tiers: int,
    oversubscription: tuple[float, ...] = (),
    rail_optimized: bool = True,
) -> FatTreeSizing:
    """Size a fat tree for ``hosts`` hosts with ``nics_per_host`` fabric ports each.

    Raises :class:`RadixError` when the endpoints do not fit ``tiers`` tiers of ``radix``
    ports, saying how many ports would be needed.
    """
    ratios = tuple(oversubscription) + (1.0,) * (tiers - 1 - len(oversubscription))
    endpoints = hosts * nics_per_host
    rails = nics_per_host if rail_optimized else 1
    limit = max_endpoints(tiers, radix, ratios)
    if endpoints > limit:
        needed = _radix_needed(endpoints, tiers, ratios)
        raise RadixError(
            f"{endpoints:,} fabric ports need {tiers}-tier switches of at least {needed} ports; "
            f"{radix}-port switches hold at most {limit:,} (add a tier, oversubscribe, or "
            f"use a higher-radix switch)",
            needed,
            radix,
        )
    if tiers == 1:
        return FatTreeSizing(1, radix, endpoints, rails, (radix,), (0,), (rails,), (), 1, limit)
    d1, u1 = balanced_leaf_ports(hosts, endpoints, rails, radix, ratios[0], rail_optimized)
    leaves = rails * math.ceil(hosts / d1) if rail_optimized else math.ceil(endpoints / d1)
    if tiers == 2:
        spines = _smallest_even_divisor(math.ceil(leaves * u1 / radix), u1)
        return FatTreeSizing(
            2, radix, endpoints, rails, (d1, radix), (u1, 0), (leaves, spines),
            (leaves * u1,), 1, limit,
        )
    d2, u2 = split_ports(radix, ratios[1])
    per_pod = min(d2, leaves)
    pods = math.ceil(leaves / per_pod)
    if pods > radix:  # a core must reach every pod (rounding leaves up per rail can overflow)
        raise RadixError(
            f"{pods} pods of leaves but {radix}-port core switches reach at most {radix} "
            f"pods: use switches of at least {pods} ports, or NIC rails that divide the "
            "leaf count", pods, radix)
    aggs_per_pod = _smallest_even_divisor(math.ceil(per_pod * u1 / d2), u1)
    aggs = aggs_per_pod * pods
    cores = math.ceil(aggs * u2 / radix)
    return FatTreeSizing(
        3, radix, endpoints, rails, (d1, d2, radix), (u1, u2, 0), (leaves, aggs, cores),
        (leaves * u1, aggs * u2), pods, limit,
    )


def balanced_leaf_ports(hosts: int, endpoints: int, rails: int, radix: int, ratio: float,
                        rail_optimized: bool) -> tuple[int, int]:
    """(down ports in use on the fullest leaf, its uplinks): as many leaves as the port split
    needs, the hosts (rail-optimised) or endpoints spread evenly over them, and the uplinks
    that carry the fill at ``ratio`` (down:up)."""
    d_max, u_max = split_ports(radix, ratio)
    if ratio <= 1.0:
        return d_max, u_max
    units = hosts if rail_optimized else endpoints
    leaves = math.ceil(units / d_max)
    fill = math.ceil(units / leaves)
    return fill, min(radix - fill, max(1, math.ceil(fill / ratio)), u_max)


def leaf_fills(sizing: FatTreeSizing, hosts: int) -> list[int]:
    """Hosts (rail-optimised) or endpoints on each leaf of one rail, fullest first: every
    leaf holds ``down_ports[0]`` but the last, which holds what is left."""
    if sizing.tiers < 2:
        return [hosts if sizing.rails > 1 else sizing.endpoints]
    units = hosts if sizing.rails > 1 else sizing.endpoints
    d1 = sizing.down_ports[0]
    full, rest = divmod(units, d1)
    return [d1] * full + ([rest] if rest else [])


def _radix_needed(endpoints: int, tiers: int, ratios: tuple[float, ...]) -> int:
    """Smallest even radix whose tree holds ``endpoints`` (max_endpoints grows with radix)."""
    high = 2
    while max_endpoints(tiers, high, ratios) < endpoints:
        high *= 2
    low = high // 2  # too small (or 1, when high == 2 and the loop below does not run)
    while high - low > 2:
        mid = (low + high) // 4 * 2
        if max_endpoints(tiers, mid, ratios) >= endpoints:
            high = mid
        else:
            low = mid
    return high


def leaf_endpoints_max(sizing: FatTreeSizing) -> int:
    """Endpoints on the fullest leaf: all ``d1`` down ports, unless there are fewer hosts
    (rail-optimised: one port per host of the leaf's rail) or endpoints."""
    d1 = sizing.down_ports[0]
    if sizing.rails > 1:
        return min(d1, max(1, sizing.endpoints // sizing.rails))
    return min(d1, sizing.endpoints)


def per_switch_oversubscription(sizing: FatTreeSizing, nic_bytes_per_s: float,
                                port_bytes_per_s: float) -> tuple[float, ...]:
    """Down:up bandwidth of the fullest switch of each tier below the top (1 = blocking
    free). A NIC faster than its switch port runs at the port's rate. Not the tier
    average: a partly filled last leaf does not dilute a full one (leaves of 30 ports
    down and 16 up are 1.88:1 even if the tier averages less)."""
    n = min(nic_bytes_per_s, port_bytes_per_s)
    out = []
    if sizing.tiers >= 2:
        out.append(leaf_endpoints_max(sizing) * n / (sizing.up_ports[0] * port_bytes_per_s))
    if sizing.tiers == 3:
        leaves, aggs = sizing.switches[0], sizing.switches[1]
        per_pod = min(sizing.down_ports[1], leaves)
        aggs_per_pod = max(1, aggs // max(1, sizing.pods))
        down = math.ceil(per_pod * sizing.up_ports[0] / aggs_per_pod)
        out.append(down / sizing.up_ports[1])
    return tuple(out)
