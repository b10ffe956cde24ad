"""Resolve a validated cluster document into the SI model (:mod:`supernode.spec.resolved`).

Catalog names are looked up, defaults filled in from the chip, units converted once to
SI (bytes, bytes/s, seconds, watts, FLOP/s), and cross-field consistency checked
(:mod:`supernode.cluster.consistency`).
"""

from __future__ import annotations

from dataclasses import replace

from supernode.catalog import find_accelerator, find_switch
from supernode.catalog.power import sustained_clock_ratio
from supernode.cluster.consistency import check_cluster
from supernode.errors import InputError
from supernode.spec.cluster import ClusterSpec
from supernode.spec.hardware import AcceleratorSpec, SwitchSpec
from supernode.spec.resolved import (
    Accelerator,
    Cluster,
    Host,
    ScaleOut,
    ScaleUp,
    convert_accelerator,
    convert_switch,
)
from supernode.units import GBIT_PER_S, GBYTE_PER_S, KW, NS


def _lookup_accelerator(spec: ClusterSpec) -> AcceleratorSpec:
    ref = spec.host.accelerator
    if isinstance(ref, AcceleratorSpec):
        return ref
    inline = {a.name: a for a in spec.accelerators}
    return inline[ref] if ref in inline else find_accelerator(ref, path="host.accelerator")


def _lookup_switch(spec: ClusterSpec, ref: str | SwitchSpec, path: str) -> SwitchSpec:
    if isinstance(ref, SwitchSpec):
        return ref
    inline = {s.name: s for s in spec.switches}
    return inline[ref] if ref in inline else find_switch(ref, path=path)


def resolve_cluster(spec: ClusterSpec) -> Cluster:
    """Resolve catalog references, fill defaults from the chip, convert to SI, check counts.

    Raises :class:`InputError` (with the field path) for inconsistent documents.
    """
    chip = convert_accelerator(_lookup_accelerator(spec))
    if spec.host.accelerator_power_limit_w is not None:
        chip = replace(chip, power_limit_w=spec.host.accelerator_power_limit_w)
    # a cap the DVFS curve does not cover is refused here, with its field path
    sustained_clock_ratio(chip.tdp_w, chip.power_limit_w, "host.accelerator_power_limit_w")
    scale_up = _resolve_scale_up(spec, chip)
    scale_out = _resolve_scale_out(spec)
    nics = spec.host.nics
    host = Host(
        name=spec.host.name,
        accelerators_per_host=spec.host.accelerators_per_host,
        nic_count=nics.count if nics else 0,
        nic_bandwidth_bytes_per_s=nics.speed_gbit_per_s * GBIT_PER_S if nics else 0.0,
        nic_latency_s=nics.latency_ns * NS if nics else 0.0,
        power_w=spec.host.power_kw * KW if spec.host.power_kw else None,
    )
    cluster = Cluster(spec.name, chip, host, scale_up, scale_out, spec.supernodes, spec)
    check_cluster(cluster)
    return cluster


def _resolve_scale_up(spec: ClusterSpec, chip: Accelerator) -> ScaleUp:
    up = spec.scale_up
    links = up.links_per_accelerator or chip.scale_up_ports
    if up.kind != "none" and links > chip.scale_up_ports > 0:
        raise InputError(
            "scale_up.links_per_accelerator",
            f"{links} links but {chip.name} has {chip.scale_up_ports} scale-up ports",
        )
    link_bw = (
        up.link_bandwidth_gbyte_per_s * GBYTE_PER_S
        if up.link_bandwidth_gbyte_per_s is not None
        else chip.scale_up_port_bandwidth_bytes_per_s
    )
    latency = up.link_latency_ns * NS if up.link_latency_ns is not None else chip.scale_up_latency_s
    switch = (
        convert_switch(_lookup_switch(spec, up.switch, "scale_up.switch")) if up.switch else None
    )
    dims = tuple(up.dims or ())
    dim_bw = tuple(b * GBYTE_PER_S for b in up.dim_link_bandwidth_gbyte_per_s or ())
    return ScaleUp(
        kind=up.kind,
        size=up.size,
        links_per_accelerator=links if up.kind != "none" else 0,
        link_bandwidth_bytes_per_s=link_bw,
        link_latency_s=latency,
        medium=up.medium,
        switch=switch,
        switch_chips=up.switch_chips or 0,
        switch_tiers=up.switch_tiers,
        group_size=up.group_size or up.size,
        dims=dims,
        wraparound=up.wraparound,
        dim_link_bandwidth_bytes_per_s=dim_bw,
        hybrid=up.hybrid,
    )


def _resolve_scale_out(spec: ClusterSpec) -> ScaleOut | None:
    out = spec.scale_out
    if out is None:
        return None
    switch = convert_switch(_lookup_switch(spec, out.switch, "scale_out.switch"))
    ratios = tuple(out.oversubscription) + (1.0,) * (out.tiers - 1 - len(out.oversubscription))
    sharp = out.in_network_reduction
    return ScaleOut(
        tiers=out.tiers,
        rail_optimized=out.rail_optimized,
        switch=switch,
        oversubscription=ratios,
        link_latency_s=out.link_latency_ns * NS,
        medium=out.medium,
        in_network_reduction=switch.in_network_reduction if sharp is None else sharp,
        routing=out.routing or default_routing(switch.ethernet),
    )


def default_routing(ethernet: bool) -> str:
    """The routing a fabric runs when the cluster file does not say: adaptive on
    InfiniBand (NVIDIA's InfiniBand bring-up procedure: "AR is enabled by default in the
    opensm.conf file", routing engine ar_updn; NCCL turns AR on by default on the IB link
    layer, src/transport/net_ib/init.cc), a static ECMP hash on Ethernet (Cumulus Linux:
    adaptive routing "default setting is disabled")."""
    return "ecmp" if ethernet else "adaptive"
