"""Evaluate every enabled rule on a design's facts; findings and a verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Importing the rule modules registers their rules (order = report order).
from supernode.rules import (  # noqa: F401
    fabric_rules,
    facility_rules,
    memory_rules,
    plan_rules,
    reliability_rules,
    scheduling_rules,
)
from supernode.rules.facts import Facts
from supernode.rules.pack import RulePack, settings
from supernode.rules.registry import RULES, Outcome, Rule, Threshold


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one design."""

    rule: Rule
    severity: str
    threshold: Threshold
    outcome: Outcome

    @property
    def failed(self) -> bool:
        """True when the rule's check failed."""
        return self.outcome.status == "fail"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready finding (docs/rules.md lists the keys)."""
        o = self.outcome
        return {**self.rule.describe(), "severity": self.severity,
                "threshold": o.limit if o.limit is not None else self.threshold,
                "status": o.status, "failed": self.failed, "measured": o.measured,
                "detail": o.detail, "fix": o.fix, "predicted_effect": o.predicted_effect,
                "predicted_value": o.predicted_value}


def run_rules(facts: Facts, pack: RulePack | None = None) -> list[Finding]:
    """Every enabled rule's finding, in registration order."""
    out = []
    for rule_id, setting in settings(pack).items():
        if not setting.enabled:
            continue
        rule = RULES[rule_id]
        outcome = rule.evaluate(facts, setting.threshold)
        out.append(Finding(rule, graded(setting.severity, outcome.severity),
                           setting.threshold, outcome))
    return out


def graded(pack: str, consequence: str | None) -> str:
    """The severity of a failure: the pack's, or less when the rule graded it on its
    consequence (a rule never raises the pack's severity)."""
    if consequence is None:
        return pack
    return max(pack, consequence, key=lambda s: SEVERITY_ORDER[s])


#: The verdicts, worst first.
VERDICTS = ("fail", "pass with warnings", "pass")
#: Order in which failed findings are listed (most severe first).
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def summary(findings: list[Finding]) -> dict[str, Any]:
    """Counts of failures per severity, statuses, the verdict and the top findings."""
    failed = [f for f in findings if f.failed]
    counts = {s: sum(1 for f in failed if f.severity == s) for s in SEVERITY_ORDER}
    statuses: dict[str, int] = {}
    for f in findings:
        statuses[f.outcome.status] = statuses.get(f.outcome.status, 0) + 1
    verdict = VERDICTS[0 if counts["error"] else 1 if counts["warning"] else 2]
    top = sorted(failed, key=lambda f: SEVERITY_ORDER[f.severity])
    return {"verdict": verdict, "failed_by_severity": counts, "statuses": statuses,
            "rules_evaluated": len(findings),
            "errors": [f.rule.id for f in failed if f.severity == "error"],
            "top_findings": [f.rule.id for f in top[:8]]}
