"""What every rule builder reads: the cluster, the configuration, and the topology joins.

:class:`PackContext` turns logical series keys into selectors and wraps a signal in the
join that copies topology labels from the generated info metric (``on_gpu``, ``on_host``,
``on_nic``, ``on_switch``, ``on_rack``). Each join falls back to the bare signal for units
the info metric does not know (``or on(...)``), so a host missing from the cluster
description still alerts, only without topology labels.
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.monitor.config import MonitorConfig
from supernode.monitor.placement import (
    GPU_TOPOLOGY,
    HOST_TOPOLOGY,
    NIC_TOPOLOGY,
    RACK_TOPOLOGY,
    SWITCH_TOPOLOGY,
    MonitorTopology,
)
from supernode.monitor.promql import (
    Aggregate,
    Expr,
    Matcher,
    RangeCall,
    Selector,
    join,
    metric,
)
from supernode.spec.cluster import FacilitySpec
from supernode.spec.resolved import Cluster
from supernode.units import BITS_PER_BYTE

#: Info metrics of the generated topology file, and the recorded de-duplicated copies.
INFO_METRICS = {
    "gpu": "supernode_gpu_info",
    "host": "supernode_host_info",
    "nic": "supernode_nic_info",
    "switch": "supernode_switch_info",
    "rack": "supernode_rack_info",
}


def dedup_record(kind: str) -> str:
    """Name of the recorded, de-duplicated info series of ``kind``."""
    return f"supernode:{kind}_info:dedup"


@dataclass(frozen=True)
class PackContext:
    """The cluster, configuration and topology one rule pack is generated for.

    Without a cluster (``supernode health`` with no ``--cluster``) every component is
    assumed present, topology labels come from info series in the snapshots, and the
    figures a cluster supplies (bandwidths, TDP) are None: rules needing them are left out.
    """

    cluster: Cluster | None
    config: MonitorConfig
    topology: MonitorTopology

    # Label names.
    @property
    def host(self) -> str:
        """The host label."""
        return self.config.labels.host

    @property
    def gpu(self) -> str:
        """The GPU index label."""
        return self.config.labels.gpu

    def keys(self, kind: str) -> tuple[str, ...]:
        """The labels identifying one unit of ``kind`` (the join keys of its info metric)."""
        labels = self.config.labels
        return {"gpu": (labels.host, labels.gpu), "host": (labels.host,),
                "nic": (labels.host, labels.nic_device), "switch": (labels.switch,),
                "rack": (labels.rack,)}[kind]

    def topology_labels(self, kind: str) -> tuple[str, ...]:
        """The topology labels the info metric of ``kind`` adds."""
        return {"gpu": GPU_TOPOLOGY, "host": HOST_TOPOLOGY, "nic": NIC_TOPOLOGY,
                "switch": SWITCH_TOPOLOGY, "rack": RACK_TOPOLOGY}[kind]

    # Selectors.
    def sel(self, key: str, **labels: str) -> Selector:
        """The selector of logical series ``key`` (metric name from the configuration)."""
        return metric(self.config.metric(key), **labels)

    def rec(self, name: str, *matchers: Matcher) -> Selector:
        """A recorded series."""
        return Selector(name, tuple(matchers))

    def over(self, func: str, series: str | Selector, range_s: int,
             offset_s: int = 0) -> RangeCall:
        """``func(series[range] offset)``; ``series`` a logical key or a selector."""
        selector = self.sel(series) if isinstance(series, str) else series
        if offset_s:
            selector = selector.offset(offset_s)
        return RangeCall(func, selector, range_s)

    # Topology joins.
    def info(self, kind: str) -> Selector:
        """The de-duplicated info series of ``kind``."""
        return self.rec(dedup_record(kind))

    def dedup_expr(self, kind: str) -> Aggregate:
        """``group by (keys, topology labels) (info metric)``: one series per unit."""
        return Aggregate("group", metric(INFO_METRICS[kind]),
                         by=self.keys(kind) + self.topology_labels(kind))

    def on(self, kind: str, expr: Expr) -> Expr:
        """``expr`` with the topology labels of ``kind`` joined on, or bare when unknown."""
        keys = self.keys(kind)
        joined = join(expr, self.info(kind), keys, self.topology_labels(kind))
        return joined.or_(expr, on=keys)

    def on_gpu(self, expr: Expr) -> Expr:
        """Join GPU topology labels (supernode, rack, power shelf, CDU, leaf, rail)."""
        return self.on("gpu", expr)

    def on_host(self, expr: Expr) -> Expr:
        """Join host topology labels."""
        return self.on("host", expr)

    def on_nic(self, expr: Expr) -> Expr:
        """Join NIC topology labels (the leaf switch the port plugs into)."""
        return self.on("nic", expr)

    def on_switch(self, expr: Expr) -> Expr:
        """Name switch ports (infiniband_switch_info, by GUID) and join the switch tier."""
        labels = self.config.labels
        names = Aggregate("group", self.sel("switch_info"),
                          by=(labels.switch_guid, labels.switch))
        named = join(expr, names, (labels.switch_guid,), (labels.switch,))
        named_or_bare = named.or_(expr, on=(labels.switch_guid, labels.switch_port))
        return self.on("switch", named_or_bare)

    def on_rack(self, expr: Expr) -> Expr:
        """Join rack topology labels (its CDU)."""
        return self.on("rack", expr)

    @property
    def given_cluster(self) -> Cluster:
        """The cluster, for what is only built for a pack that has one (promtool
        scenarios, the units a parent can hold); ValueError without one."""
        if self.cluster is None:
            raise ValueError("the rule pack was generated without a cluster")
        return self.cluster

    # Figures from the cluster description (SI units; None without a cluster).
    @property
    def scale_up_bytes_per_s(self) -> float | None:
        """Scale-up bandwidth of one accelerator per direction."""
        if self.cluster is None or not self.has_scale_up:
            return None
        return self.cluster.scale_up.bandwidth_per_accelerator_bytes_per_s or None

    @property
    def nic_bytes_per_s(self) -> float | None:
        """Line rate of one scale-out NIC port per direction (capped by the switch port)."""
        if self.cluster is None or not self.has_scale_out:
            return None
        out = self.cluster.scale_out
        nic = self.cluster.host.nic_bandwidth_bytes_per_s
        return min(nic, out.switch.port_bandwidth_bytes_per_s) if out else nic

    @property
    def nic_bits_per_s(self) -> float | None:
        """Line rate of one NIC port in bit/s."""
        rate = self.nic_bytes_per_s
        return None if rate is None else rate * BITS_PER_BYTE

    @property
    def switch_port_bits_per_s(self) -> float | None:
        """Line rate of one scale-out switch port in bit/s."""
        if self.cluster is None or self.cluster.scale_out is None:
            return None
        return self.cluster.scale_out.switch.port_bandwidth_bytes_per_s * BITS_PER_BYTE

    @property
    def link_generation(self) -> str | None:
        """The link-layer generation of the scale-out NIC links (None without a cluster or
        a fabric): :func:`supernode.links.scale_out_generation`."""
        if self.cluster is None or not self.has_scale_out:
            return None
        from supernode.links import scale_out_generation

        gen = scale_out_generation(self.cluster)
        return gen.name if gen is not None else None

    def _thresholds(self):
        from supernode.links import ber_thresholds

        name = self.link_generation
        return ber_thresholds(name) if name is not None else None

    @property
    def drain_ber(self) -> float | None:
        """Symbol (post-FEC) BER at which a link is drained: ``link_ber.drain_ber`` when the
        configuration gives one, else the link model's effective drain level for the
        cluster's link generation (None when neither is known)."""
        given = self.config.link_ber.drain_ber
        if given is not None:
            return given
        found = self._thresholds()
        return found.drain_effective_ber if found is not None else None

    @property
    def watch_ber(self) -> float | None:
        """BER under which a rising trend is ignored: ``link_ber.trend_floor_ber``, else the
        link model's effective watch level (a decade under the drain level)."""
        given = self.config.link_ber.trend_floor_ber
        if given is not None:
            return given
        found = self._thresholds()
        return found.watch_effective_ber if found is not None else None

    @property
    def tdp_w(self) -> float | None:
        """Accelerator TDP in W (None when the catalog has none)."""
        return self.cluster.accelerator.tdp_w if self.cluster else None

    @property
    def coolant_inlet_c(self) -> float:
        """Design coolant supply temperature (facility.coolant_inlet_c and its default)."""
        facility = self.cluster.spec.facility if self.cluster else None
        if facility is None:
            return FacilitySpec.model_fields["coolant_inlet_c"].default
        return facility.coolant_inlet_c

    @property
    def cooling(self) -> str | None:
        """How racks are cooled (None when the cluster does not say)."""
        racks = self.cluster.spec.racks if self.cluster else None
        return racks.cooling if racks else None

    @property
    def has_scale_out(self) -> bool:
        """True when hosts have scale-out NICs on a fabric (or no cluster is given)."""
        if self.cluster is None:
            return True
        return self.cluster.scale_out is not None and self.cluster.host.nic_count > 0

    @property
    def has_nvswitch(self) -> bool:
        """True when the scale-up domain is switched by NVSwitch-class chips."""
        return self.cluster is None or self.cluster.scale_up.kind in ("nvswitch", "hybrid")

    @property
    def has_scale_up(self) -> bool:
        """True when accelerators have a scale-up (NVLink-class) bus."""
        return self.cluster is None or self.cluster.scale_up.kind != "none"
