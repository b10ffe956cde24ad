"""Comparison results as plain data with stable keys (``compare --json``), and the gate.

Every figure in the table, the JSON and the plots comes from these dictionaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from supernode.measurements.compare import SetComparison
from supernode.measurements.findings import Finding
from supernode.measurements.gate import Gate, failure_reason, gate_rows
from supernode.measurements.links_compare import PointComparison
from supernode.measurements.model import MeasurementSet
from supernode.units import GBYTE_PER_S


@dataclass
class CompareReport:
    """Everything ``compare`` found over its results files."""

    cluster: str
    collectives: list[tuple[SetComparison, list[Finding]]] = field(default_factory=list)
    points: list[PointComparison] = field(default_factory=list)
    other: list[tuple[MeasurementSet, list[Finding]]] = field(default_factory=list)
    gate: Gate | None = None


def finding_dict(f: Finding) -> dict[str, Any]:
    """A finding as plain data."""
    return {"severity": f.severity, "code": f.code, "message": f.message,
            "variables": [{"name": v.name, "meaning": v.meaning} for v in f.variables]}


def _gb(value: float) -> float:
    return value / GBYTE_PER_S


def collective_dict(c: SetComparison, findings: list[Finding],
                    gate: Gate | None) -> dict[str, Any]:
    """One collective comparison as plain data (GB/s and seconds, keys with units)."""
    m, job = c.measurement, c.job
    rows = [{
        "message_bytes": r.message_bytes, "line": r.line, "algorithm": r.algorithm,
        "protocol": r.protocol, "model_binding_tier": r.model_binding,
        "path": r.path, "effects": list(r.effects),
        "measured_time_s": r.measured_time_s, "predicted_time_s": r.predicted_time_s,
        "measured_algbw_gbyte_per_s": _gb(r.measured_algbw_bytes_per_s),
        "predicted_algbw_gbyte_per_s": _gb(r.predicted_algbw_bytes_per_s),
        "measured_busbw_gbyte_per_s": _gb(r.measured_busbw_bytes_per_s),
        "predicted_busbw_gbyte_per_s": _gb(r.predicted_busbw_bytes_per_s),
        "measured_over_predicted": r.ratio, "binding_tier": r.binding.tier,
        "bounds": [{"tier": b.tier, "bound_busbw_gbyte_per_s": _gb(b.bound_busbw_bytes_per_s),
                    "share": b.share} for b in r.bounds],
        "line_rate_tier": r.binding_line_rate.tier,
        "line_rates": [{"tier": b.tier,
                        "line_rate_busbw_gbyte_per_s": _gb(b.bound_busbw_bytes_per_s),
                        "share": b.share} for b in r.line_rates],
        "gated": gate is not None and gate.judges(c.op, r),
        "below_gate": gate is not None and gate.fails(c.op, r),
    } for r in c.rows]
    return {
        "source": m.source, "tool": m.tool, "tool_version": m.tool_version,
        "library_version": m.library_version, "op": c.op, "op_source": m.op_source,
        "placement": c.placement_kind,
        "job": {"ranks": job.ranks, "ranks_source": m.job.ranks_source,
                "hosts": job.hosts, "ranks_per_host": job.ranks_per_host,
                "domains": job.domains, "ranks_per_domain": job.ranks_per_domain,
                "tiers": [{"name": t.name, "ranks": t.group_size,
                           "bandwidth_gbyte_per_s": _gb(t.bandwidth_bytes_per_s),
                           "efficiency_table": t.efficiency} for t in job.fabric.tiers],
                "notes": [*m.job.notes, *job.notes]},
        "rows": rows, "notes": list(m.notes),
        "findings": [finding_dict(f) for f in findings],
    }


def point_dict(p: PointComparison) -> dict[str, Any]:
    """A point-to-point comparison as plain data (SI value with its unit)."""
    return {"source": p.source, "test": p.test, "message_bytes": p.message_bytes,
            "measured": p.measured, "unit": p.unit, "reference": p.reference,
            "reference_name": p.reference_name, "share": p.share, "note": p.note}


def gate_dict(report: CompareReport) -> dict[str, Any] | None:
    """The regression gate: the judged rows under ``threshold`` x prediction, each with
    why it fails (None without a gate)."""
    gate = report.gate
    if gate is None:
        return None
    judged, failures = 0, []
    for c, _ in report.collectives:
        rows, failed = gate_rows(c, gate)
        judged += len(rows)
        failures += [{"source": c.measurement.source, "op": c.op,
                      "message_bytes": r.message_bytes, "measured_over_predicted": r.ratio,
                      "reason": failure_reason(c, r, gate)} for r in failed]
    return {"threshold": gate.threshold, "min_bytes": gate.min_bytes,
            "max_bytes": gate.max_bytes, "ops": list(gate.ops), "scope": gate.scope(),
            "rows": judged, "rows_not_judged": sum(len(c.rows) for c, _ in report.collectives)
            - judged, "failed_rows": len(failures), "passed": not failures,
            "failures": failures}


def report_dict(report: CompareReport) -> dict[str, Any]:
    """The whole report as plain data."""
    return {
        "cluster": report.cluster,
        "collectives": [collective_dict(c, f, report.gate) for c, f in report.collectives],
        "point_to_point": [point_dict(p) for p in report.points],
        "logs": [{"source": m.source, "tool": m.tool,
                  "findings": [finding_dict(f) for f in fs]} for m, fs in report.other],
        "gate": gate_dict(report),
    }
