"""``results.json`` -> ``inputs``, ``verdict``, ``findings``, ``decisions`` and
``timings_s``: what was reviewed, what the rules found (docs/rules.md), the decision
records (MADR fields, :mod:`supernode.design.decisions`) and seconds per stage."""

from __future__ import annotations

from typing import Literal

from supernode.design.results.base import ResultModel, Scalar, field, optional

Severity = Literal["error", "warning", "info"]
Status = Literal["pass", "fail", "not_applicable", "not_evaluated"]


class FittedParameter(ResultModel):
    """One efficiency parameter a calibration file set."""

    table: str = field("Efficiency table.")
    parameter: str = field("Parameter of that table.")
    value: float = field("The fitted value.")


class CalibrationRecord(ResultModel):
    """The calibration file in force (``supernode design --calibration``)."""

    path: str = field("The file as given.")
    sha256: str = field("SHA-256 of its bytes (hex).")
    cluster: str = field("Cluster the runs were placed on.")
    date: str | None = field("When the runs were made (ISO date), or null.")
    packaged_tables_changed: bool = field("True when the packaged tables changed since.")
    fitted: list[FittedParameter] = field("What it applied.")


class Inputs(ResultModel):
    """What was reviewed, and the options of the run."""

    cluster: str = field("Cluster file or preset.")
    workload: str = field("Workload file or preset.")
    plan: str | None = field("Plan file reviewed (--plan), or null: the planner's best.")
    rules: str = field("Rule pack file, or default.")
    example: str | None = field("Bundled example run, or null.")
    simulate: bool = field("True when the iteration was simulated.")
    schedule: bool = field("True when the scheduling trace was replayed (false with "
                           "--no-schedule: ``scheduling`` is null).")
    seed: int = field("Seed of the ECMP hash, the Monte Carlo and the replay.")
    reliability_runs: int = field("Monte Carlo runs.")
    reliability_days: float = field("Days per Monte Carlo run.")
    prometheus_major: int = field("Prometheus major the monitoring test values follow.")
    calibration: CalibrationRecord | None = optional(
        "The calibration file in force, or null (written by the design command).")


class SeverityCounts(ResultModel):
    """Failed rules per severity."""

    error: int = field("Errors.")
    warning: int = field("Warnings.")
    info: int = field("Info findings.")


class Verdict(ResultModel):
    """The rules' verdict (:func:`supernode.rules.summary`)."""

    verdict: Literal["pass", "pass with warnings", "fail"] = field("The verdict.")
    failed_by_severity: SeverityCounts = field("Failed rules per severity.")
    statuses: dict[Status, int] = field("Rules per status.")
    rules_evaluated: int = field("Rules evaluated.")
    errors: list[str] = field("Ids of the error rules that failed.")
    top_findings: list[str] = field("Ids of the failed rules, most severe first (at most "
                                    "8).")


class FixReview(ResultModel):
    """A fix applied to a copy of the design and its rule run again."""

    change: str = field("The cluster-file change.")
    status: str = field("The rule's status on the changed design (not_buildable: the "
                        "change does not resolve).")
    measured: float | None = field("The rule's measured value there.")
    failed_by_severity_after: SeverityCounts = field("Failed rules per severity with it.")


class Finding(ResultModel):
    """One rule's verdict on the design (docs/rules.md)."""

    id: str = field("Rule id.")
    title: str = field("Rule title.")
    seed: str = field("Seed section it comes from.")
    unit: str = field("Unit of measured and threshold.")
    comparison: str = field("How measured compares with threshold.")
    category: str = field("plan, fabric, facility, reliability or scheduling.")
    rationale: str = field("Why the rule exists.")
    severity: Severity = field("Severity when it fails.")
    threshold: float | list[float] | None = field("The limit (in unit), or null.")
    status: Status = field("pass, fail, not_applicable or not_evaluated.")
    failed: bool = field("True when status is fail.")
    measured: float | None = field("The value measured (in unit), or null.")
    detail: str = field("What was found, in a sentence.")
    fix: str | None = field("The suggested fix (failures), or null.")
    predicted_effect: str | None = field("What the fix would do, or null.")
    predicted_value: float | None = field("The value after the fix (in unit), or null.")
    fix_review: FixReview | None = optional("The fix applied to a copy of the design and "
                                            "the rule run again (null: not a cluster-file "
                                            "change; absent outside the design review).")


class Figure(ResultModel):
    """One figure of a decision option."""

    label: str = field("What it is.")
    value: Scalar = field("Its value (in unit).")
    unit: str = field("s, share, fraction, bytes, bytes_per_s, w, l_per_min, usd, count, "
                      "bool.")


class DecisionOption(ResultModel):
    """One option a decision record considered."""

    name: str = field("The option.")
    chosen: bool = field("True for the proposed one.")
    figures: list[Figure] = field("Its predicted figures.")
    note: str | None = optional("A note on it.")


class DecisionRecord(ResultModel):
    """One decision record (MADR fields), pre-filled from the stages' results."""

    id: str = field("D1 to D7.")
    title: str = field("What is decided.")
    status: Literal["proposed"] = field("Always proposed: a person decides.")
    context: str = field("The context, with its figures.")
    options: list[DecisionOption] = field("Options considered.")
    decision: str = field("The proposed decision.")
    consequences: list[str] = field("Its consequences (the rules that fail, ...).")


class Timings(ResultModel):
    """Wall time of each stage (s): each until the next began."""

    validate_: float = field("Loading and checking the inputs (s).", alias="validate")
    topology: float = field("Topology report (s).")
    memory: float = field("Memory section: the global address space (s).")
    plan: float = field("Plan search, workload fit and serving fit (s).")
    simulate: float = field("Simulation (s).")
    reliability: float = field("Reliability (s).")
    facility: float = field("Facility (s).")
    monitoring: float = field("Monitoring pack (s).")
    scheduling: float = field("Scheduling replay (s).")
    artefacts: float = field("Exported files (s).")
    rules: float = field("Rules, notes and decision records (s).")
