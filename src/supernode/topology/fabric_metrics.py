"""Closed-form metrics of the scale-out fat tree (no graph needed).

Definitions (bandwidths per direction, bytes/s; ``n`` = NIC-to-leaf link bandwidth
``min(NIC, switch port)``, ``b`` = switch port bandwidth):

* ``diameter_hops``: over all pairs of hosts, the most links on the shortest path between
  their best-placed NIC ports: 2 under one leaf, 4 through a spine (two tiers), 6 through
  a core (three tiers). ``diameter_switches`` = hops - 1 (switches crossed). The seed's
  "at most 4 hops between any two servers" of a two-tier CLOS is ``diameter_hops == 4``
  (server-leaf-spine-leaf-server, 3 switches). Hosts are intervals of leaves (and pods),
  so pairs sharing a leaf (pod) are counted with two pointers in ``O(hosts)``.
* ``bisection_bytes_per_s``: the max flow from the NIC ports of the first ``floor(H/2)``
  hosts to those of the rest, switches free. Flow turns around as low as it can: at a
  leaf with ``a`` and ``b`` endpoints of each side, ``min(a, b)*n``; each side's excess
  climbs, capped by the leaf's uplinks ``u1*b``; in a pod (three tiers) the excesses of
  its leaves meet, the rest climbs capped by ``A*u2*b``; at the top the two sides' excesses
  meet. Because every leaf reaches every spine (every aggregation switch of its pod)
  equally, the fat tree acts as a tree of aggregated capacities, where this greedy is the
  max flow. Non-blocking k-ary fat tree: ``k^3/8 * b`` (Al-Fares et al., SIGCOMM 2008).
  Exact when the top tier is wired uniformly (two tiers; three tiers when every core
  takes as many links from every pod, e.g. pods dividing the radix); an upper bound
  otherwise.
* ``oversubscription``: per tier below the top, the fullest switch's bandwidth from below
  over its bandwidth upward (1.0 = non-blocking): per leaf ``e·n / (u1·b)`` with ``e``
  the endpoints of the fullest leaf, per aggregation switch its leaf links over its
  uplinks. Not the tier average, which a partly filled last leaf dilutes (leaves of 42
  ports down and 22 up are 1.91:1 whatever the average). A NIC faster than its switch
  port counts at the port's rate (the link runs at the slower end).
* ``oversubscription_average``: the tier average, for reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from supernode.topology.fat_tree import FabricLayout
from supernode.topology.graph import FABRIC_TIERS
from supernode.topology.sizing import per_switch_oversubscription


@dataclass(frozen=True)
class FabricMetrics:
    """Closed-form metrics of a fat tree (see the module docstring)."""

    endpoints: int
    max_endpoints: int
    radix: int
    switches: dict[str, int] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=dict)
    diameter_hops: int = 0
    diameter_switches: int = 0
    mean_hops: float = 0.0
    bisection_bytes_per_s: float = 0.0
    oversubscription: dict[str, float] = field(default_factory=dict)
    oversubscription_average: dict[str, float] = field(default_factory=dict)
    ports_used: dict[str, int] = field(default_factory=dict)
    free_ports: dict[str, int] = field(default_factory=dict)


def _sharing_pairs(first: np.ndarray, last: np.ndarray) -> int:
    """Pairs ``h < h'`` with ``first[h'] <= last[h]`` (``first`` non-decreasing): host
    pairs whose leaf (or pod) intervals overlap. ``O(H log H)``."""
    reach = np.searchsorted(first, last, side="right")
    return int(np.sum(reach - np.arange(1, len(first) + 1)))


def fabric_hops(layout: FabricLayout) -> tuple[int, float]:
    """(diameter, mean) NIC-to-NIC link hops between hosts, best NIC pair per host pair."""
    hosts, s = layout.hosts, layout.sizing
    if hosts < 2:
        return 0, 0.0
    first, last = layout.host_spans()
    all_pairs = hosts * (hosts - 1) // 2
    near = _sharing_pairs(first, last)
    if s.tiers < 3:
        mid = all_pairs
    else:
        per_pod = layout.leaves_per_pod
        mid = _sharing_pairs(first // per_pod, last // per_pod)
    mean = (2 * near + 4 * (mid - near) + 6 * (all_pairs - mid)) / all_pairs
    if mid < all_pairs:
        return 6, mean
    return (4 if near < all_pairs else 2), mean


def _leaf_sides(layout: FabricLayout) -> list[tuple[int, int]]:
    """Endpoints of each leaf on side A (the first ``floor(H/2)`` hosts) and side B."""
    half, s = layout.hosts // 2, layout.sizing
    out = []
    for leaf in range(layout.leaves):
        total = layout.leaf_endpoints(leaf)
        if s.tiers == 1:  # every rail switch (or the one switch) sees every host
            a = half * (1 if layout.rail_optimized else layout.nics_per_host)
        elif layout.rail_optimized:  # hosts g*d1 .. of the leaf's group
            a = half - (leaf // layout.rails) * s.down_ports[0]
        else:  # endpoints leaf*d1 ..; side A holds endpoints below half*nics
            a = half * layout.nics_per_host - leaf * s.down_ports[0]
        a = max(0, min(total, a))
        out.append((a, total - a))
    return out


def _turn(sides: list[tuple[float, float]], cap: float) -> tuple[float, float, float]:
    """Flow turned around below a tier and the excess each side pushes up (capped)."""
    local = sum(min(a, b) for a, b in sides)
    up = sum(min(max(a - b, 0.0), cap) for a, b in sides)
    down = sum(min(max(b - a, 0.0), cap) for a, b in sides)
    return local, up, down


def fabric_bisection(layout: FabricLayout, n: float, b: float) -> float:
    """Max flow between the canonical endpoint halves (bytes/s, one direction).

    Halves: the first ``floor(H/2)`` hosts against the rest. Flow turns around as low as it
    can: at each leaf ``min(a, e_b)``; each side's excess climbs, capped by the uplinks;
    at each pod (three tiers) and at the top the two excesses meet. With uniform wiring a
    fat tree behaves as a tree of aggregated capacities, for which this greedy is the max
    flow.
    """
    s = layout.sizing
    sides = [(a * n, bb * n) for a, bb in _leaf_sides(layout)]
    if s.tiers == 1:
        return sum(min(a, bb) for a, bb in sides)
    leaf_cap = s.up_ports[0] * b
    if s.tiers == 2:
        local, up, down = _turn(sides, leaf_cap)
        return local + min(up, down)
    per_pod, pod_cap = layout.leaves_per_pod, layout.aggs_per_pod * s.up_ports[1] * b
    total, pods = 0.0, []
    for p in range(s.pods):
        local, up, down = _turn(sides[p * per_pod:(p + 1) * per_pod], leaf_cap)
        total += local + min(up, down)
        pods.append((up - min(up, down), down - min(up, down)))
    _, up, down = _turn(pods, pod_cap)
    return total + min(up, down)


def _ports_used(layout: FabricLayout) -> dict[str, int]:
    s = layout.sizing
    names = FABRIC_TIERS[: s.tiers]
    leaf_down = max(layout.leaf_endpoints(leaf) for leaf in range(layout.leaves))
    used = {"leaf": leaf_down + (s.up_ports[0] if s.tiers > 1 else 0)}
    if s.tiers == 2:
        used["spine"] = math.ceil(s.uplinks[0] / s.switches[1])
    if s.tiers == 3:
        used["spine"] = math.ceil(layout.leaves_per_pod * s.up_ports[0] / layout.aggs_per_pod)
        used["spine"] += s.up_ports[1]
        used["core"] = min(s.radix, s.uplinks[1])
    return {t: used[t] for t in names}


def fabric_metrics(
    layout: FabricLayout, nic_bandwidth: float, port_bandwidth: float,
) -> FabricMetrics:
    """Closed-form metrics of ``layout`` with NICs of ``nic_bandwidth`` and switch ports of
    ``port_bandwidth`` (bytes/s per direction)."""
    s = layout.sizing
    names = FABRIC_TIERS[: s.tiers]
    n = min(nic_bandwidth, port_bandwidth)
    diameter, mean = fabric_hops(layout)
    below = [s.endpoints * n] + [u * port_bandwidth for u in s.uplinks]
    average = {names[t]: below[t] / below[t + 1] for t in range(s.tiers - 1)}
    worst = per_switch_oversubscription(s, nic_bandwidth, port_bandwidth)
    fullest = max(layout.leaf_endpoints(leaf) for leaf in range(layout.leaves))
    if s.tiers > 1:
        worst = (fullest * n / (s.up_ports[0] * port_bandwidth), *worst[1:])
    over = {names[t]: worst[t] for t in range(s.tiers - 1)}
    return FabricMetrics(
        endpoints=s.endpoints,
        max_endpoints=s.max_endpoints,
        radix=s.radix,
        switches=dict(zip(names, s.switches, strict=True)),
        links=dict(zip(names, s.links_per_tier, strict=True)),
        diameter_hops=diameter,
        diameter_switches=max(0, diameter - 1),
        mean_hops=mean,
        bisection_bytes_per_s=fabric_bisection(layout, n, port_bandwidth),
        oversubscription=over,
        oversubscription_average=average,
        ports_used=_ports_used(layout),
        free_ports=dict(zip(names, s.free_ports, strict=True)),
    )
