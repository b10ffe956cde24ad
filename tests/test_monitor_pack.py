"""The rule pack: rules traced to seed sections, chosen by the cluster, topology labels from
the cluster description, one place for BER thresholds, configuration errors."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from supernode.catalog import cluster_presets
from supernode.cluster.load import load_cluster
from supernode.errors import InputError
from supernode.monitor.config import load_config
from supernode.monitor.pack import ALL_ALERTS, build_pack, monitoring_rules
from supernode.monitor.placement import monitor_topology
from supernode.monitor.promtests import scenarios_for, verify_scenario
from supernode.monitor.rules_fabric import NIC_BER, SW_BER
from supernode.monitor.storage import Semantics
from supernode.topology import build_cluster_graph

DATA = Path(__file__).parent / "data" / "monitor"
SEED = re.compile(r"seed 00[13] §\d\.\d")


def full_pack():
    return build_pack(load_cluster("gb200-nvl72-superpod"),
                      load_config(DATA / "power-shelves.yaml"))


def test_full_pack_has_every_alert_traced_to_its_seed_section():
    pack = full_pack()
    alerts = pack.alerts()
    assert [a.alert for a in alerts] == list(ALL_ALERTS)
    assert len(alerts) >= 15
    for rule in alerts:
        notes = rule.to_yaml()["annotations"]
        assert SEED.fullmatch(notes["seed"]), rule.alert
        assert notes["runbook"] and notes["summary"] and rule.severity in ("warning",
                                                                           "critical")
    sections = {a.seed for a in alerts}
    assert {"seed 001 §4.4", "seed 003 §4.2", "seed 003 §4.4"} <= sections


@pytest.mark.parametrize("name", sorted(cluster_presets()))
def test_every_preset_gets_at_least_15_alerts_and_a_scenario_each(name):
    pack = build_pack(load_cluster(name))
    assert len(pack.alerts()) >= 15
    assert [s.name for s in scenarios_for(pack)] == [a.alert for a in pack.alerts()]


def test_rules_follow_the_cluster_description():
    names = {n: {a.alert for a in build_pack(load_cluster(n)).alerts()}
             for n in ("dgx-h100-superpod-su", "hgx-h100", "mi300x-8", "gb200-nvl72")}
    assert not any(n.startswith("Coolant") for n in names["dgx-h100-superpod-su"])  # air
    assert "RackAirDeltaTHigh" in names["dgx-h100-superpod-su"]
    assert not names["hgx-h100"] & {"LinkDown", "NicPortDrops", "LinkFaultsUnderLeafSwitch"}
    assert not any(n.startswith("Nvswitch") for n in names["mi300x-8"])  # full mesh
    assert "NvlinkCrcErrors" in names["mi300x-8"]
    assert "CoolantDeltaTCritical" in names["gb200-nvl72"]


def test_capacity_thresholds_come_from_the_cluster():
    pack = build_pack(load_cluster("dgx-h100-superpod-su"))
    rules = {r.record: r.expr.render() for r in pack.recordings()}
    assert "/ 450000000000" in rules["supernode:nvlink_utilisation:peak1m"]  # 18 x 25 GB/s
    assert "/ 50000000000" in rules["supernode:nic_utilisation:ratio2m"]  # NDR 400 Gb/s
    assert "/ 400000000000" in rules[NIC_BER]  # bits per second
    assert "* 3, 70)" in pack.alert("GpuPowerBaselineDeviation").expr.render()  # 0.1 x 700 W


def test_link_ber_thresholds_live_in_one_place(tmp_path):
    override = tmp_path / "ber.yaml"
    override.write_text("link_ber: {drain_ber: 2.5e-10, window_s: 3600}\n")
    pack = build_pack(load_cluster("dgx-h100-superpod-su"), load_config(override))
    assert pack.alert("LinkBerAboveDrainThreshold").expr.render() == f"{NIC_BER} > 2.5e-10"
    assert pack.alert("SwitchPortBerAboveDrainThreshold").expr.render() == \
        f"{SW_BER} > 2.5e-10"
    records = {r.record: r.expr.render() for r in pack.recordings()}
    assert "[1h]" in records[NIC_BER] and "2.5e-10" in records["supernode:nic_link_fault:any"]
    assert "1e-12" not in " ".join(r.expr.render() for r in pack.alerts())


@pytest.mark.parametrize("name", [n for n in sorted(cluster_presets())
                                  if load_cluster(n).scale_out is not None])
def test_ber_levels_are_the_link_models(name):
    """One threshold: without an override, the drain and trend levels of the rules are the
    link model's effective (post-FEC) levels for the cluster's scale-out generation."""
    from supernode.links import ber_thresholds, scale_out_generation

    cluster = load_cluster(name)
    pack = build_pack(cluster)
    generation = scale_out_generation(cluster)
    if generation is None:
        return
    t = ber_thresholds(generation.name)
    assert pack.ctx.drain_ber == t.drain_effective_ber
    assert pack.ctx.watch_ber == t.watch_effective_ber
    assert pack.alert("LinkBerAboveDrainThreshold").expr.render() == \
        f"{NIC_BER} > {t.drain_effective_ber:g}"
    assert f"> {t.watch_effective_ber:g}" in pack.alert("LinkBerRising").expr.render()


def test_ber_levels_follow_the_link_generation():
    """InfiniBand NDR drains at ibdiagnet's 1e-12, CloudMatrix's 400GbE RoCE at IEEE 802.3's
    1e-13; an override in the configuration still wins."""
    ndr = build_pack(load_cluster("dgx-h100-superpod-su"))
    roce = build_pack(load_cluster("cloudmatrix384"))
    assert (ndr.ctx.drain_ber, ndr.ctx.watch_ber) == (1e-12, pytest.approx(1e-13))
    assert (roce.ctx.drain_ber, roce.ctx.watch_ber) == (1e-13, pytest.approx(1e-14))
    assert "the drain threshold 1e-13" in roce.alert("LinkBerAboveDrainThreshold").summary


def test_records_are_defined_before_they_are_read():
    pack = full_pack()
    defined: set[str] = set()
    recorded = {r.record for r in pack.recordings()}
    for group in pack.groups:
        for rule in group.rules:
            assert rule.expr.metrics() & recorded <= defined, rule.name
            if hasattr(rule, "record"):
                defined.add(rule.record)


def test_monitoring_rules_for_a_design_report():
    rows = [r.to_dict() for r in monitoring_rules(load_cluster("dgx-h100-superpod-su"))]
    assert len(rows) == 29  # with both symbol-counter saturation rules
    assert list(rows[0]) == ["id", "seed", "severity", "for_s", "scope", "component",
                             "summary", "expression"]
    drops = next(r for r in rows if r["id"] == "SwitchPortDrops")
    assert drops["for_s"] == 0 and drops["severity"] == "critical"
    assert drops["expression"] == "supernode:switch_port_discards:increase5m > 0"


def test_leaves_racks_and_shelves_match_the_cluster_description():
    cluster = load_cluster("dgx-h100-superpod-su")
    topology = monitor_topology(cluster, load_config())
    graph = build_cluster_graph(cluster)
    leaf_of = {n.host.hostname + "/" + n.device: n.leaf for n in topology.nics}
    checked = 0
    for edge in graph.edges:
        nic, leaf = sorted(edge, key=lambda node: node[0] != "nic")
        if nic[0] == "nic" and leaf[0] == "leaf":
            _, h, rail = nic
            assert leaf_of[f"dgx-h100-superpod-su-{h:04d}/mlx5_{rail}"] == f"leaf{leaf[1]:02d}"
            checked += 1
    assert checked == 256
    assert len(topology.gpus) == 256 and len(topology.nics) == 256
    assert {g.leaf for g in topology.gpus if g.gpu == 3} == {"leaf03"}  # rail 3 -> leaf 3
    assert len({h.rack for h in topology.hosts}) == 8  # 4 DGX per rack
    assert len({h.cdu for h in topology.hosts}) == 2  # 4 racks per CDU
    assert len({g.supernode for g in topology.gpus}) == 32


def test_nvswitch_trays_and_power_shelves(tmp_path):
    cluster = load_cluster("gb200-nvl72-superpod")
    topology = monitor_topology(cluster, load_config(DATA / "power-shelves.yaml"))
    trays = [h for h in topology.hosts if h.role == "nvswitch_tray"]
    assert len(trays) == 8 * 9 and trays[0].supernode == "sn000"
    assert len({h.power_shelf for h in topology.compute_hosts()}) == 8 * 3
    names = tmp_path / "names.yaml"
    names.write_text("hostnames: [" + ", ".join(f"gpu{i:03d}" for i in range(144)) + "]\n")
    named = monitor_topology(cluster, load_config(names))
    assert named.gpus[5].host.hostname == "gpu001"


@pytest.mark.parametrize("text, path, message", [
    ("thresholds: {link_saturation_ratio: 1.5}\n", "thresholds.link_saturation_ratio",
     "less than or equal to 1"),
    ("thresholdz: {}\n", "thresholdz", "unknown field"),
    ("metrics: {gpu_temp: X}\n", "metrics.gpu_temp", "unknown series key"),
    ("metrics: {gpu_temperature: 'bad name'}\n", "metrics", "not a metric name"),
    ("names: {host: '{cluster}-{node}'}\n", "names.host", "field {node} is not allowed"),
    ("labels: {host: '__host'}\n", "labels.host", "not a label name"),
    ("disabled_rules: [NoSuchRule]\n", "disabled_rules[0]", "unknown rule"),
    ("layout: {hosts_per_power_shelf: 5}\n", "layout.hosts_per_power_shelf",
     "exceed 4 hosts per rack"),
    ("hostnames: [a, b]\n", "hostnames", "2 names for 32 hosts"),
])
def test_configuration_errors_name_the_field(tmp_path, text, path, message):
    file = tmp_path / "bad.yaml"
    file.write_text(text)
    with pytest.raises(InputError) as err:
        build_pack(load_cluster("dgx-h100-superpod-su"), load_config(file))
    assert err.value.path == path and message in err.value.message


def test_disabled_rules_are_left_out(tmp_path):
    file = tmp_path / "off.yaml"
    file.write_text("disabled_rules: [LinkSnrBelowBaseline, GpuCommunicationBottleneck]\n")
    pack = build_pack(load_cluster("dgx-h100-superpod-su"), load_config(file))
    names = {a.alert for a in pack.alerts()}
    assert "LinkSnrBelowBaseline" not in names and "GpuNotReporting" in names
    assert any("disabled by the configuration" in n for n in pack.notes)


def test_pack_without_a_cluster_drops_what_needs_line_rates():
    pack = build_pack(None)
    names = {a.alert for a in pack.alerts()}
    assert not names & {"NvlinkSaturated", "ScaleOutLinkSaturated",
                        "LinkBerAboveDrainThreshold", "GpuPowerBaselineDeviation"}
    assert {"SwitchPortDrops", "CoolantDeltaTCritical", "NvswitchFatalError"} <= names
    assert "no cluster given" in pack.notes[0]


@pytest.mark.parametrize("semantics", [Semantics(), Semantics(left_open=True)],
                         ids=["prometheus-2", "prometheus-3"])
def test_hand_expectations_hold_in_the_offline_evaluator(semantics):
    """Every scenario's hand-worked firing set, under both Prometheus window rules: at each
    check the evaluator fires exactly the alerts written down, and the checks expect some
    alerts to fire and others to stay silent (a pack of silent checks would pass empty)."""
    for pack in (full_pack(), build_pack(load_cluster("hgx-h100"))):
        scenarios = scenarios_for(pack)
        checks = [check for scenario in scenarios for check in scenario.checks]
        assert any(check.alerts for check in checks)
        assert any(not check.alerts for check in checks)
        for scenario in scenarios:
            outcomes = verify_scenario(pack, scenario, semantics)
            for check, outcome in zip(scenario.checks, outcomes, strict=True):
                assert outcome.label_sets() == set(check.alerts), (scenario.name, check)


def test_a_wrong_hand_expectation_is_caught():
    pack = build_pack(load_cluster("dgx-h100-superpod-su"))
    scenario = next(s for s in scenarios_for(pack) if s.name == "NvlinkRecoveryErrors")
    wrong = replace(scenario, checks=(replace(scenario.checks[0], alerts=()),))
    with pytest.raises(AssertionError, match="expected 0 alert"):
        verify_scenario(pack, wrong)


def test_docs_list_every_rule_threshold_and_metric():
    from supernode.monitor.config import default_document

    text = (Path(__file__).resolve().parents[1] / "docs" / "monitor.md").read_text()
    pack = full_pack()
    for rule in pack.alerts():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{rule.alert}` |"))
        cells = [c.strip() for c in row.split("|")]
        assert cells[2] == rule.seed.removeprefix("seed ") and cells[3] == rule.severity, row
        assert cells[5] == rule.scope, row
    defaults = default_document()
    for section in ("thresholds", "link_ber", "metrics", "labels", "names", "layout"):
        for key in defaults[section]:
            assert f"`{key}`" in text or key in text, (section, key)


def test_test_documents_reuse_the_outcomes_scenarios_for_verified():
    """Under a tuned configuration scenarios_for verifies each scenario (both window
    semantics) and keeps the outcomes; the promtool test documents built from them are
    those built by evaluating every scenario again."""
    from supernode.monitor.promtests import test_document

    pack = build_pack(load_cluster("gb200-nvl72-superpod"),
                      load_config(DATA / "power-shelves.yaml"))
    verified: dict = {}
    scenarios = scenarios_for(pack, [], verified)
    assert scenarios and len(verified) == 2 * len(scenarios)
    for long in (False, True):
        semantics = Semantics(left_open=True)
        assert test_document(pack, scenarios, "r.yml", long, semantics, verified) == \
            test_document(pack, scenarios, "r.yml", long, semantics)
