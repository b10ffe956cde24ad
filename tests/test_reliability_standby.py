"""The hot-standby share: one definition (spare switch ports, or the cluster's stated share)
used by the design rule and by the reliability model's absorption of lost planes."""

from __future__ import annotations

import pytest
import yaml

from supernode.catalog import cluster_presets
from supernode.cluster.load import load_cluster
from supernode.reliability.assess import ReliabilityOptions, assess_reliability
from supernode.reliability.standby import hot_standby, measured_hot_standby
from supernode.spec.plan import plan_from_data
from supernode.topology import topology_report
from supernode.workload.presets import load_workload


def _preset(name: str, tmp_path, reliability: dict | None = None):
    doc = yaml.safe_load(cluster_presets()[name].read_text())
    if reliability is not None:
        doc["reliability"] = reliability
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return load_cluster(str(path))


def test_the_worst_scale_up_switch_tier_sets_the_share():
    topo = {"switches": {"scale_up_l1": 8, "scale_up_l2": 2, "leaf": 4},
            "radix": {"scale_up_l1": 10, "scale_up_l2": 20, "leaf": 64},
            "free_ports": {"scale_up_l1": 20, "scale_up_l2": 4, "leaf": 60}}
    # L1: 20 free of 80 -> 20/60; L2: 4 free of 40 -> 4/36 (the worst); leaf ignored
    assert measured_hot_standby(topo) == ("scale_up_l2", 4 / 36, 4, 36)
    assert measured_hot_standby({"switches": {"leaf": 4}, "radix": {"leaf": 64},
                                 "free_ports": {}}) is None


def test_hgx_switch_ports_left_for_the_nvlink_network_are_no_standby():
    """An HGX H100 board: 4 NVSwitch chips of 64 ports, the 8 GPUs' 18 links use 144; the
    other 112 lead off the board to an external NVLink network, and every GPU link is in
    use, so the GPUs have no standby (it read 112 / 144 = 77.8 % before). One chip carries
    5 of a GPU's 18 links (5/4/4/5: NVIDIA, 'Upgrading Multi-GPU Interconnectivity with
    the Third-Generation NVIDIA NVSwitch'): the largest single loss is 5/18, not 0."""
    c = load_cluster("hgx-h100")
    h = hot_standby(c, topology_report(c).to_dict())
    assert (h.source, h.tier, h.spare_ports, h.ports_in_use) == ("topology", "scale_up_l1",
                                                                 0, 144)
    assert h.share == 0.0
    assert h.largest_single_loss == pytest.approx(5 / 18)


def test_hgx_report_names_its_largest_single_scale_up_loss():
    """The folded baseboard NVSwitch (counted in ``gpu``) still sets the largest single
    scale-up loss of the report (it read 0.0 % before)."""
    d = assess_reliability(load_cluster("hgx-h100"), load_workload("llama3-8b"),
                           plan_from_data({"tp": 8, "pp": 1, "dp": 1,
                                           "global_batch_sequences": 8}),
                           ReliabilityOptions(days=5, runs=4, what_if=False, workers=1)
                           ).to_dict()
    hot = d["hot_standby"]
    assert hot["share"] == 0.0 and not hot["covers_single_failure"]
    assert hot["largest_single_failure_loss"] == pytest.approx(5 / 18)


def test_stated_share_wins_and_a_mesh_has_none(tmp_path):
    c = _preset("gb200-nvl72", tmp_path, {"hot_standby_share": 0.125})
    h = hot_standby(c, topology_report(c).to_dict())
    assert (h.share, h.source, h.measured_share) == (0.125, "stated", 0.0)
    mesh = load_cluster("mi300x-8")
    assert hot_standby(mesh, topology_report(mesh).to_dict()).source == "none"


def test_the_reliability_model_absorbs_with_the_same_share(tmp_path):
    workload = load_workload("llama3-8b")
    plan = plan_from_data({"tp": 8, "pp": 1, "dp": 9, "global_batch_sequences": 72})
    options = ReliabilityOptions(days=5, runs=8, what_if=False, workers=1)

    def nvswitch(cluster, **kw):
        d = assess_reliability(cluster, workload, plan, ReliabilityOptions(
            **{**options.__dict__, **kw})).to_dict()
        return next(m for m in d["blast_radius"] if m["component"] == "nvswitch"), d

    # a live switch fault stops the job either way; the standby decides the restart's speed
    measured, d = nvswitch(load_cluster("gb200-nvl72"))
    assert measured["effect"] == "interrupt" and d["hot_standby"]["source"] == "topology"
    assert measured["bandwidth_loss"] == pytest.approx(1 / 18) and measured["speed"] < 1
    stated, d = nvswitch(_preset("gb200-nvl72", tmp_path, {"hot_standby_share": 0.06}))
    assert stated["effect"] == "interrupt" and d["hot_standby"]["share"] == 0.06
    assert stated["bandwidth_loss"] == 0 and stated["speed"] == 1
    assert d["rules"][1] == {"id": "hot_standby_bandwidth", "metric": "hot_standby_share",
                             "value": 0.06, "threshold": 0.1, "comparison": ">=",
                             "passes": False, "source": "seed 001 §4.1"}
    what_if, d = nvswitch(_preset("gb200-nvl72", tmp_path, {"hot_standby_share": 0.06}),
                          hot_standby_share=0.0)
    assert what_if["bandwidth_loss"] > 0 and d["hot_standby"]["source"] == "option"
