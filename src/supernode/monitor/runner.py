"""Run rule groups over time the way Prometheus' rule manager does (``rules/*.go``, v2.42).

At each evaluation time the groups run in order and each group's rules run in order; a
recording rule's output is appended at that time (later rules see it), and series it
produced last time but not now get a staleness marker. An alerting rule's result elements
become *pending* alerts (``ActiveAt`` = now), turn *firing* once they have been active for
the rule's ``for``, are dropped if they vanish while pending, and go *inactive* (resolved,
kept 15 minutes) if they vanish while firing. Alert labels are the result's labels without
the metric name, then the rule's labels, then ``alertname``; annotations are expanded with
the result's labels and value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from supernode.monitor.engine import Evaluator
from supernode.monitor.matching import EvaluationError, Vector
from supernode.monitor.promql import Aggregate, Binary, Call, Expr, Num, RangeCall, Selector
from supernode.monitor.rules import AlertRule, RecordingRule, RuleGroup
from supernode.monitor.storage import Labels, Semantics, Storage, drop_name, with_name
from supernode.monitor.templates import expand

#: How long Prometheus keeps a resolved alert (``resolvedRetention``), ms.
RESOLVED_RETENTION_MS = 15 * 60 * 1000


@dataclass
class Alert:
    """One alert instance of a rule."""

    labels: Labels
    annotations: dict[str, str]
    state: str
    active_at_ms: int
    value: float
    fired_at_ms: int | None = None
    resolved_at_ms: int | None = None

    def label_map(self) -> dict[str, str]:
        """The alert's labels as a mapping."""
        return dict(self.labels)


@dataclass
class RuleError:
    """A rule that failed to evaluate at one time (Prometheus logs these and goes on)."""

    rule: str
    t_ms: int
    message: str


def may_produce(expr: Expr, present: set[str]) -> bool:
    """False when ``expr`` is certainly empty because metrics it needs are absent."""
    if isinstance(expr, (Selector, RangeCall)):
        return (expr.selector if isinstance(expr, RangeCall) else expr).metric in present
    if isinstance(expr, Num):
        return True
    if isinstance(expr, (Call, Aggregate)):
        return may_produce(expr.arg if isinstance(expr, Call) else expr.expr, present)
    assert isinstance(expr, Binary)
    left, right = may_produce(expr.lhs, present), may_produce(expr.rhs, present)
    if expr.op == "or":
        return left or right
    if expr.op == "unless":
        return left
    return left and right


def groups_for_alerts(groups: tuple[RuleGroup, ...], alertnames: Iterable[str]
                      ) -> tuple[RuleGroup, ...]:
    """``groups`` cut to what the alerts ``alertnames`` depend on: their alerting rules and
    every recording rule whose series they read, directly or through other recordings; the
    groups and rules keep their order. Rules read series by metric name only (a
    :class:`~supernode.monitor.promql.Selector` always names its metric), and no rule reads
    alert state, so the alerts named fire at the same times in the cut groups as in the
    whole pack, at a fraction of the evaluations (a rule outside the closure cannot change
    a series a rule inside it reads)."""
    wanted = set(alertnames)
    needed: set[str] = set()
    for group in groups:
        for rule in group.rules:
            if isinstance(rule, AlertRule) and rule.alert in wanted:
                needed |= rule.expr.metrics()
    recordings = [r for g in groups for r in g.rules if isinstance(r, RecordingRule)]
    grew = True
    while grew:
        grew = False
        for rule in recordings:
            if rule.record in needed and not rule.expr.metrics() <= needed:
                needed |= rule.expr.metrics()
                grew = True

    def keep(rule: RecordingRule | AlertRule) -> bool:
        if isinstance(rule, AlertRule):
            return rule.alert in wanted
        return rule.record in needed

    cut = (RuleGroup(g.name, g.interval_s, tuple(r for r in g.rules if keep(r)))
           for g in groups)
    return tuple(g for g in cut if g.rules)


@dataclass
class RuleRunner:
    """Evaluates ``groups`` against ``storage`` at successive times, keeping alert state."""

    groups: tuple[RuleGroup, ...]
    storage: Storage
    semantics: Semantics = field(default_factory=Semantics)
    active: dict[str, dict[Labels, Alert]] = field(default_factory=dict)
    errors: list[RuleError] = field(default_factory=list)
    _previous: dict[tuple[int, int], set[Labels]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.evaluator = Evaluator(self.storage, self.semantics)

    def run(self, times_ms: Iterable[int],
            progress: Callable[[int], None] | None = None) -> None:
        """Evaluate every group at each time of ``times_ms`` (ascending); ``progress`` is
        called with the number of times done after each."""
        for done, t_ms in enumerate(times_ms, start=1):
            self.step(t_ms)
            if progress is not None:
                progress(done)

    def step(self, t_ms: int) -> None:
        """One evaluation cycle at ``t_ms``."""
        for g, group in enumerate(self.groups):
            for r, rule in enumerate(group.rules):
                vector = self._evaluate(rule, t_ms)
                if isinstance(rule, RecordingRule):
                    self._record((g, r), rule, vector, t_ms)
                else:
                    self._alert(rule, vector, t_ms)

    def _evaluate(self, rule: RecordingRule | AlertRule, t_ms: int) -> Vector:
        if not may_produce(rule.expr, self.storage.names()):
            return []
        try:
            return self.evaluator.vector(rule.expr, t_ms)
        except EvaluationError as exc:
            self.errors.append(RuleError(rule.name, t_ms, str(exc)))
            return []

    def _record(self, key: tuple[int, int], rule: RecordingRule, vector: Vector,
                t_ms: int) -> None:
        produced = [with_name(labels, rule.record) for labels, _ in vector]
        if len(set(produced)) != len(produced):
            self.errors.append(RuleError(rule.record, t_ms, "vector contains metrics with "
                                         "the same labelset after applying rule labels"))
            produced, vector = [], []
        for labels, (_, value) in zip(produced, vector, strict=True):
            self.storage.add(labels, t_ms, value)
        now = set(produced)
        for labels in self._previous.get(key, set()) - now:
            self.storage.add(labels, t_ms, float("nan"), stale=True)
        self._previous[key] = now

    def _alert(self, rule: AlertRule, vector: Vector, t_ms: int) -> None:
        current: dict[Labels, Alert] = {}
        for labels, value in vector:
            series = drop_name(labels)
            alert_labels = dict(series) | rule.labels() | {"alertname": rule.alert}
            key = tuple(sorted(alert_labels.items()))
            if key in current:
                self.errors.append(RuleError(rule.alert, t_ms, "vector contains metrics with "
                                             "the same labelset after applying alert labels"))
                return
            notes = {k: expand(v, dict(labels), value) for k, v in rule.annotations().items()}
            current[key] = Alert(key, notes, "pending", t_ms, value)
        active = self.active.setdefault(rule.alert, {})
        for key, fresh in current.items():
            known = active.get(key)
            if known is not None and known.state != "inactive":
                known.value, known.annotations = fresh.value, fresh.annotations
            else:
                active[key] = fresh
        for key, alert in list(active.items()):
            if key not in current:
                expired = alert.resolved_at_ms is not None and \
                    t_ms - alert.resolved_at_ms > RESOLVED_RETENTION_MS
                if alert.state == "pending" or expired:
                    del active[key]
                if alert.state != "inactive":
                    alert.state, alert.resolved_at_ms = "inactive", t_ms
                continue
            if alert.state == "pending" and t_ms - alert.active_at_ms >= rule.for_s * 1000:
                alert.state, alert.fired_at_ms = "firing", t_ms

    def alerts(self, name: str | None = None, states: tuple[str, ...] = ("firing",)
               ) -> list[Alert]:
        """Alerts of rule ``name`` (every rule when None) in ``states``, sorted by labels."""
        rules = [name] if name is not None else sorted(self.active)
        found = [a for r in rules for a in self.active.get(r, {}).values() if a.state in states]
        return sorted(found, key=lambda a: a.labels)
