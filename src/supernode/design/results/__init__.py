"""The typed contract of ``results.json``: :class:`DesignResults`, one pydantic model per
section, every object with fixed keys closed (``extra="forbid"``) and every number finite.

:meth:`supernode.design.DesignResult.to_dict` checks its dict against the model
(:func:`check_results`), so a stage that adds, drops or retypes a key without declaring it
here fails at once; the dict itself is returned unchanged (the report and the decision log
read plain dicts). ``supernode schema results`` prints the model's JSON Schema
(:func:`supernode.spec.schema.json_schema`). Sections a
run can leave out are null: ``simulation`` with ``--no-simulate``, ``reviewed_plan``,
``reliability`` and ``summary`` when no plan fits, ``fit`` and ``scheduling`` when they
cannot be computed (each with a note), ``artefacts`` in a report rendered without the files,
``memory`` when the design says nothing about its memory space.
"""

from __future__ import annotations

from typing import Any, Literal

from supernode.design.results.base import ResultModel, field, optional
from supernode.design.results.bom import BillOfMaterials
from supernode.design.results.facility import FacilityResults
from supernode.design.results.fit import FitResults
from supernode.design.results.memory import MemoryResults
from supernode.design.results.network import (
    ClusterSummary,
    TopologyResults,
    WorkloadSummary,
)
from supernode.design.results.operations import (
    ArtefactsListing,
    MonitoringResults,
    SchedulingResults,
)
from supernode.design.results.planning import PlanResults, ReviewedPlan
from supernode.design.results.reliability import ReliabilityResults
from supernode.design.results.reproduce import Reproduce
from supernode.design.results.review import DecisionRecord, Finding, Inputs, Timings, Verdict
from supernode.design.results.serving import ServingResults
from supernode.design.results.simulation import SimulationResults
from supernode.design.results.summary import Economics, Summary

#: ``results.json`` -> ``schema``.
SCHEMA = "supernode-design/1"


class DesignResults(ResultModel):
    """``results.json`` of ``supernode design``: every figure the report and the decision
    log show (SI units unless a key says otherwise: seconds, bytes, bytes/s, watts)."""

    schema_: Literal["supernode-design/1"] = field("Document kind and version.",
                                                   alias="schema")
    inputs: Inputs = field("What was reviewed, and the options of the run.")
    verdict: Verdict = field("The rules' verdict.")
    cluster: ClusterSummary = field("The cluster reviewed.")
    workload: WorkloadSummary = field("The workload reviewed.")
    topology: TopologyResults = field("The topology report.")
    plans: PlanResults = field("The planner's report.")
    reviewed_plan: ReviewedPlan | None = field("The plan under review; null when no plan "
                                               "fits.")
    simulation: SimulationResults | None = field("One simulated iteration of the reviewed "
                                                 "plan; null with --no-simulate or no plan.")
    reliability: ReliabilityResults | None = field("Failures, recovery and goodput of the "
                                                   "reviewed plan; null when no plan fits.")
    facility: FacilityResults = field("Power, cooling, floor and cabling.")
    monitoring: MonitoringResults = field("The alert rules generated for the cluster.")
    scheduling: SchedulingResults | None = field("The placement replay; null when the "
                                                 "cluster cannot be scheduled.")
    artefacts: ArtefactsListing | None = optional(
        "The files written beside the report (left out of a report rendered without them).")
    fit: FitResults | None = field("Does the workload need a supernode; null when not "
                                   "computed.")
    memory: MemoryResults | None = optional(
        "The global address space; null when the cluster has no memory: block and the "
        "bundled data names none of its host's parts.")
    economics: Economics = field("The one price model: every price with its source.")
    findings: list[Finding] = field("Every enabled rule's finding, in report order.")
    notes: list[str] = field("What was left out, and why.")
    bom: BillOfMaterials = field("The bill of materials, priced from the price model.")
    decisions: list[DecisionRecord] = field("The decision records.")
    summary: Summary | None = field("The executive summary; null when no plan fits.")
    serving: ServingResults | None = optional("Does serving the workload need a supernode "
                                              "(design --serve); left out without it.")
    reproduce: Reproduce | None = optional("The CLI commands that reproduce the figures "
                                           "(left out of results of older runs).")
    timings_s: Timings = field("Wall time per stage (s).")


def check_results(data: dict[str, Any]) -> DesignResults:
    """``data`` (a ``results.json`` dict) as :class:`DesignResults`; a pydantic
    ``ValidationError`` naming every key that does not match."""
    return DesignResults.model_validate(data)


__all__ = ["SCHEMA", "DesignResults", "check_results"]
