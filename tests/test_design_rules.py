"""Design rules on the bundled examples (by rule id), check's exit codes, rule packs."""

from __future__ import annotations

import json

import pytest
from designs import example_design
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.design import DesignInput, example, run_design
from supernode.errors import InputError
from supernode.rules import RULES, load_pack
from supernode.rules.pack import MODEL_THRESHOLDS, settings
from supernode.topology.thresholds import SCALE_UP_TO_HBM_MIN


def _errors(name: str, **kw) -> list[str]:
    return example_design(name, simulate=False, **kw).errors


def test_flawed_example_yields_the_four_errors_by_id():
    errors = _errors("flawed")
    for rule_id in ("scale_up_hbm_ratio", "no_oversubscription", "tp_inside_supernode",
                    "liquid_above_air_limit", "rack_air_load"):
        assert rule_id in errors, errors


def test_the_reliability_rules_add_no_finding_to_the_flawed_example():
    # four-GPU boards on PCB NVLink: no switch plane to hold in standby (not applicable);
    # recovery 60 + 120 + 60 s + a 1.2 s checkpoint load + 180 s = 7.0 min <= 10 min.
    # The scheduling rule adds one warning: first-fit splits TP groups across the 4-GPU
    # servers (docs/design.md). exposed_comm_share is left out of the count: it follows the
    # step model's calibration, refitted elsewhere.
    data = example_design("flawed", simulate=False).to_dict()
    statuses = {f["id"]: f["status"] for f in data["findings"]}
    assert statuses["hot_standby_bandwidth"] == "not_applicable"
    assert statuses["recovery_time_objective"] == "pass"
    failed = {f["id"]: f["severity"] for f in data["findings"]
              if f["failed"] and f["id"] != "exposed_comm_share"}
    assert sorted(i for i, s in failed.items() if s != "error") == [
        "aisle_clearance", "fibre_cores_per_rack", "topology_blind_scheduling"]
    assert sum(s == "error" for s in failed.values()) == 6


def test_flagship_errors_only_on_the_seed_30_percent_rule():
    # GB200: 1.8 TB/s NVLink both ways vs 8 TB/s HBM = 22.5 % < 30 % (seed 001 §2.1): the
    # one rule the flagship fails by physics; every design and facility rule holds.
    assert _errors("flagship") == ["scale_up_hbm_ratio"]


def test_every_rule_has_a_seed_rationale_and_a_setting():
    assert len(RULES) >= 20
    s = settings()
    for rule in RULES.values():
        assert rule.seed.startswith("seed ") and len(rule.rationale) > 80
        assert s[rule.id].severity in ("error", "warning", "info")
    assert s["scale_up_hbm_ratio"].threshold == SCALE_UP_TO_HBM_MIN
    assert set(MODEL_THRESHOLDS) <= set(RULES)


@pytest.fixture()
def runner():
    register_all()
    return CliRunner()


def test_check_exit_codes(runner, tmp_path):
    bad = runner.invoke(app, ["check", "--example", "flawed", "--no-simulate", "--json"])
    assert bad.exit_code == 1
    assert "tp_inside_supernode" in json.loads(bad.stdout)["verdict"]["errors"]
    pack = tmp_path / "pack.yaml"
    pack.write_text("schema: supernode-rules/1\nrules:\n  scale_up_hbm_ratio: "
                    "{severity: warning}\n")
    ok = runner.invoke(app, ["check", "--example", "flagship", "--no-simulate",
                             "--rules", str(pack)])
    assert ok.exit_code == 0, ok.output
    assert "verdict: pass" in ok.output


def test_pack_threshold_override_changes_the_verdict(tmp_path):
    pack = tmp_path / "strict.yaml"
    pack.write_text("rules:\n  scale_up_hbm_ratio: {threshold: 0.2}\n"
                    "  aisle_clearance: {threshold: 2.0, severity: error}\n")
    errors = _errors("flagship", rules=pack)
    assert errors == ["aisle_clearance"]


@pytest.mark.parametrize("text, path", [
    ("rules:\n  no_such_rule: {severity: error}\n", "rules.no_such_rule"),
    ("rules:\n  coolant_delta_t_window: {threshold: 5}\n",
     "rules.coolant_delta_t_window.threshold"),
    ("rules:\n  floor_load: {threshold: 3}\n", "rules.floor_load.threshold"),
    ("rules:\n  fabric_hops: {severity: fatal}\n", "rules.fabric_hops.severity"),
])
def test_bad_packs_are_refused_with_the_field(tmp_path, text, path):
    pack = tmp_path / "bad.yaml"
    pack.write_text(text)
    with pytest.raises(InputError) as err:
        load_pack(pack)
    assert err.value.path == path


# --- reliability rules (seed 001 §4.1): hot standby >= 10 %, RTO <= 10 min ----------------

def _cluster_with(tmp_path, name: str, reliability: dict):
    import yaml

    e = example(name)
    doc = yaml.safe_load(e.cluster.read_text())
    doc["reliability"] = reliability
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return DesignInput(path, e.workload, e.plan, simulate=False)


def _findings(data: dict) -> dict:
    return {f["id"]: f for f in data["findings"]}


@pytest.fixture(scope="module")
def flagship():
    return example_design("flagship", simulate=False).to_dict()


def test_flagship_has_no_hot_standby_and_the_fix_adds_planes(flagship):
    # 18 NVLink switch chips of 72 ports, every port used by the 72 GPUs' 18 links: no spare
    # switch port, so the warning fails; 20 chips leave 144 of 1,296 ports free = 11.1 %.
    f = _findings(flagship)["hot_standby_bandwidth"]
    assert (f["status"], f["severity"], f["measured"]) == ("fail", "warning", 0.0)
    assert "add 2 switch chip(s)" in f["fix"] and "switch_chips 20" in f["fix"]
    assert f["predicted_value"] == pytest.approx(144 / 1296)
    assert "Monte Carlo goodput" in f["predicted_effect"]
    assert flagship["verdict"]["errors"] == ["scale_up_hbm_ratio"]  # still the one error


def test_one_hot_standby_share_for_the_rule_and_the_reliability_model(flagship):
    rule = _findings(flagship)["hot_standby_bandwidth"]
    hot = flagship["reliability"]["hot_standby"]
    assert hot["source"] == "topology" and hot["tier"] == "scale_up_l1"
    assert rule["measured"] == hot["share"] == hot["measured_share"]
    nvswitch = next(m for m in flagship["reliability"]["blast_radius"]
                    if m["component"] == "nvswitch")
    assert nvswitch["effect"] == "degrade"  # no standby: a lost plane slows the domain


def test_a_stated_hot_standby_share_wins_for_both(tmp_path):
    # 6 % stated > one plane of 18 (5.6 %): the rule measures 6 %, below 10 %, and the model
    # absorbs a lost plane; 5 % < 5.6 % does not absorb it.
    for share, effect in ((0.06, "absorbed"), (0.05, "degrade")):
        data = run_design(_cluster_with(tmp_path, "flagship",
                                        {"hot_standby_share": share})).to_dict()
        rule = _findings(data)["hot_standby_bandwidth"]
        assert rule["measured"] == share == data["reliability"]["hot_standby"]["share"]
        assert data["reliability"]["hot_standby"]["source"] == "stated"
        assert rule["status"] == "fail" and "stated in reliability" in rule["detail"]
        modes = {m["component"]: m["effect"] for m in data["reliability"]["blast_radius"]}
        assert modes["nvswitch"] == effect


def test_recovery_time_rule_reads_the_reliability_result(flagship):
    f = _findings(flagship)["recovery_time_objective"]
    rec = flagship["reliability"]["recovery"]
    assert f["status"] == "pass" and f["measured"] == rec["rto_s"]
    assert f["threshold"] == rec["objective_s"] == 600.0


def test_slow_checkpoint_reads_miss_the_rto_and_the_fix_is_predicted(tmp_path):
    from supernode.reliability.recovery import RecoveryTimes, recovery_objective

    # 988 GB of Llama 3 70B state read at 1 GB/s: a 988 s load alone exceeds 10 minutes
    data = run_design(_cluster_with(tmp_path, "flawed",
                                    {"checkpoint_read_gbyte_per_s": 1.0})).to_dict()
    f = _findings(data)["recovery_time_objective"]
    rec, ckpt = data["reliability"]["recovery"], data["reliability"]["checkpoint"]
    assert f["status"] == "fail" and f["measured"] > 600 and f["measured"] == rec["rto_s"]
    assert rec["checkpoint_load_s"] == pytest.approx(ckpt["size_bytes"] / 1e9)
    # the fix: the read bandwidth at which the recovery model's own RTO is the objective
    need = ckpt["size_bytes"] / (600.0 - (rec["rto_s"] - rec["checkpoint_load_s"]))
    assert f"{need / 1e9:,.0f} GB/s" in f["fix"]
    times = RecoveryTimes(**rec["times"])
    assert f["predicted_value"] == pytest.approx(
        recovery_objective(times, ckpt["size_bytes"] / need)["rto_s"]) == pytest.approx(600)


def test_reliability_thresholds_are_the_models_and_a_pack_overrides_them(tmp_path):
    from supernode.reliability.recovery import RTO_OBJECTIVE_S
    from supernode.reliability.standby import HOT_STANDBY_OBJECTIVE

    s = settings()
    assert s["hot_standby_bandwidth"].threshold == HOT_STANDBY_OBJECTIVE == 0.10
    assert s["recovery_time_objective"].threshold == RTO_OBJECTIVE_S == 600.0
    pack = tmp_path / "strict.yaml"
    pack.write_text("rules:\n  recovery_time_objective: {threshold: 300, severity: error}\n")
    e = example("flawed")
    data = run_design(DesignInput(e.cluster, e.workload, e.plan, rules=pack,
                                  simulate=False)).to_dict()
    f = _findings(data)["recovery_time_objective"]
    assert f["threshold"] == 300 and f["status"] == "fail"  # 421 s > 300 s
    assert "recovery_time_objective" in data["verdict"]["errors"]
    # the reliability result keeps the seed's objective; the rule judges with the pack's
    assert data["reliability"]["recovery"]["objective_s"] == 600.0


def test_flagship_scheduling_rule_prices_a_topology_blind_scheduler(flagship):
    # 4,608 Philly jobs at 80 % load on 16 NVL72 racks: first-fit spreads the co-located
    # jobs' slowdowns far beyond the seed's 20 %, best-fit (what the exported topology
    # lets Slurm, Kueue or Volcano do) below its 5 % (seed 001 §4.2)
    f = _findings(flagship)["topology_blind_scheduling"]
    sch = flagship["scheduling"]
    by_name = {p["policy"]: p for p in sch["schedule"]["policies"]}
    blind, aware = by_name["first-fit"], by_name["best-fit"]
    assert (f["status"], f["severity"], f["threshold"]) == ("fail", "warning", 0.05)
    assert f["measured"] == blind["slowdown_spread"] > sch["seed_reference"]["before"]
    assert f["predicted_value"] == aware["slowdown_spread"] < sch["seed_reference"]["after"]
    for kind in sch["policies"]:
        p, worst_aware = by_name[kind["policy"]], max(
            by_name[k["policy"]]["tp_crossing_share"] for k in sch["policies"]
            if k["kind"] == "topology-aware")
        if kind["kind"] == "topology-blind":
            assert p["tp_crossing_share"] > worst_aware and p["slowdown_spread"] > 0.05
        else:
            assert p["tp_crossing_share"] == 0.0 and p["slowdown_spread"] < 0.05
    listed = {a["path"] for a in flagship["artefacts"]["files"]}
    named = [w.strip("(),;") for w in f["fix"].split() if w.startswith("(exports/")
             or w.startswith("exports/")]
    assert "exports/slurm-block/topology.conf" in named and set(named) <= listed
    assert flagship["verdict"]["errors"] == ["scale_up_hbm_ratio"]  # a warning, not an error
