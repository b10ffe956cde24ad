"""Recording and alerting rules as data, and their Prometheus rule-file form.

An :class:`AlertRule` carries what the issue asks of every rule: an id (the alert name),
the seed section it comes from, its expression, its ``for`` duration, a severity and
runbook text. :func:`rule_file` renders groups as the ``groups:`` YAML Prometheus and
``promtool check rules`` read (docs: prometheus.io/docs/prometheus/latest/configuration/
recording_rules and alerting_rules).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from supernode.monitor.promql_expr import Expr
from supernode.monitor.promql_syntax import METRIC_NAME, duration
from supernode.monitor.templates import check_template

SEVERITIES = ("info", "warning", "critical")


@dataclass(frozen=True)
class RecordingRule:
    """``record: NAME`` with ``expr``: a derived series, usually with topology labels."""

    record: str
    expr: Expr

    def __post_init__(self) -> None:
        if not METRIC_NAME.fullmatch(self.record):
            raise ValueError(f"invalid record name {self.record!r}")

    @property
    def name(self) -> str:
        """The record name."""
        return self.record

    def to_yaml(self) -> dict[str, Any]:
        """The rule as Prometheus' rule-file mapping."""
        return {"record": self.record, "expr": self.expr.render()}


@dataclass(frozen=True)
class AlertRule:
    """An alerting rule with the seed section it implements.

    ``scope`` names what one alert is about (``gpu``, ``host``, ``nic``, ``switch_port``,
    ``nvswitch``, ``cdu``, ``rack``, or ``parent`` for a grouped alert naming the shared
    switch, power shelf, CDU or rack). ``summary``, ``description`` and ``runbook`` may use
    the templates of :mod:`supernode.monitor.templates`.
    """

    alert: str
    expr: Expr
    severity: str
    seed: str
    summary: str
    description: str
    runbook: str
    scope: str
    for_s: int = 0
    component: str = ""
    reads: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}")
        if not self.alert.isidentifier():
            raise ValueError(f"invalid alert name {self.alert!r}")
        for text in (self.summary, self.description, self.runbook):
            check_template(text)

    @property
    def name(self) -> str:
        """The alert name (the rule's id)."""
        return self.alert

    def labels(self) -> dict[str, str]:
        """Static labels every alert of the rule carries."""
        return {"severity": self.severity, "scope": self.scope}

    def annotations(self) -> dict[str, str]:
        """Annotation templates (``seed`` traces the rule to its source section)."""
        return {"summary": self.summary, "description": self.description,
                "runbook": self.runbook, "seed": self.seed}

    def to_yaml(self) -> dict[str, Any]:
        """The rule as Prometheus' rule-file mapping."""
        out: dict[str, Any] = {"alert": self.alert, "expr": self.expr.render()}
        if self.for_s:
            out["for"] = duration(self.for_s)
        out["labels"] = self.labels()
        out["annotations"] = self.annotations()
        return out


Rule = RecordingRule | AlertRule


@dataclass(frozen=True)
class RuleGroup:
    """A rule group: evaluated in order, every ``interval_s`` seconds."""

    name: str
    interval_s: int
    rules: tuple[Rule, ...]

    def to_yaml(self) -> dict[str, Any]:
        """The group as Prometheus' rule-file mapping."""
        return {"name": self.name, "interval": duration(self.interval_s),
                "rules": [r.to_yaml() for r in self.rules]}


def rule_file(groups: list[RuleGroup] | tuple[RuleGroup, ...]) -> dict[str, Any]:
    """The ``groups:`` document of a Prometheus rule file."""
    return {"groups": [g.to_yaml() for g in groups]}
