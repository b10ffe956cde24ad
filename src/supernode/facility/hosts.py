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


def _stated_or_catalogued(cluster: Cluster, field: str) -> tuple[float, str] | None:
    """The host's ``field`` as the cluster file states it, else as the host catalog gives
    it, with where it comes from; None when neither knows it."""
    host = cluster.spec.host
    stated = getattr(host, field)
    if stated:
        return stated, "stated"
    entry = find_host(host.name, host.accelerators_per_host)
    if entry is not None:
        return getattr(entry, field), f"catalog ({entry.name or 'generic'})"
    return None


def host_rack_units(cluster: Cluster) -> tuple[int, str]:
    """Height of one host in rack units and where it comes from (stated, catalog, default)."""
    known = _stated_or_catalogued(cluster, "rack_units")
    if known is not None:
        return int(known[0]), known[1]
    return DEFAULT_HOST_RACK_UNITS, "default"


def host_weight_kg(cluster: Cluster) -> tuple[float, str]:
    """Weight of one host in kg and where it comes from (stated, catalog, per-U default)."""
    known = _stated_or_catalogued(cluster, "weight_kg")
    if known is not None:
        return float(known[0]), known[1]
    units, _ = host_rack_units(cluster)
    return facility_data()["weight"]["per_rack_unit_kg"] * units, "default"
