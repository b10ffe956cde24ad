"""What the rules judge: a design's results (the very dicts the report shows) and the
resolved cluster, for fixes whose effect is predicted by re-running a closed-form model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.spec.resolved import Cluster


@dataclass(frozen=True, kw_only=True)
class Facts:
    """Results of one design (JSON-ready dicts, each the ``results.json`` section of the
    same name) and the cluster they were computed on; built by keyword only.

    ``topology``: :meth:`TopologyReport.to_dict`; ``plans``: :meth:`PlanReport.to_dict`;
    ``reviewed_plan``: the plan under review (:mod:`supernode.design.plans`);
    ``simulation``: :meth:`SimResult.to_dict` or None when not simulated; ``facility``:
    :meth:`FacilityReport.to_dict`; ``fit``: the workload-fit answer or None;
    ``reliability``: :meth:`ReliabilityResult.to_dict` of the reviewed plan, or None when
    not assessed (no plan fits); ``scheduling``: the review's placement replay
    (:func:`supernode.design.scheduling.run_scheduling`), or None when not run;
    ``artefacts``: the listing of the exported files the review writes
    (:func:`supernode.design.artefacts.design_artefacts`), or None; ``memory``: the global
address space (:func:`supernode.design.memory.memory_results`), or None when the design
says nothing about it. Units: SI, as in
    ``results.json``.
    """

    #: The resolved cluster the results were computed on.
    cluster: Cluster
    #: ``results.json`` -> ``workload``: name and sizes of the workload.
    workload: dict[str, Any]
    #: ``results.json`` -> ``topology``: the closed-form topology report.
    topology: dict[str, Any]
    #: ``results.json`` -> ``facility``: power, cooling, floor and cabling.
    facility: dict[str, Any]
    #: ``results.json`` -> ``plans``: the planner's report (None: not planned).
    plans: dict[str, Any] | None = None
    #: ``results.json`` -> ``reviewed_plan``: the plan under review (None: no plan fits).
    reviewed_plan: dict[str, Any] | None = None
    #: ``results.json`` -> ``simulation``: one simulated iteration (None: not simulated).
    simulation: dict[str, Any] | None = None
    #: ``results.json`` -> ``fit``: does the workload need a supernode (None: not computed).
    fit: dict[str, Any] | None = None
    #: ``results.json`` -> ``reliability``: failures, recovery, goodput (None: no plan).
    reliability: dict[str, Any] | None = None
    #: ``results.json`` -> ``scheduling``: the placement replay (None: not run).
    scheduling: dict[str, Any] | None = None
    #: ``results.json`` -> ``artefacts``: the files the review writes (None: none listed).
    artefacts: dict[str, Any] | None = None
    #: ``results.json`` -> ``memory``: the global address space (None: no memory section).
    memory: dict[str, Any] | None = None
