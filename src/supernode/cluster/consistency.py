"""Cross-field checks of a resolved cluster: counts that must agree, ports that must exist.

Each failed check is an :class:`InputError` naming the field to change and what is
allowed (three kinds of failure, docs/architecture.md: malformed input is rejected at
load with the path and a fix).
"""

from __future__ import annotations

import math

from supernode.catalog import find_host
from supernode.errors import InputError
from supernode.spec.resolved import MAX_ACCELERATORS, Cluster, ports_per_dimension
from supernode.topology.sizing import RadixError, size_fat_tree


def check_cluster(cluster: Cluster) -> None:
    """Raise :class:`InputError` for the first inconsistency found in ``cluster``."""
    _check_size(cluster)
    _check_hosts(cluster)
    up = cluster.scale_up
    checks = {
        "torus": _check_grid,
        "mesh": _check_grid,
        "full_mesh": _check_full_mesh,
        "nvswitch": _check_switched,
        "hybrid": _check_hybrid,
    }
    if up.kind in checks:
        checks[up.kind](cluster)
    _check_scale_out(cluster)
    _check_racks(cluster)


#: Most rack units a rack holds (tall 52U racks plus margin); beyond, hosts do not fit.
MAX_RACK_UNITS = 58


def _check_racks(cluster: Cluster) -> None:
    racks = cluster.spec.racks
    if racks is None:
        return
    if racks.switch_trays_per_rack and cluster.scale_up.kind not in ("nvswitch", "hybrid"):
        raise InputError("racks.switch_trays_per_rack",
                         f"switch trays need a switched scale-up domain (nvswitch or hybrid); "
                         f"scale_up.kind is {cluster.scale_up.kind!r}: use 0")
    # the stated height, else a named host's from the host catalog (DGX B200 10U...)
    host = cluster.spec.host
    entry = find_host(host.name, host.accelerators_per_host, generic=False)
    units = host.rack_units or (entry.rack_units if entry is not None else None)
    if units is not None:
        height = racks.hosts_per_rack * units + racks.switch_trays_per_rack
        if height > MAX_RACK_UNITS:
            raise InputError("racks.hosts_per_rack",
                             f"{racks.hosts_per_rack} hosts of {units}U"
                             + (f" + {racks.switch_trays_per_rack} switch trays"
                                if racks.switch_trays_per_rack else "")
                             + f" = {height}U do not fit a rack (at most {MAX_RACK_UNITS}U)")


def _check_size(cluster: Cluster) -> None:
    if cluster.accelerators > MAX_ACCELERATORS:
        raise InputError(
            "scale_up.size" if cluster.scale_up.size > MAX_ACCELERATORS else "supernodes",
            f"{cluster.supernodes:,} x {cluster.scale_up.size:,} = {cluster.accelerators:,} "
            f"accelerators is more than the {MAX_ACCELERATORS:,} the toolkit models; "
            "model a representative slice of the cluster instead",
        )


def _check_hosts(cluster: Cluster) -> None:
    per_host = cluster.host.accelerators_per_host
    size = cluster.scale_up.size
    if size % per_host and per_host % size:
        raise InputError(
            "scale_up.size",
            f"a domain of {size} accelerators cannot be built from hosts of {per_host}: "
            f"use a multiple of {per_host} (or a divisor of it)",
        )


def _check_grid(cluster: Cluster) -> None:
    up = cluster.scale_up
    if any(d < 1 for d in up.dims):
        raise InputError("scale_up.dims", f"dimensions must be >= 1, got {list(up.dims)}")
    if math.prod(up.dims) != up.size:
        raise InputError(
            "scale_up.dims",
            f"{' x '.join(map(str, up.dims))} = {math.prod(up.dims):,} accelerators, "
            f"but scale_up.size is {up.size:,}: the dimensions must multiply to the size",
        )
    needed = sum(ports_per_dimension(up.dims))
    if needed > up.links_per_accelerator:
        raise InputError(
            "scale_up.links_per_accelerator",
            f"a {up.kind} of dims {list(up.dims)} needs {needed} ports per accelerator; "
            f"{up.links_per_accelerator} available",
        )
    if up.dim_link_bandwidth_bytes_per_s and len(up.dim_link_bandwidth_bytes_per_s) != len(
        up.dims
    ):
        raise InputError(
            "scale_up.dim_link_bandwidth_gbyte_per_s",
            f"needs one value per dimension ({len(up.dims)}), "
            f"got {len(up.dim_link_bandwidth_bytes_per_s)}",
        )


def _check_full_mesh(cluster: Cluster) -> None:
    up = cluster.scale_up
    if up.links_per_accelerator < up.size - 1:
        raise InputError(
            "scale_up.links_per_accelerator",
            f"a full mesh of {up.size} needs {up.size - 1} ports per accelerator (one per "
            f"peer); {up.links_per_accelerator} available: use a switched or torus domain",
        )


def _check_switched(cluster: Cluster) -> None:
    up = cluster.scale_up
    if up.switch is None:
        raise InputError("scale_up.switch", "kind 'nvswitch' needs a switch (catalog name or "
                                            "inline), e.g. switch: nvswitch-gen3")
    if up.switch_chips < 1:
        raise InputError("scale_up.switch_chips", "kind 'nvswitch' needs switch_chips >= 1 "
                                                  "(switch chips or planes per domain)")
    group = up.group_size if up.switch_tiers == 2 else up.size
    if up.size % group:
        raise InputError(
            "scale_up.group_size", f"group_size {group} must divide scale_up.size {up.size}"
        )
    links = group * up.links_per_accelerator
    if up.switch_chips > links:
        raise InputError("scale_up.switch_chips",
                         f"{up.switch_chips:,} switch chips but only {links:,} accelerator "
                         f"links ({group} accelerators x {up.links_per_accelerator}) reach "
                         f"them: a chip without a link carries nothing; use at most {links:,}")
    per_chip = math.ceil(links / up.switch_chips)
    if up.switch_tiers == 2:
        per_chip *= 2  # as many ports up to the second tier as down (non-blocking)
    if per_chip > up.switch.radix:
        raise InputError(
            "scale_up.switch_chips",
            f"{group} accelerators x {up.links_per_accelerator} links over {up.switch_chips} "
            f"switch chips need {per_chip} ports per chip; {up.switch.name} has "
            f"{up.switch.radix}: use at least "
            f"{math.ceil(per_chip * up.switch_chips / up.switch.radix)} chips",
        )


def _check_hybrid(cluster: Cluster) -> None:
    up = cluster.scale_up
    hybrid = up.hybrid
    assert hybrid is not None  # guaranteed by ScaleUpSpec validation
    if up.size % hybrid.group_size:
        raise InputError(
            "scale_up.hybrid.group_size",
            f"group_size {hybrid.group_size} must divide scale_up.size {up.size}",
        )
    ports = hybrid.group_links_per_accelerator + hybrid.uplinks_per_accelerator
    if ports > cluster.accelerator.scale_up_ports:
        raise InputError(
            "scale_up.hybrid",
            f"group links + uplinks = {ports} ports per accelerator; "
            f"{cluster.accelerator.name} has {cluster.accelerator.scale_up_ports}",
        )
    if hybrid.group_kind == "full_mesh" and (
        hybrid.group_links_per_accelerator < hybrid.group_size - 1
    ):
        raise InputError(
            "scale_up.hybrid.group_links_per_accelerator",
            f"a full-mesh group of {hybrid.group_size} needs {hybrid.group_size - 1} links",
        )
    if hybrid.group_kind in ("mesh", "torus"):
        dims = hybrid.group_dims or []
        if math.prod(dims) != hybrid.group_size:
            raise InputError(
                "scale_up.hybrid.group_dims",
                f"group_dims {dims} must multiply to group_size {hybrid.group_size}",
            )
    if up.switch is None:
        raise InputError("scale_up.switch", "kind 'hybrid' needs a switch between groups")


def _check_scale_out(cluster: Cluster) -> None:
    out = cluster.scale_out
    if out is None:
        if cluster.supernodes > 1:
            raise InputError(
                "scale_out", f"{cluster.supernodes} supernodes need a scale_out fabric"
            )
        return
    if cluster.host.nic_count < 1:
        raise InputError("host.nics", "a scale_out fabric needs host.nics with count >= 1")
    try:
        size_fat_tree(
            cluster.hosts,
            cluster.host.nic_count,
            out.switch.radix,
            out.tiers,
            out.oversubscription,
            out.rail_optimized,
        )
    except RadixError as exc:
        raise InputError("scale_out.tiers", str(exc)) from exc
