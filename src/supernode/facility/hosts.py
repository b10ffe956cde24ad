"""A host's height and weight: the cluster file's, else the host catalog's, else a default.

``host.rack_units`` and ``host.weight_kg`` of the cluster file win; without them the host
catalog (``data/catalog/hosts.yaml``: DGX B200 10U 142.4 kg, DGX H100/H200 8U 130.45 kg, a
generic 8-GPU HGX server 8U...) gives them; a host it does not know takes the facility
defaults (4U, ``weight.per_rack_unit_kg`` per U). Each answer says where it comes from.
"""

from __future__ import annotations

from supernode.catalog import find_host
from supernode.facility.data import facility_data
from supernode.spec.resolved import Cluster

#: Height of a host nobody states or catalogues (U): the facility model's old default.
DEFAULT_HOST_RACK_UNITS = 4


def host_rack_units(cluster: Cluster) -> tuple[int, str]:
    """Height of one host in rack units and where it comes from (stated, catalog, default)."""
    host = cluster.spec.host
    if host.rack_units:
        return host.rack_units, "stated"
    entry = find_host(host.name, host.accelerators_per_host)
    if entry is not None:
        return entry.rack_units, f"catalog ({entry.name or 'generic'})"
    return DEFAULT_HOST_RACK_UNITS, "default"


def host_weight_kg(cluster: Cluster) -> tuple[float, str]:
    """Weight of one host in kg and where it comes from (stated, catalog, per-U default)."""
    host = cluster.spec.host
    if host.weight_kg:
        return host.weight_kg, "stated"
    entry = find_host(host.name, host.accelerators_per_host)
    if entry is not None:
        return entry.weight_kg, f"catalog ({entry.name or 'generic'})"
    units, _ = host_rack_units(cluster)
    return facility_data()["weight"]["per_rack_unit_kg"] * units, "default"


def nic_ports_per_cage(cluster: Cluster) -> int:
    """NIC ports one host-side optical module serves (twin-port OSFP cages: 2; else 1)."""
    host = cluster.spec.host
    entry = find_host(host.name, host.accelerators_per_host)
    return entry.nic_ports_per_cage if entry is not None and entry.name else 1
