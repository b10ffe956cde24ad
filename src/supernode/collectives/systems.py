"""The collective fabric of a machine: from a cluster file, or a validation case's system.

From a cluster (:func:`fabric_from_cluster`), every tier comes from the topology:

* ``scale_up``: the domain's per-accelerator bandwidth and layout (switch, full mesh,
  torus with its per-dimension links), its one-way latency (links and switch chips), and
  NVLS only where the switch chips reduce and the link generation has an in-network
  efficiency;
* scale-out, one tier per fat-tree level the traffic can stay under: the ranks of one
  leaf group (no uplink crossed), of one pod (three tiers), of the whole tree. Per rank:
  NICs per accelerator x the slower of NIC and switch port; crossing a level's uplinks
  costs the fullest switch's down:up ratio there (per leaf, not the tier average; leaf
  and aggregation ratios multiply for traffic leaving a pod); latency of the path (NICs,
  links, switches); SHARP where the switches reduce.

From a validation case's ``system`` block (:func:`fabric_from_validation_system`): the
job's GPUs per NVLink domain at the given per-GPU bandwidth, the NIC rate per GPU on a
non-blocking fabric, latencies left to the efficiency tables (the topology is not given).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from supernode.collectives.efficiency import EfficiencyTable, Tables, as_tables, get_table
from supernode.collectives.fabric import Fabric, FabricTier, make_tier
from supernode.collectives.generations import (
    scale_out_efficiency_name,
    scale_up_link,
    vendor_uses_ethernet,
)
from supernode.collectives.routing import ROUTINGS
from supernode.errors import InputError
from supernode.spec.resolved import Cluster
from supernode.units import GBIT_PER_S, GBYTE_PER_S


def _reduces(tables: Tables, table: str, flag: bool) -> bool:
    return bool(flag) and get_table(tables, table).in_network_efficiency is not None


def scale_up_tier(cluster: Cluster, tables: Tables) -> tuple[FabricTier, bool]:
    """The scale-up tier of a resolved cluster and whether its table is borrowed."""
    up = cluster.scale_up
    bw = up.bandwidth_per_accelerator_bytes_per_s
    table, kind, borrowed = scale_up_link(cluster.accelerator.name, bw,
                                          cluster.accelerator.spec.scale_up_name)
    switch_s = up.switch.latency_s if up.switch else 0.0
    if up.kind in ("torus", "mesh"):
        from supernode.spec.resolved import ports_per_dimension

        dims = tuple(up.dims) or (up.size,)
        ports = max(1, sum(ports_per_dimension(dims)))
        count = max(1, up.links_per_accelerator // ports)
        per_dim = tuple(up.dim_link_bandwidth_bytes_per_s) or (up.link_bandwidth_bytes_per_s,
                                                               ) * len(dims)
        return make_tier("scale_up", up.size, bw, table, latency_s=up.link_latency_s,
                         kind="torus", dims=dims, wraparound=up.kind == "torus"
                         and up.wraparound, dim_bandwidth_bytes_per_s=tuple(
                             count * b for b in per_dim), tables=tables), borrowed
    if up.kind == "full_mesh":
        return make_tier("scale_up", up.size, bw, table, latency_s=up.link_latency_s,
                         kind="full_mesh", tables=tables), borrowed
    hops = 4 if up.switch_tiers == 2 and up.size > up.group_size else 2
    latency = hops * up.link_latency_s + (hops - 1) * switch_s
    nvls = _reduces(tables, table, bool(up.switch and up.switch.in_network_reduction))
    return make_tier("scale_up", up.size, bw, table, latency_s=latency,
                     in_network_reduction=nvls, tables=tables), borrowed


def scale_out_tiers(cluster: Cluster, inner: int, tables: Tables) -> list[FabricTier]:
    """Scale-out tiers of a resolved cluster above domains of ``inner`` ranks."""
    from supernode.topology.sizing import per_switch_oversubscription, size_fat_tree

    out = cluster.scale_out
    nic = min(cluster.host.nic_bandwidth_bytes_per_s, out.switch.port_bandwidth_bytes_per_s
              ) if out else 0.0
    per_rank = cluster.nics_per_accelerator * nic
    if out is None or per_rank <= 0:
        raise InputError("host.nics", "the cluster has no fabric between its accelerators")
    name = scale_out_efficiency_name(nic, out.switch.ethernet)
    sizing = size_fat_tree(cluster.hosts, cluster.host.nic_count, out.switch.radix, out.tiers,
                           out.oversubscription, out.rail_optimized)
    ratios = per_switch_oversubscription(sizing, nic, out.switch.port_bandwidth_bytes_per_s)
    per_host = cluster.host.accelerators_per_host
    nics = max(cluster.host.nic_count, 1)
    hosts_per_leaf = sizing.down_ports[0] // (1 if out.rail_optimized else nics)
    sizes = [max(hosts_per_leaf, 1) * per_host]
    if out.tiers == 3:
        sizes.append(sizes[0] * max(1, min(sizing.down_ports[1], sizing.switches[0])
                                    // max(1, sizing.rails)))
    total = cluster.accelerators
    link, nic_s = out.link_latency_s, cluster.host.nic_latency_s
    sw = out.switch.latency_s
    sharp = _reduces(tables, name, out.in_network_reduction)
    tiers: list[FabricTier] = []
    previous, crossing = inner, 1.0
    level_names = ("scale_out_leaf", "scale_out_pod")
    uplinks = max(1, sizing.up_ports[0]) if out.tiers > 1 and sizing.up_ports else 0
    for level, size in enumerate(sizes[: out.tiers - 1]):
        if previous < size < total and size % previous == 0:
            tiers.append(make_tier(level_names[level], size, per_rank, name, kind="nic",
                                   oversubscription=crossing, latency_s=_path_latency(
                                       level, nic_s, link, sw),
                                   in_network_reduction=sharp, tables=tables,
                                   routing=out.routing, hash_ports=uplinks if level else 0,
                                   hash_group=sizes[0]))
            previous = size
        crossing *= ratios[level] if level < len(ratios) else 1.0
    tiers.append(make_tier("scale_out", max(total, previous + 1) if previous >= total
                           else total, per_rank, name, kind="nic",
                           oversubscription=max(1.0, crossing),
                           latency_s=_path_latency(out.tiers - 1, nic_s, link, sw),
                           in_network_reduction=sharp, tables=tables, routing=out.routing,
                           hash_ports=uplinks, hash_group=sizes[0]))
    return tiers


def _path_latency(level: int, nic_s: float, link_s: float, switch_s: float) -> float:
    """One-way NIC-to-NIC latency through fat-tree level ``level`` (0: one leaf)."""
    return 2 * nic_s + 2 * (level + 1) * link_s + (2 * level + 1) * switch_s


def fabric_from_cluster(cluster: Cluster,
                        tables: Tables | Mapping[str, EfficiencyTable] | None = None
                        ) -> tuple[Fabric, bool]:
    """The collective fabric of a resolved cluster (module docstring) and whether its
    scale-up table is borrowed."""
    tables = as_tables(tables)
    size = max(cluster.scale_up.size, 1)
    tiers: list[FabricTier] = []
    borrowed = False
    if size > 1 and cluster.scale_up.bandwidth_per_accelerator_bytes_per_s > 0:
        tier, borrowed = scale_up_tier(cluster, tables)
        tiers.append(tier)
    if cluster.supernodes > 1 or not tiers:
        outer = scale_out_tiers(cluster, size if tiers else 1, tables)
        if not tiers:  # one accelerator per domain: each is its own part, behind its NICs
            tiers.append(FabricTier("host", 1, outer[0].bandwidth_bytes_per_s, 0.0, False,
                                    outer[0].efficiency, 1.0, "nic"))
        tiers += outer
    return Fabric(tuple(tiers)), borrowed


def fabric_from_validation_system(system: dict[str, Any], ranks: int | None = None, *,
                                  tables: Tables | Mapping[str, EfficiencyTable] | None = None
                                  ) -> Fabric:
    """Build the fabric of a validation case's ``system`` block.

    Scale-up tier: ``scale_up_gpus`` ranks at ``scale_up_gigabytes_per_s`` per GPU per
    direction (a job of ``gpus`` that does not fill whole domains spreads evenly over the
    fewest that hold it: :func:`job_domain_size`), laid out as the part's link is (a full
    mesh for xGMI, else a switch);
    NVLS when ``in_network_reduction`` is true, or null and the link generation has it
    (NVLink SHARP from NVLink 4 on). Scale-out tier (only when the system or ``ranks``
    exceed one domain): ``scale_out_gigabits_per_s`` NIC line rate per GPU, non-blocking,
    no SHARP, InfiniBand for NVIDIA parts and RoCE for AMD parts (module docstring of
    :mod:`.generations`).
    """
    tables = as_tables(tables)
    total = max(int(system.get("gpus") or 0), int(ranks or 1))
    up_gpus = job_domain_size(_positive_int(system, "scale_up_gpus"), total)
    up_bw = _positive_float(system, "scale_up_gigabytes_per_s") * GBYTE_PER_S
    accelerator = system.get("accelerator")
    up_name, kind, _ = scale_up_link(str(accelerator) if accelerator else None, up_bw)
    flag = system.get("in_network_reduction")
    nvls = _reduces(tables, up_name, flag is None or bool(flag)) and up_gpus > 2 \
        and kind == "switch"
    tiers = [make_tier("scale_up", up_gpus, up_bw, up_name, kind=kind,
                       in_network_reduction=nvls, tables=tables)]
    total = max(total, up_gpus)
    if total > up_gpus:
        nic_bw = _positive_float(system, "scale_out_gigabits_per_s") * GBIT_PER_S
        size = math.ceil(total / up_gpus) * up_gpus
        ethernet = _ethernet(system, accelerator)
        name = scale_out_efficiency_name(nic_bw, ethernet)
        routing = _routing(system, ethernet)
        leaf_gpus = LEAF_DOWN_BYTES_PER_S / nic_bw
        tiers.append(make_tier("scale_out", size, nic_bw, name, kind="nic", tables=tables,
                               routing=routing, hash_ports=LEAF_UPLINKS
                               if total > leaf_gpus else 0, hash_group=int(leaf_gpus)))
    return Fabric(tuple(tiers))


#: The leaf a validation system is taken to hang off (the topology is not given): a
#: 51.2 Tb/s switch (Spectrum-4 SN5600, Tomahawk 5: 128 x 400G) with half its ports
#: down, non-blocking, hosts' NICs on the same leaf: 25.6 Tb/s of NICs per leaf (64 GPUs
#: at 400 Gb/s, 32 at 800 Gb/s) and 64 uplinks to hash over. A job of more GPUs than one
#: leaf holds crosses the spines.
LEAF_DOWN_BYTES_PER_S = 25.6e12 / 8
LEAF_UPLINKS = 64


def _ethernet(system: dict[str, Any], accelerator: Any) -> bool:
    """The case's stated ``scale_out_fabric`` (``roce`` / ``infiniband``), else the vendor
    assumption (:func:`~supernode.collectives.generations.vendor_uses_ethernet`)."""
    fabric = system.get("scale_out_fabric")
    if fabric is None:
        return vendor_uses_ethernet(accelerator)
    if fabric not in ("roce", "infiniband"):
        raise InputError("system.scale_out_fabric", f"got {fabric!r}; roce or infiniband")
    return bool(fabric == "roce")


def _routing(system: dict[str, Any], ethernet: bool) -> str:
    """The case's stated ``routing``, else the fabric's default (adaptive on InfiniBand,
    ECMP on RoCE: :func:`supernode.cluster.resolve.default_routing`'s sources)."""
    routing = system.get("routing")
    if routing is None:
        return "ecmp" if ethernet else "adaptive"
    if routing not in ROUTINGS:
        raise InputError("system.routing", f"got {routing!r}; one of {', '.join(ROUTINGS)}")
    return str(routing)


def job_domain_size(domain_gpus: int, job_gpus: int) -> int:
    """GPUs of a job per NVLink domain when the job does not fill whole domains: it spreads
    evenly over the fewest domains that hold it (256 GPUs on 72-GPU racks: 4 x 64, as a
    scheduler placing whole trays does), so that no group straddles a half-used domain."""
    if job_gpus <= domain_gpus or job_gpus % domain_gpus == 0:
        return domain_gpus
    domains = -(-job_gpus // domain_gpus)
    while job_gpus % domains:
        domains += 1
    return job_gpus // domains


def _positive_float(system: dict[str, Any], key: str) -> float:
    value = system.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise InputError(f"system.{key}", f"got {value!r}; a positive number is required")
    return float(value)


def _positive_int(system: dict[str, Any], key: str) -> int:
    value = _positive_float(system, key)
    if value != int(value):
        raise InputError(f"system.{key}", f"got {value!r}; an integer is required")
    return int(value)
