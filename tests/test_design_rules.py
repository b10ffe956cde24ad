"""Design rules on the bundled examples (by rule id), check's exit codes, rule packs."""

from __future__ import annotations

import json

import pytest
from designs import example_design
from typer.testing import CliRunner

from supernode.cluster.load import load_cluster
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
    for rule_id in ("no_oversubscription", "tp_inside_supernode",
                    "liquid_above_air_limit", "rack_air_load"):
        assert rule_id in errors, errors
    # below the 30 % floor, but the given plan's exposed TP communication is under the
    # seeds' 20 % line: graded a warning on that consequence (its TP crossing the servers
    # is tp_inside_supernode's error)
    assert "scale_up_hbm_ratio" not in errors


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
        "aisle_clearance", "fibre_cores_per_rack", "scale_up_hbm_ratio",
        "topology_blind_scheduling"]
    assert sum(s == "error" for s in failed.values()) == 5


def test_flagship_fails_the_seed_30_percent_floor_as_a_warning_with_its_margin():
    # GB200: 1.8 TB/s NVLink both ways vs 8 TB/s HBM = 22.5 % < 30 % (seed 001 §2.1), the
    # threshold kept; graded on the consequence the seed names: the plan's exposed TP
    # communication is far under the seeds' 20 % line, so a warning with that margin, and
    # no error at all on NVIDIA's reference design (issue 24).
    data = example_design("flagship", simulate=False).to_dict()
    assert data["verdict"]["errors"] == []
    f = _findings(data)["scale_up_hbm_ratio"]
    assert (f["status"], f["severity"]) == ("fail", "warning")
    assert f["threshold"] == SCALE_UP_TO_HBM_MIN == 0.30
    view = data["reviewed_plan"]
    share = view["breakdown_s"]["tp_comm"] / sum(view["breakdown_s"].values())
    assert share < 0.20 and f"margin {100 * (0.20 - share):+.1f} points" in f["detail"]
    # the fix names only catalog parts that meet the floor, or says none does
    from supernode.catalog import accelerators

    named = f["fix"].split("in the catalog ")[1].split(", ")
    for name in named:
        a = accelerators()[name]
        assert 2 * a.scale_up_ports * a.scale_up_port_bandwidth_gbyte_per_s >= \
            0.30 * a.memory_bandwidth_tbyte_per_s * 1e3


def test_the_30_percent_floor_is_an_error_when_tp_suffers():
    from dataclasses import replace

    from supernode.rules import Facts
    from supernode.rules.fabric_rules import scale_up_hbm_ratio

    data = example_design("flagship", simulate=False)
    d = data.to_dict()
    facts = Facts(cluster=load_cluster(str(example("flagship").cluster)),
                  workload=d["workload"], topology=d["topology"], facility=d["facility"],
                  reviewed_plan=d["reviewed_plan"])
    calm = scale_up_hbm_ratio(facts, SCALE_UP_TO_HBM_MIN)
    view = dict(d["reviewed_plan"], breakdown_s={**d["reviewed_plan"]["breakdown_s"]})
    view["breakdown_s"]["tp_comm"] = sum(view["breakdown_s"].values())  # TP half the step
    hurt = scale_up_hbm_ratio(replace(facts, reviewed_plan=view), SCALE_UP_TO_HBM_MIN)
    assert (calm.status, calm.severity) == ("fail", "warning")
    assert (hurt.status, hurt.severity) == ("fail", None)  # the pack's error stands


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


def test_flagship_has_no_hot_standby_and_the_fix_is_one_that_can_be_built(flagship):
    # 18 NVLink switch chips of 72 ports, every port used by the 72 GPUs' 18 links: no spare
    # switch port, so the warning fails. A GB200 has 18 NVLink ports, all in use: no more
    # planes can be added (issue 24: 20 chips were proposed); holding 10 % idle can, and
    # re-reviewed on a copy of the design it passes the rule.
    f = _findings(flagship)["hot_standby_bandwidth"]
    assert (f["status"], f["severity"], f["measured"]) == ("fail", "warning", 0.0)
    assert "switch_chips" not in f["fix"] and "18 scale-up ports" in f["fix"]
    assert "reliability.hot_standby_share" in f["fix"]
    assert "Monte Carlo goodput" in f["predicted_effect"]
    review = f["fix_review"]
    assert review["change"] == "reliability.hot_standby_share: 0.1"
    assert review["status"] == "pass" and review["measured"] == pytest.approx(0.10)
    assert review["failed_by_severity_after"]["warning"] == \
        flagship["verdict"]["failed_by_severity"]["warning"] - 1
    assert flagship["verdict"]["errors"] == []


def test_one_hot_standby_share_for_the_rule_and_the_reliability_model(flagship):
    rule = _findings(flagship)["hot_standby_bandwidth"]
    hot = flagship["reliability"]["hot_standby"]
    assert hot["source"] == "topology" and hot["tier"] == "scale_up_l1"
    assert rule["measured"] == hot["share"] == hot["measured_share"]
    nvswitch = next(m for m in flagship["reliability"]["blast_radius"]
                    if m["component"] == "nvswitch")
    # a live switch fault stops the job; without standby the restart runs a plane short
    assert nvswitch["effect"] == "interrupt" and nvswitch["bandwidth_loss"] > 0


def test_a_stated_hot_standby_share_wins_for_both(tmp_path):
    # 6 % stated > one plane of 18 (5.6 %): the rule measures 6 %, below 10 %, and the job
    # restarted after a lost plane runs at full speed; 5 % < 5.6 % leaves it a plane short.
    for share, slowed in ((0.06, False), (0.05, True)):
        data = run_design(_cluster_with(tmp_path, "flagship",
                                        {"hot_standby_share": share})).to_dict()
        rule = _findings(data)["hot_standby_bandwidth"]
        assert rule["measured"] == share == data["reliability"]["hot_standby"]["share"]
        assert data["reliability"]["hot_standby"]["source"] == "stated"
        assert rule["status"] == "fail" and "stated in reliability" in rule["detail"]
        modes = {m["component"]: m for m in data["reliability"]["blast_radius"]}
        assert modes["nvswitch"]["effect"] == "interrupt"
        assert (modes["nvswitch"]["bandwidth_loss"] > 0) == slowed


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
    assert flagship["verdict"]["errors"] == []  # a warning, not an error
