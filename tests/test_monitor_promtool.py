"""The generated rules checked by the real tool: ``promtool check rules`` and
``promtool test rules`` (Debian package ``prometheus``).

Every alert has a scenario that must fire on one unit and stay silent on a near miss; the
hand-written expectation is checked by the offline evaluator first, then by promtool on
the same series (with the evaluator's annotation values), so promtool passing means all
three agree. A seeded random scenario then checks evaluator and promtool agree on every
alert and on recorded values (exact floats) where nobody wrote an expectation.
Without promtool these tests skip, unless SUPERNODE_REQUIRE_TOOLS is set (CI sets it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from monitor_random import random_scenario

from supernode.cluster.load import load_cluster
from supernode.monitor import promtool
from supernode.monitor.artefacts import RULES, dump_yaml, render, write
from supernode.monitor.config import load_config
from supernode.monitor.grafana import dashboard, panel_expressions
from supernode.monitor.pack import ALL_ALERTS, build_pack
from supernode.monitor.promql_syntax import duration
from supernode.monitor.promtests import LONG_INTERVAL_S, SHORT_INTERVAL_S, evaluator_test_group
from supernode.monitor.rules import rule_file
from supernode.monitor.storage import Semantics

DATA = Path(__file__).parent / "data" / "monitor"


@pytest.fixture(scope="module")
def binary() -> str:
    found = promtool.find_promtool()
    if found is None:
        if os.environ.get("SUPERNODE_REQUIRE_TOOLS"):
            pytest.fail("promtool is required (SUPERNODE_REQUIRE_TOOLS is set) but not on PATH")
        pytest.skip("promtool not on PATH (apt-get install prometheus); CI requires it")
    return found


@pytest.fixture(scope="module")
def semantics(binary: str) -> Semantics:
    return Semantics.for_version(promtool.promtool_version(binary))


def _pack(name: str, config: str | None = None):
    return build_pack(load_cluster(name), load_config(DATA / config if config else None))


CASES = [("gb200-nvl72-superpod", "power-shelves.yaml"), ("dgx-h100-superpod-su", None)]


@pytest.fixture(scope="module")
def rendered(semantics):
    """(pack, artefacts) of each case, rendered once."""
    out = {}
    for cluster, config in CASES:
        pack = _pack(cluster, config)
        out[cluster] = (pack, render(pack, semantics))
    return out


@pytest.mark.parametrize("cluster, config", CASES)
def test_generated_rules_pass_promtool_check(binary, rendered, cluster, config, tmp_path):
    pack, artefacts = rendered[cluster]
    write(artefacts, tmp_path)
    checked = promtool.check_rules(binary, tmp_path / RULES)
    assert checked.ok, checked.output
    assert f"SUCCESS: {len(pack.alerts()) + len(pack.recordings())} rules found" in \
        checked.output


def test_every_rule_test_passes_promtool(binary, rendered, tmp_path):
    """All 33 alerts of the full pack (GB200 NVL72 SU, liquid-cooled, power shelves)."""
    write(rendered[CASES[0][0]][1], tmp_path)
    tested = promtool.test_rules(binary, [tmp_path / "rules-tests.yaml",
                                          tmp_path / "rules-tests-long.yaml"])
    assert tested.ok, tested.output[-6000:]
    assert tested.output.count("SUCCESS") == 2


def test_every_alert_of_the_full_pack_has_a_promtool_test(rendered):
    import yaml

    pack, artefacts = rendered[CASES[0][0]]
    assert len(pack.alerts()) == len(ALL_ALERTS) == 35
    files = artefacts.files
    tested = set()
    for name in ("rules-tests.yaml", "rules-tests-long.yaml"):
        for group in yaml.safe_load(files[name])["tests"]:
            checks = group["alert_rule_test"]
            assert any(c["exp_alerts"] for c in checks), group["name"]  # fires somewhere
            tested |= {c["alertname"] for c in checks}
    assert tested == {a.alert for a in pack.alerts()}


def test_a_broken_expectation_fails_promtool(binary, rendered, tmp_path):
    """The promtool run is not a formality: change one expected label and it fails."""
    import yaml

    _, artefacts = rendered["dgx-h100-superpod-su"]
    document = yaml.safe_load(artefacts.files["rules-tests.yaml"])
    group = next(g for g in document["tests"] if g["name"] == "NvlinkRecoveryErrors")
    document["tests"] = [group]
    (tmp_path / RULES).write_text(artefacts.files[RULES])
    (tmp_path / "one.yaml").write_text(dump_yaml(document))
    assert promtool.test_rules(binary, [tmp_path / "one.yaml"]).ok
    group["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"]["severity"] = "minor"
    (tmp_path / "one.yaml").write_text(dump_yaml(document))
    tested = promtool.test_rules(binary, [tmp_path / "one.yaml"])
    assert not tested.ok and "FAILED" in tested.output


@pytest.mark.parametrize("long, steps, checks", [(False, 40, [10, 20, 30, 39]),
                                                 (True, 40, [26, 33, 39])])
def test_offline_evaluator_and_promtool_agree_on_random_series(
        binary, semantics, rendered, long, steps, checks, tmp_path):
    pack = rendered[CASES[0][0]][0]
    names = [a.alert for a in pack.alerts()]
    scenario = random_scenario(pack.ctx, seed=14 + int(long), steps=steps, long=long,
                               alertnames=names, checks_at=checks)
    records = [r.record for r in pack.recordings() if ":dedup" not in r.record]
    group = evaluator_test_group(pack, scenario, semantics, records)
    fired = {t["alertname"] for t in group["alert_rule_test"] if t["exp_alerts"]}
    valued = [t for t in group["promql_expr_test"] if t["exp_samples"]]
    assert len(fired) >= (6 if long else 12), fired  # the data makes many rules fire ...
    assert len(fired) < len(names)  # ... and not all of them
    assert len(valued) >= 15
    (tmp_path / RULES).write_text(dump_yaml(rule_file(pack.groups)))
    document = {"rule_files": [RULES],
                "evaluation_interval": duration(LONG_INTERVAL_S if long else SHORT_INTERVAL_S),
                "group_eval_order": [g.name for g in pack.groups], "tests": [group]}
    (tmp_path / "random.yaml").write_text(dump_yaml(document))
    tested = promtool.test_rules(binary, [tmp_path / "random.yaml"])
    assert tested.ok, tested.output[-6000:]


def test_dashboard_expressions_are_valid_promql(binary, rendered, tmp_path):
    for pack, _ in rendered.values():
        model = dashboard(pack.ctx)
        exprs = [e.replace("$supernode", ".*") for e in panel_expressions(model)]
        rules = {"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:expr{i}", "expr": e} for i, e in enumerate(exprs)]}]}
        (tmp_path / "dashboard.yaml").write_text(dump_yaml(rules))
        checked = promtool.check_rules(binary, tmp_path / "dashboard.yaml")
        assert checked.ok, checked.output


def test_monitor_rules_check_with_the_installed_promtool(binary, tmp_path):
    """`supernode monitor rules --check` runs both promtool commands and passes when told
    the installed promtool's major (detected here, in the test, never in the product)."""
    import json

    from typer.testing import CliRunner

    from supernode.commands import app, register_all

    register_all()
    major = promtool.promtool_version(binary)[0]
    result = CliRunner().invoke(app, ["monitor", "rules", "--cluster", "dgx-h100-superpod-su",
                                      "--out", str(tmp_path / "out"), "--check",
                                      "--prometheus-major", str(major), "--json"])
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["prometheus_major"] == major
    assert [r["ok"] for r in manifest["promtool"]] == [True, True]
