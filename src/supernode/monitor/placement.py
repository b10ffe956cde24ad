"""Where every GPU, host, NIC and switch sits: the topology labels alerts carry.

Built from the resolved cluster (:class:`~supernode.spec.resolved.Cluster`) and the
existing fabric layout (:func:`supernode.topology.cluster_graph.fabric_layout`, the same
one the topology builders wire): a GPU's supernode is its scale-up domain, its leaf the
leaf switch of the NIC nearest to it (the NIC-to-GPU PCIe attachment of
:func:`~supernode.topology.cluster_graph.nic_accelerator`), its rack, power shelf and CDU
follow the cluster's racks and the monitoring layout. Names come from the configured
patterns (or an explicit host-name list), so they can match the real ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.errors import InputError
from supernode.monitor.config import MonitorConfig
from supernode.spec.resolved import Cluster
from supernode.topology.cluster_graph import fabric_layout
from supernode.topology.fat_tree import FabricLayout
from supernode.topology.sizing import RadixError

#: Largest cluster the topology info file is generated for (accelerators).
MAX_MONITORED_ACCELERATORS = 262_144
#: Topology labels on GPU, host and NIC signals, in the order they are joined.
GPU_TOPOLOGY = ("cluster", "supernode", "rack", "power_shelf", "cdu", "leaf", "rail")
HOST_TOPOLOGY = ("cluster", "role", "supernode", "rack", "power_shelf", "cdu")
NIC_TOPOLOGY = ("cluster", "supernode", "rack", "power_shelf", "cdu", "leaf", "rail")
SWITCH_TOPOLOGY = ("cluster", "tier")
RACK_TOPOLOGY = ("cluster", "cdu")


@dataclass(frozen=True)
class HostPlace:
    """A host (compute host or NVSwitch tray) and its failure domains."""

    hostname: str
    role: str
    supernode: str
    rack: str
    power_shelf: str
    cdu: str


@dataclass(frozen=True)
class GpuPlace:
    """One GPU: its host, index in the host, and topology labels ('' when none)."""

    host: HostPlace
    gpu: int
    supernode: str
    leaf: str
    rail: str


@dataclass(frozen=True)
class NicPlace:
    """One scale-out NIC port and the leaf switch it plugs into."""

    host: HostPlace
    device: str
    rail: int
    leaf: str


@dataclass(frozen=True)
class MonitorTopology:
    """Every monitored unit of a cluster, with its topology labels."""

    cluster: str
    hosts: tuple[HostPlace, ...]
    gpus: tuple[GpuPlace, ...]
    nics: tuple[NicPlace, ...]
    switches: tuple[tuple[str, str], ...]  # (name, tier)
    racks: tuple[tuple[str, str], ...]  # (name, cdu)

    def compute_hosts(self) -> list[HostPlace]:
        """Hosts that carry GPUs (not NVSwitch trays)."""
        return [h for h in self.hosts if h.role == "compute"]

    def children(self, parent: str) -> dict[str, set[str]]:
        """Hosts under each value of ``parent`` (supernode, rack, power_shelf, cdu)."""
        out: dict[str, set[str]] = {}
        for host in self.compute_hosts():
            out.setdefault(getattr(host, parent), set()).add(host.hostname)
        return out


def _fmt(config: MonitorConfig, key: str, **fields: Any) -> str:
    pattern = getattr(config.names, key)
    try:
        return pattern.format(**fields)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise InputError(f"names.{key}", f"cannot format {pattern!r}: {exc}") from None


@dataclass(frozen=True)
class _Layout:
    hosts_per_rack: int
    hosts_per_shelf: int
    racks_per_cdu: int


def _layout(cluster: Cluster, config: MonitorConfig) -> _Layout:
    racks = cluster.spec.racks
    per_domain = max(1, cluster.scale_up.size // cluster.host.accelerators_per_host)
    per_rack = config.layout.hosts_per_rack or (racks.hosts_per_rack if racks else per_domain)
    per_shelf = config.layout.hosts_per_power_shelf or per_rack
    if per_shelf > per_rack:
        raise InputError("layout.hosts_per_power_shelf", f"{per_shelf} hosts per power shelf "
                                                         f"exceed {per_rack} hosts per rack")
    return _Layout(per_rack, per_shelf, config.layout.racks_per_cdu)


def _host_place(cluster: Cluster, config: MonitorConfig, layout: _Layout, h: int,
                name: str) -> HostPlace:
    rack = h // layout.hosts_per_rack
    shelf = (h % layout.hosts_per_rack) // layout.hosts_per_shelf
    domain = h * cluster.host.accelerators_per_host // cluster.scale_up.size
    return HostPlace(
        hostname=name, role="compute",
        supernode=_fmt(config, "supernode", cluster=cluster.name, supernode=domain,
                       supernode1=domain + 1),
        rack=_fmt(config, "rack", cluster=cluster.name, rack=rack, rack1=rack + 1),
        power_shelf=_fmt(config, "power_shelf", cluster=cluster.name, rack=rack,
                         rack1=rack + 1, shelf=shelf, shelf1=shelf + 1),
        cdu=_fmt(config, "cdu", cluster=cluster.name, cdu=rack // layout.racks_per_cdu,
                 cdu1=rack // layout.racks_per_cdu + 1),
    )


def _host_names(cluster: Cluster, config: MonitorConfig, layout: _Layout) -> list[str]:
    if config.hostnames:
        if len(config.hostnames) != cluster.hosts:
            raise InputError("hostnames", f"{len(config.hostnames):,} names for "
                                          f"{cluster.hosts:,} hosts; give one per host")
        return list(config.hostnames)
    names = []
    for h in range(cluster.hosts):
        domain = h * cluster.host.accelerators_per_host // cluster.scale_up.size
        names.append(_fmt(config, "host", cluster=cluster.name, host=h, host1=h + 1,
                          supernode=domain, rack=h // layout.hosts_per_rack,
                          slot=h % layout.hosts_per_rack))
    return names


def _leaf_name(config: MonitorConfig, fabric: FabricLayout | None, host: int,
               rail: int | None, cluster: str) -> str:
    if fabric is None or rail is None:
        return ""
    return _fmt(config, "switch", cluster=cluster, tier="leaf",
                index=fabric.leaf_of(host, rail), index1=fabric.leaf_of(host, rail) + 1)


def _switches(config: MonitorConfig, fabric: FabricLayout | None,
              cluster: str) -> tuple[tuple[str, str], ...]:
    if fabric is None:
        return ()
    tiers = ("leaf", "spine", "core")
    return tuple((_fmt(config, "switch", cluster=cluster, tier=tier, index=i, index1=i + 1),
                  tier) for tier, count in zip(tiers, fabric.sizing.switches, strict=False)
                 for i in range(count))


def _trays(cluster: Cluster, config: MonitorConfig, layout: _Layout,
           hosts: list[HostPlace]) -> list[HostPlace]:
    """NVSwitch trays of multi-host switched domains (racks.switch_trays_per_rack)."""
    racks = cluster.spec.racks
    per_host = cluster.host.accelerators_per_host
    per_domain = cluster.scale_up.size // per_host
    if (cluster.scale_up.kind not in ("nvswitch", "hybrid") or racks is None
            or not racks.switch_trays_per_rack or per_domain < 2):
        return []
    racks_per_domain = max(1, -(-per_domain // layout.hosts_per_rack))
    trays = racks.switch_trays_per_rack * racks_per_domain
    out = []
    for domain in range(cluster.supernodes):
        first = hosts[domain * per_domain]
        for t in range(trays):
            rack_index = (domain * per_domain) // layout.hosts_per_rack + t // \
                racks.switch_trays_per_rack
            rack = _fmt(config, "rack", cluster=cluster.name, rack=rack_index,
                        rack1=rack_index + 1)
            name = _fmt(config, "switch_tray", cluster=cluster.name, supernode=domain,
                        supernode1=domain + 1, tray=t, tray1=t + 1, rack=rack_index)
            out.append(HostPlace(name, "nvswitch_tray", first.supernode, rack,
                                 first.power_shelf, first.cdu))
    return out


def monitor_topology(cluster: Cluster, config: MonitorConfig) -> MonitorTopology:
    """Every host, GPU, NIC, switch and rack of ``cluster`` with its labels."""
    if cluster.accelerators > MAX_MONITORED_ACCELERATORS:
        raise InputError("supernodes", f"{cluster.accelerators:,} accelerators; monitoring "
                                       f"files are generated for at most "
                                       f"{MAX_MONITORED_ACCELERATORS:,}")
    layout = _layout(cluster, config)
    names = _host_names(cluster, config, layout)
    if len(set(names)) != len(names):
        raise InputError("hostnames", "host names must be unique")
    hosts = [_host_place(cluster, config, layout, h, n) for h, n in enumerate(names)]
    try:
        fabric = fabric_layout(cluster)
    except RadixError as exc:
        raise InputError("scale_out.switch", str(exc)) from None
    per_host, nic_count = cluster.host.accelerators_per_host, cluster.host.nic_count
    gpus, nics = [], []
    for h, host in enumerate(hosts):
        for i in range(per_host):
            a = h * per_host + i
            if a >= cluster.accelerators:
                break
            rail = i * nic_count // per_host if nic_count else None
            supernode = _fmt(config, "supernode", cluster=cluster.name,
                             supernode=a // cluster.scale_up.size,
                             supernode1=a // cluster.scale_up.size + 1)
            gpus.append(GpuPlace(host, i, supernode,
                                 _leaf_name(config, fabric, h, rail, cluster.name),
                                 "" if rail is None else str(rail)))
        for r in range(nic_count if fabric is not None else 0):
            nics.append(NicPlace(host, _fmt(config, "nic_device", rail=r, rail1=r + 1), r,
                                 _leaf_name(config, fabric, h, r, cluster.name)))
    racks = sorted({(h.rack, h.cdu) for h in hosts})
    return MonitorTopology(cluster.name, tuple(hosts + _trays(cluster, config, layout, hosts)),
                           tuple(gpus), tuple(nics), _switches(config, fabric, cluster.name),
                           tuple(racks))
