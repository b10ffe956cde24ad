"""Fixes as what-ifs: every fix a rule states as a cluster-file change is applied to a copy
of the design and the rule it targets is run again on it (issue 24).

A rule's :class:`~supernode.rules.registry.Outcome` carries its fix as ``fix_patch``
(field paths of the cluster file and their new values). :func:`review_fixes` applies each to
a copy of the cluster's specification, resolves it (an unbuildable change is refused there),
re-runs the topology report and evaluates the rule on the fixed design; the finding gets
``fix_review`` (the change, the rule's status and measured value afterwards, and the
verdict's failure counts with it). A fix whose re-review does not pass is not suggested:
its ``fix`` and predicted effect are dropped and the review says why. Fixes that are not a
cluster-file change (a scheduler setting, a plan knob) carry ``fix_review`` null.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from supernode.cluster.resolve import resolve_cluster
from supernode.errors import InputError
from supernode.rules import Facts
from supernode.rules.engine import Finding
from supernode.topology.metrics import topology_report


def _patched(facts: Facts, patch: tuple) -> Facts | None:
    spec = facts.cluster.spec
    data = copy.deepcopy(spec.model_dump())
    for path, value in patch:
        node = data
        for key in path[:-1]:
            if node.get(key) is None:
                node[key] = {}
            node = node[key]
        node[path[-1]] = value
    try:
        cluster = resolve_cluster(type(spec).model_validate(data))
        return replace(facts, cluster=cluster, topology=topology_report(cluster).to_dict())
    except (InputError, ValueError):
        return None


def _change(patch: tuple) -> str:
    return "; ".join(f"{'.'.join(path)}: {value!r}" for path, value in patch)


def review_fixes(facts: Facts, findings: list[Finding], data: list[dict[str, Any]],
                 counts: dict[str, int]) -> None:
    """Re-review the cluster-file fix of every failed finding (``data``: the findings'
    dicts, changed in place; ``counts``: failed rules per severity now)."""
    for finding, row in zip(findings, data, strict=True):
        patch = finding.outcome.fix_patch
        row["fix_review"] = None
        if not finding.failed or patch is None:
            continue
        fixed = _patched(facts, patch)
        outcome = (finding.rule.evaluate(fixed, finding.threshold) if fixed is not None
                   else None)
        passes = outcome is not None and outcome.status == "pass"
        after = dict(counts)
        if passes:
            after[finding.severity] -= 1
        row["fix_review"] = {"change": _change(patch),
                             "status": outcome.status if outcome else "not_buildable",
                             "measured": outcome.measured if outcome else None,
                             "failed_by_severity_after": after}
        if not passes:
            row["fix"] = row["predicted_effect"] = row["predicted_value"] = None
            row["detail"] += (f"; the fix tried ({_change(patch)}) does not pass the rule "
                              "on the changed design, so none is suggested")
