"""Remote memory access over the supernode: path, hops, latency and bandwidth per tier.

A load to another unit's memory crosses the scale-up fabric to the owner's port, is served
by the owner's home agent (the directory lookup) and memory, and returns. Per tier:

* one-way latency = ``link_latency`` (the domain's one-hop port-to-port latency, the
  cluster's ``scale_up.link_latency_ns``) + one switch latency for each switch hop
  beyond the first (a two-tier domain's cross-group path climbs L1 -> L2 -> L1), or one
  link latency for each link hop beyond the first on a torus or mesh (its mean hops);
* round trip = 2 x one-way + directory lookup + the owner's memory latency; a unit with no
  scale-up ports of its own (a Grace CPU) adds its attach link (NVLink-C2C) each way;
* sustained bandwidth = min(requester's injection, owner's injection, owner's memory
  bandwidth) x line / (line + header): each line travels with a header
  (``data/memory/defaults.yaml`` ``fabric.header_bytes``).
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.memory.defaults import fabric_defaults
from supernode.memory.units import MemoryKind
from supernode.spec.resolved import Cluster
from supernode.units import NS


@dataclass(frozen=True)
class AccessPath:
    """One tier of memory access seen by a requester kind (SI)."""

    requester: str
    target: str
    tier: str
    hops: int
    latency_s: float
    bandwidth_bytes_per_s: float

    def as_dict(self) -> dict[str, object]:
        """JSON form (ns and GB/s for reading)."""
        return {"requester": self.requester, "target": self.target, "tier": self.tier,
                "hops": self.hops, "latency_ns": self.latency_s / NS,
                "bandwidth_gbyte_per_s": self.bandwidth_bytes_per_s / 1e9}


def line_efficiency(line_bytes: int) -> float:
    """Share of a link's bandwidth that carries data when each line travels with
    ``fabric.header_bytes`` of header: line / (line + header)."""
    header = float(fabric_defaults()["header_bytes"])
    return line_bytes / (line_bytes + header)


def _tiers(cluster: Cluster) -> list[tuple[str, int, float]]:
    """(tier name, hops, latency of each hop beyond the first) of the domain's remote
    paths, nearest first: switch hops on a switched domain (each extra one a switch
    latency), link hops on a torus or mesh (each extra one a link latency)."""
    up = cluster.scale_up
    switch_s = up.switch.latency_s if up.switch is not None else 0.0
    if up.size <= 1 or up.kind == "none":
        return []
    if up.kind == "nvswitch":
        if up.switch_tiers == 2 and up.group_size < up.size:
            return [("same switch", 1, switch_s), ("cross tier", 3, switch_s)]
        return [("same switch", 1, switch_s)]
    if up.kind == "hybrid":
        return [("same group", 1, 0.0), ("cross group", 2, switch_s)]
    if up.kind in ("torus", "mesh"):
        # mean hops of a ring of d: d/4 (torus), (d^2-1)/(3d) (line); every hop a link
        hops = sum(d / 4 if up.wraparound and up.kind == "torus" else (d * d - 1) / (3 * d)
                   for d in up.dims)
        return [("neighbour", 1, up.link_latency_s),
                (f"mean ({hops:.1f} hops)", max(1, round(hops)), up.link_latency_s)]
    return [("direct link", 1, 0.0)]


def remote_latency_s(one_hop_s: float, hops: int, extra_hop_s: float,
                     target_memory_s: float, directory_s: float,
                     attach_s: float = 0.0) -> float:
    """Round-trip load latency (s): 2 x (one hop + each hop beyond the first + attach) +
    directory lookup + the owner's memory latency (module docstring)."""
    one_way = one_hop_s + max(0, hops - 1) * extra_hop_s + attach_s
    return 2 * one_way + directory_s + target_memory_s


def access_paths(cluster: Cluster, kinds: list[MemoryKind], line_bytes: int) -> list[AccessPath]:
    """Every tier of access from the first kind (the accelerator) and from each other kind
    to every kind's memory: local, same host (attach link), and each scale-up tier."""
    up = cluster.scale_up
    directory_s = float(fabric_defaults()["directory_latency_ns"]) * NS
    eff = line_efficiency(line_bytes)
    acc = kinds[0]
    paths: list[AccessPath] = []
    for req in kinds:
        req_attach = 0.0 if req is acc else req.attach_latency_s
        for tgt in kinds:
            tgt_attach = 0.0 if tgt is acc else tgt.attach_latency_s
            if req is tgt:
                paths.append(AccessPath(req.name, tgt.name, "local", 0, tgt.local_latency_s,
                                        tgt.bandwidth_bytes_per_s))
            if req is not tgt and (req is acc or tgt is acc):
                # the same host: the attach link (C2C) joins the CPU to its accelerators
                link = (tgt if req is acc else req).attach_bandwidth_bytes_per_s
                attach_s = (tgt if req is acc else req).attach_latency_s
                paths.append(AccessPath(req.name, tgt.name, "same host", 0,
                                        2 * attach_s + directory_s + tgt.local_latency_s,
                                        min(link, tgt.bandwidth_bytes_per_s) * eff))
            for tier, hops, per_hop_s in _tiers(cluster):
                inject = min(req.attach_bandwidth_bytes_per_s, tgt.attach_bandwidth_bytes_per_s,
                             acc.attach_bandwidth_bytes_per_s)
                latency = remote_latency_s(up.link_latency_s, hops, per_hop_s,
                                           tgt.local_latency_s, directory_s,
                                           req_attach + tgt_attach)
                paths.append(AccessPath(req.name, tgt.name, tier, hops, latency,
                                        min(inject, tgt.bandwidth_bytes_per_s) * eff))
    return paths
