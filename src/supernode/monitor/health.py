"""``supernode health``: the rule pack evaluated offline on exposition snapshots.

Every rule group runs at every snapshot time (as ``promtool test rules`` runs them), with
the same expressions Prometheus would load. The report lists the alerts firing or pending
at the last snapshot, grouped by topology (grouped parent alerts first, then supernode,
rack and host), the rules that could not be judged (too little history for their windows,
or no data for their metrics), and what was skipped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from supernode.monitor.pack import RulePack
from supernode.monitor.rules import AlertRule, RecordingRule
from supernode.monitor.runner import Alert, RuleRunner, may_produce
from supernode.monitor.snapshots import LoadedSnapshots
from supernode.monitor.storage import Semantics

SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class AlertView:
    """One alert as the report shows it."""

    alertname: str
    state: str
    severity: str
    scope: str
    value: float
    labels: dict[str, str]
    annotations: dict[str, str]
    active_since_s: float
    fires_at_s: float | None

    def place(self, host_label: str) -> tuple[str, str, str]:
        """(supernode, rack, host) of the alert ('' where unknown)."""
        return (self.labels.get("supernode", ""), self.labels.get("rack", ""),
                self.labels.get(host_label, ""))

    def to_dict(self) -> dict[str, Any]:
        """Stable keys."""
        value = self.value if math.isfinite(self.value) else None
        return {"alertname": self.alertname, "state": self.state, "severity": self.severity,
                "scope": self.scope, "value": value, "labels": self.labels,
                "annotations": self.annotations, "active_since_s": self.active_since_s,
                "fires_at_s": self.fires_at_s}


@dataclass
class HealthReport:
    """Alerts at the last snapshot and what could not be judged."""

    evaluated_at_s: float
    span_s: float
    rules: int
    alerts: list[AlertView]
    not_judged: list[dict[str, Any]]
    no_data: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    snapshots: list[dict[str, Any]]
    skipped: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    host_label: str = "hostname"
    switch_label: str = "switch"
    cdu_label: str = "cdu"

    def firing(self) -> list[AlertView]:
        """Alerts firing at the last snapshot."""
        return [a for a in self.alerts if a.state == "firing"]

    def to_dict(self) -> dict[str, Any]:
        """Stable keys (times in s from the first snapshot, or epoch s with timestamps)."""
        return {"evaluated_at_s": self.evaluated_at_s, "span_s": self.span_s,
                "rules": self.rules, "firing": len(self.firing()),
                "pending": len(self.alerts) - len(self.firing()),
                "alerts": [a.to_dict() for a in self.alerts], "not_judged": self.not_judged,
                "no_data": self.no_data, "errors": self.errors, "snapshots": self.snapshots,
                "skipped": self.skipped, "notes": self.notes}


def lookback_s(pack: RulePack, rule: AlertRule | RecordingRule, seen: frozenset = frozenset()
               ) -> int:
    """The history a rule needs: its own windows plus those of the records it reads."""
    records = {r.record: r for r in pack.recordings()}
    own = rule.expr.max_lookback_s()
    deeper = [lookback_s(pack, records[m], seen | {rule.name}) for m in rule.expr.metrics()
              if m in records and m not in seen]
    return own + max(deeper, default=0)


def exporter_metrics(pack: RulePack, rule: AlertRule | RecordingRule,
                     seen: frozenset = frozenset()) -> set[str]:
    """Exporter metrics a rule reads, through the records it reads."""
    records = {r.record: r for r in pack.recordings()}
    out = set()
    for name in rule.expr.metrics():
        if name in records and name not in seen:
            out |= exporter_metrics(pack, records[name], seen | {name})
        elif name not in records:
            out.add(name)
    return out


def _view(alert: Alert, rule: AlertRule) -> AlertView:
    labels = {k: v for k, v in alert.labels if k not in ("alertname", "severity", "scope")}
    fires = None if alert.state == "firing" else (alert.active_at_ms + rule.for_s * 1000) / 1000
    return AlertView(rule.alert, alert.state, rule.severity, rule.scope, alert.value, labels,
                     dict(alert.annotations), alert.active_at_ms / 1000, fires)


def _sort_key(view: AlertView, host_label: str) -> tuple:
    return (view.scope != "parent", view.state != "firing", *view.place(host_label),
            SEVERITY_ORDER.get(view.severity, 9), view.alertname, sorted(view.labels.items()))


def evaluate(pack: RulePack, loaded: LoadedSnapshots,
             semantics: Semantics = Semantics(left_open=True),
             progress: Callable[[int], None] | None = None) -> HealthReport:
    """Run the pack over the snapshots and report the state at the last one
    (``progress(done)`` after each evaluation time)."""
    runner = RuleRunner(pack.groups, loaded.storage, semantics)
    runner.run(loaded.times_ms, progress)
    t0, last = loaded.times_ms[0], loaded.times_ms[-1]
    span_s = (last - t0) / 1000
    rules = {r.alert: r for r in pack.alerts()}
    views = [_view(a, rules[a.label_map()["alertname"]])
             for a in runner.alerts(states=("firing", "pending"))]
    host = pack.ctx.host
    views.sort(key=lambda v: _sort_key(v, host))
    present = loaded.storage.names()
    no_data, not_judged = [], []
    active = {v.alertname for v in views}
    for rule in pack.alerts():
        missing = sorted(m for m in exporter_metrics(pack, rule) if m not in present)
        if not may_produce(rule.expr, present):
            no_data.append({"rule": rule.alert, "missing": missing})
            continue
        needs = lookback_s(pack, rule) + rule.for_s
        if needs > span_s and rule.alert not in active:
            not_judged.append({"rule": rule.alert, "needs_s": needs, "span_s": span_s})
    errors = [{"rule": e.rule, "time_s": e.t_ms / 1000, "message": e.message}
              for e in runner.errors]
    top = sorted(loaded.skipped_names.items(), key=lambda kv: (-kv[1], kv[0]))[:20]
    skipped = {"samples": loaded.skipped_samples, "metrics": len(loaded.skipped_names),
               "top": dict(top)}
    labels = pack.ctx.config.labels
    return HealthReport(last / 1000, span_s, len(rules), views, not_judged, no_data, errors,
                        loaded.snapshots, skipped, list(pack.notes), host, labels.switch,
                        labels.cdu)
