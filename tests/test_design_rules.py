"""Design rules on the bundled examples (by rule id), check's exit codes, rule packs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.design import DesignInput, example, run_design
from supernode.errors import InputError
from supernode.rules import RULES, load_pack
from supernode.rules.pack import MODEL_THRESHOLDS, settings
from supernode.topology.thresholds import SCALE_UP_TO_HBM_MIN


def _errors(name: str, **kw) -> list[str]:
    e = example(name)
    return run_design(DesignInput(e.cluster, e.workload, e.plan, simulate=False, **kw)).errors


def test_flawed_example_yields_the_four_errors_by_id():
    errors = _errors("flawed")
    for rule_id in ("scale_up_hbm_ratio", "no_oversubscription", "tp_inside_supernode",
                    "liquid_above_air_limit", "rack_air_load"):
        assert rule_id in errors, errors


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
