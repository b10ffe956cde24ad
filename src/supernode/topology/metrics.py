"""The topology report of a cluster, from closed forms only (instant at 100k accelerators).

:func:`topology_report` combines the metrics of one scale-up domain
(:mod:`~supernode.topology.domain_metrics`, :mod:`~supernode.topology.grid_metrics`) and of
the scale-out fat tree (:mod:`~supernode.topology.fabric_metrics`) into a
:class:`TopologyReport`. Conventions: bandwidths in bytes/s per direction unless a name says
otherwise; counts per tier are whole-cluster; cables are copper or optical links (PCB
traces are not cables), and every optical cable has two transceivers.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from supernode.catalog import find_host
from supernode.spec.resolved import Cluster
from supernode.topology.cluster_graph import fabric_layout, host_link_count
from supernode.topology.domain_metrics import DomainMetrics
from supernode.topology.fabric_metrics import FabricMetrics, fabric_metrics
from supernode.topology.graph import LINK_TIERS, SWITCH_TIERS, cable_medium
from supernode.topology.kinds import SCALE_UP_KINDS
from supernode.topology.sizing import leaf_fills
from supernode.topology.thresholds import (
    OVERSUBSCRIPTION_MAX,
    SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S,
    SCALE_UP_TO_HBM_MIN,
    SERVER_HOPS_MAX,
    Check,
)


@dataclass(frozen=True)
class TopologyReport:
    """Counts, hops, bandwidths and ratios of one cluster (SI units; per direction)."""

    name: str
    accelerators: int
    hosts: int
    supernodes: int
    scale_up_kind: str
    scale_up_domain_size: int
    switches: dict[str, int]
    links: dict[str, int]
    cables: dict[str, int]
    optical_transceivers: dict[str, int]
    #: Optical modules per tier: link ends over the ports one module serves (a twin-port
    #: OSFP cage serves two), the physical transceivers to buy and power.
    optical_modules: dict[str, int]
    diameter_hops: dict[str, int | None]
    diameter_switch_hops: dict[str, int | None]
    mean_hops: dict[str, float | None]
    bisection_bandwidth_bytes_per_s: dict[str, float | None]
    injection_bandwidth_bytes_per_s: dict[str, float]
    scale_up_to_hbm_bandwidth_ratio: float
    scale_up_to_hbm_bandwidth_ratio_per_direction: float
    scale_up_to_scale_out_ratio: float | None
    scale_out_links_per_supernode: int
    scale_out_bandwidth_per_supernode_bytes_per_s: float
    oversubscription: dict[str, float]
    oversubscription_average: dict[str, float]
    radix: dict[str, int | None]
    ports_used_per_switch: dict[str, int]
    free_ports: dict[str, int]
    fabric_endpoints: int
    fabric_max_endpoints: int | None
    zero_load_latency_s: dict[str, float | None]
    leaf_fill: list[int] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict with stable keys (the ``--json`` output)."""
        out = dataclasses.asdict(self)
        out["checks"] = [dataclasses.asdict(c) for c in self.checks]
        return out


def _tiers(values: dict[str, int], order: tuple[str, ...]) -> dict[str, int]:
    return {t: values[t] for t in order if values.get(t)}


def _cables(
    cluster: Cluster, dom: DomainMetrics, fab: FabricMetrics | None,
) -> tuple[dict[str, int], dict[str, int]]:
    """Cables and optical transceivers per tier (two per optical cable)."""
    cables: dict[str, int] = {}
    optics: dict[str, int] = {}
    for tier, links in dom.links.items():
        medium = cable_medium(cluster.scale_up.medium, tier)
        cables[tier] = 0 if medium == "pcb" else cluster.supernodes * (
            links - dom.board_links.get(tier, 0))
        optics[tier] = 2 * cables[tier] if medium == "optical" else 0
    if fab is not None and cluster.scale_out is not None:
        for tier, links in fab.links.items():
            medium = cable_medium(cluster.scale_out.medium, tier)
            cables[tier] = 0 if medium == "pcb" else links
            optics[tier] = 2 * links if medium == "optical" else 0
    return _tiers(cables, LINK_TIERS), _tiers(optics, LINK_TIERS)


def module_ends(cluster: Cluster, tier: str, links: int) -> tuple[int, int]:
    """Optical modules of ``links`` optical links on scale-out ``tier``: (host side, switch
    side). A switch end shares a module with ``switch.ports_per_cage - 1`` others
    (Quantum-2 QM9700: 32 twin-port OSFP cages for 64 ports), and a NIC end with the host's
    ``nic_ports_per_cage - 1`` (host catalog: DGX H100/B200, 4 OSFP cages for 8 NICs). Only
    the leaf tier has host ends (NIC to leaf); the tiers above have a switch at each end."""
    so = cluster.scale_out
    per_switch = max(1, so.switch.ports_per_cage) if so is not None else 1
    if tier != "leaf":
        return 0, 2 * math.ceil(links / per_switch)
    entry = find_host(cluster.spec.host.name, cluster.host.accelerators_per_host,
                      generic=False)
    per_nic = entry.nic_ports_per_cage if entry is not None else 1
    return math.ceil(links / per_nic), math.ceil(links / per_switch)


def _modules(cluster: Cluster, fab: FabricMetrics | None, optics: dict[str, int]
             ) -> dict[str, int]:
    """Optical modules per tier: each optical link has two ends; on the scale-out tiers
    the ends share modules as :func:`module_ends` counts."""
    out = dict(optics)
    if fab is None or cluster.scale_out is None:
        return out
    for tier in fab.links:
        ends = optics.get(tier, 0)
        if ends:
            out[tier] = sum(module_ends(cluster, tier, ends // 2))
    return out


def _latency(cluster: Cluster, dom: DomainMetrics, fab: FabricMetrics | None
             ) -> dict[str, float | None]:
    up = cluster.scale_up
    switch_s = up.switch.latency_s if up.switch else 0.0
    out: dict[str, float | None] = {
        "scale_up": dom.diameter_hops * up.link_latency_s + dom.diameter_switches * switch_s
    }
    so = cluster.scale_out
    out["scale_out"] = None if fab is None or so is None else (
        2 * cluster.host.nic_latency_s + fab.diameter_hops * so.link_latency_s
        + fab.diameter_switches * so.switch.latency_s)
    return out


def topology_report(cluster: Cluster) -> TopologyReport:
    """Closed-form topology metrics of ``cluster`` (no graph is built)."""
    per_host = cluster.host.accelerators_per_host
    kind = SCALE_UP_KINDS.get(cluster.scale_up.kind, "scale_up.kind")
    dom = kind.metrics(cluster.scale_up, per_host)
    layout = fabric_layout(cluster)
    so = cluster.scale_out
    fab = None
    if layout is not None and so is not None:
        fab = fabric_metrics(layout, cluster.host.nic_bandwidth_bytes_per_s,
                             so.switch.port_bandwidth_bytes_per_s)
    n = cluster.supernodes
    switches = {t: n * c for t, c in dom.switches.items()} | (fab.switches if fab else {})
    links = {"host": host_link_count(cluster)} | {t: n * c for t, c in dom.links.items()}
    links |= fab.links if fab else {}
    cables, optics = _cables(cluster, dom, fab)
    inj_up = dom.injection_bytes_per_s
    inj_out = scale_out_injection_bytes_per_s(cluster)
    hbm = cluster.accelerator.memory_bandwidth_bytes_per_s
    nics_per_domain = cluster.nics_per_accelerator * cluster.scale_up.size
    bis_out = fab.bisection_bytes_per_s if fab else None
    report = TopologyReport(
        name=cluster.name,
        accelerators=cluster.accelerators,
        hosts=cluster.hosts,
        supernodes=n,
        scale_up_kind=cluster.scale_up.kind,
        scale_up_domain_size=cluster.scale_up.size,
        switches=_tiers(switches, SWITCH_TIERS),
        links=_tiers(links, LINK_TIERS),
        cables=cables,
        optical_transceivers=optics,
        optical_modules=_modules(cluster, fab, optics),
        diameter_hops={"scale_up": dom.diameter_hops,
                       "scale_out": fab.diameter_hops if fab else None},
        diameter_switch_hops={"scale_up": dom.diameter_switches,
                              "scale_out": fab.diameter_switches if fab else None},
        mean_hops={"scale_up": dom.mean_hops, "scale_out": fab.mean_hops if fab else None},
        bisection_bandwidth_bytes_per_s={
            "scale_up_domain": dom.bisection_bytes_per_s,
            "scale_out": bis_out,
            "cluster": _cluster_bisection(n, dom.bisection_bytes_per_s, bis_out),
        },
        injection_bandwidth_bytes_per_s={"scale_up": inj_up, "scale_out": inj_out},
        scale_up_to_hbm_bandwidth_ratio=2 * inj_up / hbm,
        scale_up_to_hbm_bandwidth_ratio_per_direction=inj_up / hbm,
        scale_up_to_scale_out_ratio=inj_up / inj_out if inj_out else None,
        scale_out_links_per_supernode=round(nics_per_domain) if so else 0,
        scale_out_bandwidth_per_supernode_bytes_per_s=inj_out * cluster.scale_up.size,
        oversubscription=fab.oversubscription if fab else {},
        oversubscription_average=fab.oversubscription_average if fab else {},
        radix=_radix(cluster, fab),
        ports_used_per_switch=dom.ports_used | (fab.ports_used if fab else {}),
        free_ports=_free_ports(cluster, dom) | (fab.free_ports if fab else {}),
        fabric_endpoints=fab.endpoints if fab else 0,
        fabric_max_endpoints=fab.max_endpoints if fab else None,
        zero_load_latency_s=_latency(cluster, dom, fab),
        leaf_fill=leaf_fills(layout.sizing, layout.hosts) if layout is not None else [],
    )
    return dataclasses.replace(report, checks=threshold_checks(report))


def threshold_checks(report: TopologyReport) -> list[Check]:
    """Evaluate the seed thresholds that apply to ``report``."""
    checks = [
        Check("scale_up_to_hbm_bandwidth_ratio", report.scale_up_to_hbm_bandwidth_ratio,
              SCALE_UP_TO_HBM_MIN, ">=",
              report.scale_up_to_hbm_bandwidth_ratio >= SCALE_UP_TO_HBM_MIN, "seed 001 §2.1"),
    ]
    if report.fabric_endpoints:
        worst = max(report.oversubscription.values(), default=1.0)
        checks.append(Check("oversubscription", worst, OVERSUBSCRIPTION_MAX, "<=",
                            worst <= OVERSUBSCRIPTION_MAX + 1e-9, "seed 001 §2.2"))
        per_sn = report.scale_out_bandwidth_per_supernode_bytes_per_s
        checks.append(Check("scale_out_bandwidth_per_supernode_bytes_per_s", per_sn,
                            SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S, ">=",
                            per_sn >= SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S, "seed 001 §2.2"))
        hops = report.diameter_hops["scale_out"] or 0
        checks.append(Check("diameter_hops.scale_out", hops, SERVER_HOPS_MAX, "<=",
                            hops <= SERVER_HOPS_MAX, "seed 001 §2.3 (two-tier CLOS)"))
    return checks


def scale_out_injection_bytes_per_s(cluster: Cluster) -> float:
    """What one accelerator injects into the fabric per direction: its NICs, each at the
    slower of NIC and switch port (an 800G NIC on a 400G port runs at 400G)."""
    so = cluster.scale_out
    if so is None:
        return 0.0
    link = min(cluster.host.nic_bandwidth_bytes_per_s, so.switch.port_bandwidth_bytes_per_s)
    return cluster.nics_per_accelerator * link


def _cluster_bisection(supernodes: int, domain: float, fabric: float | None) -> float:
    """Half the supernodes against the other half: the fabric carries it when there are
    two or more; one supernode is cut inside, through its domain and the fabric."""
    if supernodes >= 2:
        return fabric or 0.0
    return domain + (fabric or 0.0)


def _radix(cluster: Cluster, fab: FabricMetrics | None) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    up = cluster.scale_up
    if up.switch is not None and up.kind in ("nvswitch", "hybrid"):
        out["scale_up_l1"] = up.switch.radix
        if up.kind == "nvswitch" and up.switch_tiers == 2:
            out["scale_up_l2"] = up.switch.radix
    if fab is not None:
        out |= dict.fromkeys(fab.switches, fab.radix)
    return out


def _free_ports(cluster: Cluster, dom: DomainMetrics) -> dict[str, int]:
    """Unused ports per scale-up switch tier, whole cluster (port-equivalents)."""
    if dom.radix is None:
        return {}
    per_tier = {t: c * dom.radix - _ports_in_use(dom, t) for t, c in dom.switches.items()}
    return {t: cluster.supernodes * v for t, v in per_tier.items()}


def _ports_in_use(dom: DomainMetrics, tier: str) -> int:
    """Ports in use on all chips of ``tier`` in one domain (port-equivalents): every
    accelerator link takes one L1 port, and as many again go up when there is an L2."""
    down = dom.links["scale_up_l1"]
    return 2 * down if tier == "scale_up_l1" and "scale_up_l2" in dom.switches else down
