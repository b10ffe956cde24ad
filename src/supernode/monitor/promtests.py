"""promtool unit tests from the scenarios, checked first by the offline evaluator.

:func:`evaluate_scenario` runs a scenario's series through :class:`RuleRunner` the way
``promtool test rules`` does (every group at every evaluation interval from 0, groups in
file order) and returns the firing alerts at each check. :func:`verify_scenario` compares
them with the hand-written expectation. :func:`test_document` writes the promtool test
file: its expected alerts are the hand-written label sets, and the expected annotations
carry the values the offline evaluator computed — so promtool passing means both agree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from supernode.errors import InputError
from supernode.monitor.config import MonitorConfig, load_config
from supernode.monitor.context import PackContext
from supernode.monitor.pack import RulePack
from supernode.monitor.placement import MonitorTopology, monitor_topology
from supernode.monitor.promql_syntax import duration
from supernode.monitor.runner import Alert, RuleRunner, groups_for_alerts
from supernode.monitor.scenarios import STALE, Scenario
from supernode.monitor.storage import Semantics, Storage, make_labels
from supernode.topology.sizing import RadixError

#: Evaluation interval of the short and the long (hourly) test files, in s.
SHORT_INTERVAL_S, LONG_INTERVAL_S = 60, 3600


class ScenarioMismatch(AssertionError):
    """The offline evaluator disagrees with a scenario's hand-written expectation."""


@dataclass(frozen=True)
class Outcome:
    """The firing alerts of one check, and their label sets."""

    alerts: tuple[Alert, ...]

    def label_sets(self) -> set[tuple[tuple[str, str], ...]]:
        """Label sets without alertname and the rule's static labels."""
        return {tuple(p for p in a.labels if p[0] not in ("alertname", "severity", "scope"))
                for a in self.alerts}


#: Outcomes of scenarios already verified, by (``id`` of the scenario object, semantics):
#: the evaluation is deterministic, so a scenario verified once needs no second run.
Verified = dict[tuple[int, Semantics], list[Outcome]]


def _enough(topology: MonitorTopology) -> bool:
    """True when the scenarios find every unit they need (a unit and a neighbour)."""
    hosts = topology.compute_hosts()
    distinct = [len({getattr(h, p) for h in hosts}) for p in ("supernode", "rack", "cdu",
                                                               "power_shelf")]
    leaves = len({n.leaf for n in topology.nics})
    return len(hosts) >= 4 and min(distinct) >= 2 and (not topology.nics or leaves >= 2)


def scenario_context(ctx: PackContext) -> PackContext:
    """``ctx`` with a topology large enough for the scenarios' neighbours.

    Small clusters (one supernode, one rack) are grown by whole supernodes for the test
    series only; the rules' figures (bandwidths, TDP, thresholds) stay the cluster's own.
    """
    cluster = ctx.given_cluster
    supernodes, topology = cluster.supernodes, ctx.topology
    while not _enough(topology) and supernodes < 4096:
        supernodes *= 2
        grown = replace(cluster, supernodes=supernodes)
        try:
            topology = monitor_topology(grown, _with_test_hosts(ctx.config, grown.hosts))
        except (InputError, RadixError):
            break
    return replace(ctx, topology=topology)


def _with_test_hosts(config: MonitorConfig, hosts: int) -> MonitorConfig:
    """``config`` for a cluster grown to ``hosts`` hosts for the test series: the given
    ``hostnames`` (one per real host) followed by distinct names for the test-only hosts."""
    if not config.hostnames or len(config.hostnames) >= hosts:
        return config
    names, taken = list(config.hostnames), set(config.hostnames)
    index = len(names)
    while len(names) < hosts:
        name = f"scenario-host-{index}"
        index += 1
        if name not in taken:
            names.append(name)
            taken.add(name)
    return config.model_copy(update={"hostnames": names})


def _tuned(config: MonitorConfig) -> bool:
    """True when ``config`` sets thresholds, layout or BER levels other than the defaults
    (the scenarios' hand-worked values are for the defaults)."""
    default = load_config(None)
    return (config.thresholds, config.layout, config.link_ber) != \
        (default.thresholds, default.layout, default.link_ber)


def scenarios_for(pack: RulePack, notes: list[str] | None = None,
                  verified: Verified | None = None) -> list[Scenario]:
    """One scenario per alerting rule of ``pack``, in rule order; a rule whose scenario
    needs units the (grown) topology lacks gets none, and a line in ``notes``.
    ``verified``: where the outcomes of the scenarios checked here (a tuned configuration)
    are kept, for :func:`test_document` not to evaluate them again."""
    from supernode.monitor import scenarios_fabric, scenarios_facility, scenarios_gpu

    factories = scenarios_gpu.SCENARIOS | scenarios_fabric.SCENARIOS | \
        scenarios_facility.SCENARIOS
    ctx = scenario_context(pack.ctx)
    tuned = _tuned(pack.ctx.config)
    out = []
    for rule in pack.alerts():
        try:
            scenario = factories[rule.alert](ctx)
        except (ValueError, StopIteration, IndexError):
            if notes is not None:
                notes.append(f"no promtool test for {rule.alert}: the cluster has too few "
                             "units for a firing unit and a near miss")
            continue
        if tuned and not _holds(pack, scenario, verified):
            if notes is not None:
                notes.append(f"no promtool test for {rule.alert}: its scenario's values "
                             "are worked out for the default thresholds, and do not fire "
                             "and stay silent as written under --config's")
            continue
        out.append(scenario)
    return out


def _holds(pack: RulePack, scenario: Scenario, verified: Verified | None = None) -> bool:
    """True when the evaluator agrees with ``scenario``'s expectation under both window
    semantics (Prometheus 2 and 3); the outcomes kept in ``verified``."""
    try:
        for semantics in (Semantics(), Semantics(left_open=True)):
            outcomes = verify_scenario(pack, scenario, semantics)
            if verified is not None:
                verified[id(scenario), semantics] = outcomes
    except ScenarioMismatch:
        return False
    return True


def load_scenario(scenario: Scenario) -> Storage:
    """The scenario's input series in a fresh store (step ``i`` at ``i * interval``)."""
    storage = Storage()
    for series in scenario.series:
        labels = make_labels(dict(series.labels))
        for i, value in enumerate(series.values):
            if value is None:
                continue
            t_ms = i * scenario.interval_s * 1000
            if value == STALE:
                storage.add(labels, t_ms, float("nan"), stale=True)
            else:
                storage.add(labels, t_ms, float(value))
    return storage


def evaluate_scenario(pack: RulePack, scenario: Scenario,
                      semantics: Semantics = Semantics()) -> list[Outcome]:
    """Firing alerts at each check of ``scenario`` (promtool's evaluation loop)."""
    interval = LONG_INTERVAL_S if scenario.long else SHORT_INTERVAL_S
    groups = groups_for_alerts(pack.groups, {c.alertname for c in scenario.checks})
    runner = RuleRunner(groups, load_scenario(scenario), semantics)
    order = sorted(range(len(scenario.checks)), key=lambda i: scenario.checks[i].eval_time_s)
    outcomes: dict[int, Outcome] = {}
    t_s, position = 0, 0
    while position < len(order):
        runner.step(t_s * 1000)
        while position < len(order) and \
                scenario.checks[order[position]].eval_time_s < t_s + interval:
            check = scenario.checks[order[position]]
            frozen = tuple(replace(a, annotations=dict(a.annotations))
                           for a in runner.alerts(check.alertname))
            outcomes[order[position]] = Outcome(frozen)
            position += 1
        t_s += interval
    if runner.errors:
        first = runner.errors[0]
        raise ScenarioMismatch(f"{scenario.name}: rule {first.rule} failed at "
                               f"{first.t_ms / 1000:g} s: {first.message}")
    return [outcomes[i] for i in range(len(scenario.checks))]


def verify_scenario(pack: RulePack, scenario: Scenario,
                    semantics: Semantics = Semantics()) -> list[Outcome]:
    """:func:`evaluate_scenario`, raising :class:`ScenarioMismatch` on any difference."""
    outcomes = evaluate_scenario(pack, scenario, semantics)
    for check, outcome in zip(scenario.checks, outcomes, strict=True):
        expected = set(check.alerts)
        got = outcome.label_sets()
        if got != expected:
            raise ScenarioMismatch(
                f"{scenario.name} at {check.eval_time_s} s: expected {len(expected)} alert(s) "
                f"{sorted(map(dict, expected), key=str)}, evaluator fired {len(got)}: "
                f"{sorted(map(dict, got), key=str)}")
    return outcomes


def _alert_tests(pack: RulePack, scenario: Scenario, outcomes: list[Outcome]
                 ) -> list[dict[str, Any]]:
    tests = []
    for check, outcome in zip(scenario.checks, outcomes, strict=True):
        rule = pack.alert(check.alertname)
        expected = []
        for alert in outcome.alerts:
            labels = {k: v for k, v in alert.labels if k != "alertname"}
            expected.append({"exp_labels": labels | rule.labels(),
                             "exp_annotations": dict(alert.annotations)})
        when = duration(check.eval_time_s) if check.eval_time_s else "0s"
        tests.append({"eval_time": when, "alertname": check.alertname,
                      "exp_alerts": expected})
    return tests


def _input_series(scenario: Scenario) -> list[dict[str, str]]:
    return [{"series": s.selector(), "values": s.values_text()} for s in scenario.series]


def _test_group(pack: RulePack, scenario: Scenario, semantics: Semantics,
                verified: Verified | None = None) -> dict[str, Any]:
    outcomes = (verified or {}).get((id(scenario), semantics))
    if outcomes is None:
        outcomes = verify_scenario(pack, scenario, semantics)
    return {"name": scenario.name, "interval": duration(scenario.interval_s),
            "input_series": _input_series(scenario),
            "alert_rule_test": _alert_tests(pack, scenario, outcomes)}


def evaluator_test_group(pack: RulePack, scenario: Scenario, semantics: Semantics,
                         records: list[str]) -> dict[str, Any]:
    """A test group whose expected alerts *and* recorded values are what the offline
    evaluator computes (the differential test): every check's alerts, and each of
    ``records`` at the last check time (``promql_expr_test``, exact float values)."""
    outcomes = evaluate_scenario(pack, scenario, semantics)
    runner = RuleRunner(pack.groups, load_scenario(scenario), semantics)
    interval = LONG_INTERVAL_S if scenario.long else SHORT_INTERVAL_S
    runner.run(range(0, (scenario.end_s + 1) * 1000, interval * 1000))
    from supernode.monitor.promql import Selector
    from supernode.monitor.storage import render_labels

    expr_tests = []
    for name in records:
        vector = runner.evaluator.vector(Selector(name), scenario.end_s * 1000)
        samples = [{"labels": render_labels(labels), "value": value} for labels, value in vector]
        expr_tests.append({"expr": name, "eval_time": duration(scenario.end_s),
                           "exp_samples": samples})
    return {"name": scenario.name, "interval": duration(scenario.interval_s),
            "input_series": _input_series(scenario),
            "alert_rule_test": _alert_tests(pack, scenario, outcomes),
            "promql_expr_test": expr_tests}


def test_document(pack: RulePack, scenarios: list[Scenario], rule_file: str,
                  long: bool, semantics: Semantics = Semantics(),
                  verified: Verified | None = None) -> dict[str, Any]:
    """The promtool test file of ``scenarios`` (the long ones, or the short ones);
    ``verified``: outcomes :func:`scenarios_for` kept for these scenario objects."""
    chosen = [s for s in scenarios if s.long == long]
    return {
        "rule_files": [rule_file],
        "evaluation_interval": duration(LONG_INTERVAL_S if long else SHORT_INTERVAL_S),
        "group_eval_order": [g.name for g in pack.groups],
        "tests": [_test_group(pack, s, semantics, verified) for s in chosen],
    }
