"""The monitoring stage of the review: the alert rules generated for the reviewed cluster.

The rule pack of :mod:`supernode.monitor.pack` (the one ``supernode monitor rules`` writes
as Prometheus rules), listed as :meth:`RuleSummary.to_dict` rows (id, seed section,
severity, ``for_s``, scope, component, summary, expression) plus, for a person reading the
report, the summary with its template actions shown as placeholders (``text``), and the
rule's description and runbook; with the pack's notes on the rules left out and why.
``results.json`` -> ``monitoring``.
"""

from __future__ import annotations

import re
from typing import Any

from supernode.monitor.pack import RulePack, build_pack
from supernode.monitor.rules import SEVERITIES
from supernode.monitor.templates import LABEL, TOKEN
from supernode.spec.resolved import Cluster


def readable(template: str) -> str:
    """An annotation template as text: ``{{ $labels.gpu }}`` -> ``<gpu>``, the alert's
    value -> ``<value>``."""
    def placeholder(match: re.Match) -> str:
        label = LABEL.fullmatch(match.group(1))
        return f"<{label.group(1)}>" if label else "<value>"

    return TOKEN.sub(placeholder, template)


def monitoring_summary(cluster: Cluster, pack: RulePack | None = None) -> dict[str, Any]:
    """Alerts generated for ``cluster`` (``pack``, or the default monitor configuration's),
    counts and notes."""
    pack = build_pack(cluster) if pack is None else pack
    alerts = [{**s.to_dict(), "text": readable(s.summary), "description": a.description,
               "runbook": a.runbook}
              for s, a in zip(pack.summaries(), pack.alerts(), strict=True)]
    counts = {s: sum(1 for a in alerts if a["severity"] == s) for s in reversed(SEVERITIES)}
    return {"alerts": alerts, "count": len(alerts), "by_severity": counts,
            "recording_rules": len(pack.recordings()), "notes": list(pack.notes)}
