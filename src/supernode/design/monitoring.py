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

from supernode.cluster.cooling import CoolingTopology
from supernode.monitor.config import MonitorConfig, load_config
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


def cooled_config(cooling: CoolingTopology) -> MonitorConfig:
    """The default monitor configuration with each rack labelled by the CDU that serves it
    in ``cooling`` (the facility's cooling topology; the defaults' layout when no rack is
    liquid-cooled)."""
    config = load_config()
    if not cooling.needed:
        return config
    layout = config.layout.model_copy(update={"racks_per_cdu": cooling.racks_per_cdu})
    return config.model_copy(update={"layout": layout})


def monitoring_summary(cluster: Cluster, pack: RulePack | None = None,
                       cooling: CoolingTopology | None = None) -> dict[str, Any]:
    """Alerts generated for ``cluster`` (``pack``, or the pack of :func:`cooled_config`),
    counts and notes; the CDU labels of ``cooling`` (the facility's cooling topology)."""
    cooling = cooling or CoolingTopology(0, 0.0, 0, 0, 0, "no liquid-cooled racks")
    pack = build_pack(cluster, cooled_config(cooling)) if pack is None else pack
    alerts = [{**s.to_dict(), "text": readable(s.summary), "description": a.description,
               "runbook": a.runbook}
              for s, a in zip(pack.summaries(), pack.alerts(), strict=True)]
    counts = {s: sum(1 for a in alerts if a["severity"] == s) for s in reversed(SEVERITIES)}
    return {"alerts": alerts, "count": len(alerts), "by_severity": counts,
            "recording_rules": len(pack.recordings()), "notes": list(pack.notes),
            "racks_per_cdu": cooling.racks_per_cdu, "cdu_labels": len(cooling.served())}
