"""Fire/silent scenarios of the facility rules and of the grouped (parent) alerts."""

from __future__ import annotations

from collections.abc import Callable

from supernode.monitor.context import PackContext
from supernode.monitor.placement import GpuPlace, HostPlace
from supernode.monitor.scenarios import Check, Kit, Scenario, _frozen, ramp, xid_counter

HOUR = 3600


def _cdu(kit: Kit, index: int) -> dict[str, str]:
    name = kit.ctx.config.names.cdu.format(cdu=index, cdu1=index + 1,
                                           cluster=kit.ctx.topology.cluster)
    return {kit.ctx.config.labels.cdu: name}


def _coolant(kit: Kit, index: int, supply: float, delta_t: float) -> None:
    kit.constant(kit.ctx.config.metric("coolant_supply_temperature"), _cdu(kit, index), supply)
    kit.constant(kit.ctx.config.metric("coolant_return_temperature"), _cdu(kit, index),
                 supply + delta_t)


def delta_t_band(ctx: PackContext) -> Scenario:
    """CDU 0 at dT between the normal band and the fault line (warns), CDU 1 inside the
    band, CDU 2 above the fault line (the critical rule's, not this one's), CDU 3 under
    the band (warns); both after 15 minutes."""
    t = ctx.config.thresholds
    kit = Kit(ctx, 21)
    band = ((t.coolant_delta_t_max_c + t.coolant_delta_t_fault_c) / 2,
            (t.coolant_delta_t_min_c + t.coolant_delta_t_max_c) / 2,
            t.coolant_delta_t_fault_c + 1, t.coolant_delta_t_min_c / 2)
    for index, delta in enumerate(band):
        _coolant(kit, index, ctx.coolant_inlet_c, delta)
    return kit.scenario("CoolantDeltaTOutOfRange", [
        Check(10 * 60, "CoolantDeltaTOutOfRange", ()),
        Check(20 * 60, "CoolantDeltaTOutOfRange", (_frozen(_cdu(kit, 0)),
                                                    _frozen(_cdu(kit, 3))))])


def delta_t_fault(ctx: PackContext) -> Scenario:
    """CDU 0 one degree above the fault line (fires after 5 min); CDU 1 just under it."""
    t = ctx.config.thresholds
    kit = Kit(ctx, 11)
    _coolant(kit, 0, ctx.coolant_inlet_c, t.coolant_delta_t_fault_c + 1)
    _coolant(kit, 1, ctx.coolant_inlet_c, t.coolant_delta_t_fault_c - 1)
    return kit.scenario("CoolantDeltaTCritical", [
        Check(3 * 60, "CoolantDeltaTCritical", ()),
        Check(10 * 60, "CoolantDeltaTCritical", (_frozen(_cdu(kit, 0)),))])


def supply(ctx: PackContext) -> Scenario:
    """CDU 0 supplies 1 C over design + margin (fires after 10 min); CDU 1 1 C over design."""
    margin = ctx.config.thresholds.coolant_supply_margin_c
    kit = Kit(ctx, 16)
    _coolant(kit, 0, ctx.coolant_inlet_c + margin + 1, 6.5)
    _coolant(kit, 1, ctx.coolant_inlet_c + 1, 6.5)
    return kit.scenario("CoolantSupplyTemperatureHigh", [
        Check(5 * 60, "CoolantSupplyTemperatureHigh", ()),
        Check(15 * 60, "CoolantSupplyTemperatureHigh", (_frozen(_cdu(kit, 0)),))])


def flow(ctx: PackContext) -> Scenario:
    """Hourly. Flow 100 for 30 h; CDU 0 then 80 (under 0.85 of baseline, fires), CDU 1 90."""
    kit = Kit(ctx, 33)
    for index, after in ((0, 80.0), (1, 90.0)):
        kit.add(ctx.config.metric("coolant_flow"), _cdu(kit, index), [100.0] * 30 + [after])
    return kit.scenario("CoolantFlowBelowBaseline", [
        Check(30 * HOUR, "CoolantFlowBelowBaseline", ()),
        Check(32 * HOUR, "CoolantFlowBelowBaseline", (_frozen(_cdu(kit, 0)),))], HOUR,
        long=True)


def _rack(kit: Kit, rack: str, cdu: str, outlet_rise: float) -> None:
    labels = {kit.ctx.config.labels.rack: rack}
    kit.info("rack", labels | {"cluster": kit.ctx.topology.cluster, "cdu": cdu})
    kit.constant(kit.ctx.config.metric("rack_inlet_temperature"), labels, 25.0)
    kit.constant(kit.ctx.config.metric("rack_outlet_temperature"), labels, 25.0 + outlet_rise)


def rack_air(ctx: PackContext) -> Scenario:
    """Rack 0's air rises 2 C more than the limit (fires after 15 min); rack 1 5 C less."""
    limit = ctx.config.thresholds.rack_air_delta_t_max_c
    kit = Kit(ctx, 21)
    (r0, c0), (r1, c1) = ctx.topology.racks[0], ctx.topology.racks[-1]
    _rack(kit, r0, c0, limit + 2)
    _rack(kit, r1, c1, limit - 5)
    expected = {ctx.config.labels.rack: r0, "cluster": ctx.topology.cluster, "cdu": c0}
    return kit.scenario("RackAirDeltaTHigh", [
        Check(10 * 60, "RackAirDeltaTHigh", ()),
        Check(20 * 60, "RackAirDeltaTHigh", (_frozen(expected),))])


def _parent(ctx: PackContext, parent: str, value: str) -> tuple[tuple[str, str], ...]:
    return _frozen({"cluster": ctx.topology.cluster, parent: value})


def nvlink_supernode(ctx: PackContext) -> Scenario:
    """Three GPUs of one supernode and one GPU of another each retrain an NVLink at
    minute 5: the supernode with three fires."""
    kit = Kit(ctx, 16)
    gpus = [kit.gpu(0), kit.gpu(1), kit.gpu(2)]
    other = next(g for g in ctx.topology.gpus if g.supernode != gpus[0].supernode)
    for gpu in (*gpus, other):
        kit.gpu_info(gpu)
        kit.gpu_series("nvlink_recovery_errors", gpu, [0.0] * 5 + [1.0])
    return kit.scenario("NvlinkFaultsInSupernode", [
        Check(3 * 60, "NvlinkFaultsInSupernode", ()),
        Check(10 * 60, "NvlinkFaultsInSupernode",
              (_parent(ctx, "supernode", gpus[0].supernode),))])


def leaf(ctx: PackContext) -> Scenario:
    """Three NIC links under one leaf and one under another go down at minute 5."""
    kit = Kit(ctx, 16)
    nics, other = kit.nics_sharing_leaf(3)
    for nic in (*nics, other):
        kit.nic_info(nic)
        kit.nic_series("nic_link_downed", nic, [0.0] * 5 + [1.0])
    return kit.scenario("LinkFaultsUnderLeafSwitch", [
        Check(3 * 60, "LinkFaultsUnderLeafSwitch", ()),
        Check(10 * 60, "LinkFaultsUnderLeafSwitch", (_parent(ctx, "leaf", nics[0].leaf),))])


def _healthy(kit: Kit, gpu: GpuPlace) -> None:
    kit.gpu_info(gpu)
    kit.gpu_series("gpu_temperature", gpu, [50.0])


def _xid_hosts(ctx: PackContext, name: str, parent: str, hosts: list[HostPlace],
               other: HostPlace) -> Scenario:
    """GPU 0 of each of ``hosts`` and of ``other`` logs an Xid at minute 5."""
    kit = Kit(ctx, 16)
    for host in (*hosts, other):
        gpu = kit.gpus_of(host)[0]
        _healthy(kit, gpu)
        kit.gpu_series("gpu_xid", gpu, xid_counter([5]), xid="48")
    value = getattr(hosts[0], parent)
    return kit.scenario(name, [Check(3 * 60, name, ()),
                               Check(10 * 60, name, (_parent(ctx, parent, value),))])


def power_shelf(ctx: PackContext) -> Scenario:
    """Three hosts of one power shelf and one host of another log an Xid at minute 5."""
    kit = Kit(ctx, 1)
    hosts, other = kit.hosts_sharing("power_shelf", ctx.config.thresholds.correlation_min_units)
    return _xid_hosts(ctx, "FaultsUnderPowerShelf", "power_shelf", hosts, other)


def rack(ctx: PackContext) -> Scenario:
    """Hosts of one rack (on different power shelves where the rack has several) and one
    host of another rack log an Xid at minute 5."""
    kit, n = Kit(ctx, 1), ctx.config.thresholds.correlation_min_units
    try:
        hosts, other = kit.hosts_sharing("rack", n, spread="power_shelf")
    except ValueError:
        hosts, other = kit.hosts_sharing("rack", n)
    return _xid_hosts(ctx, "FaultsInRack", "rack", hosts, other)


def cdu(ctx: PackContext) -> Scenario:
    """Under one CDU two hosts throttle (from ~minute 5) and a rack's air runs hot (from
    the start): 3 units fire; a host under another CDU throttles alone."""
    kit = Kit(ctx, 16)
    n = ctx.config.thresholds.correlation_min_units
    hosts, other = kit.hosts_sharing("cdu", n - 1)
    unit = ctx.config.thresholds.thermal_violation_unit_s
    for host in (*hosts, other):
        gpu = kit.gpus_of(host)[0]
        kit.gpu_info(gpu)
        kit.gpu_series("gpu_thermal_violation", gpu, ramp(1e12, 0.10 * 60 / unit, 16))
    limit = ctx.config.thresholds.rack_air_delta_t_max_c
    _rack(kit, hosts[0].rack, hosts[0].cdu, limit + 2)
    return kit.scenario("ThermalFaultsUnderCdu", [
        Check(3 * 60, "ThermalFaultsUnderCdu", ()),
        Check(12 * 60, "ThermalFaultsUnderCdu", (_parent(ctx, "cdu", hosts[0].cdu),))])


SCENARIOS: dict[str, Callable[[PackContext], Scenario]] = {
    "CoolantDeltaTOutOfRange": delta_t_band,
    "CoolantDeltaTCritical": delta_t_fault,
    "CoolantSupplyTemperatureHigh": supply,
    "CoolantFlowBelowBaseline": flow,
    "RackAirDeltaTHigh": rack_air,
    "NvlinkFaultsInSupernode": nvlink_supernode,
    "LinkFaultsUnderLeafSwitch": leaf,
    "FaultsUnderPowerShelf": power_shelf,
    "FaultsInRack": rack,
    "ThermalFaultsUnderCdu": cdu,
}

