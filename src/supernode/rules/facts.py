"""What the rules judge: a design's results (the very dicts the report shows) and the
resolved cluster, for fixes whose effect is predicted by re-running a closed-form model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.spec.resolved import Cluster


@dataclass(frozen=True)
class Facts:
    """Results of one design (JSON-ready dicts) and the cluster they were computed on.

    ``topology``: :meth:`TopologyReport.to_dict`; ``plans``: :meth:`PlanReport.to_dict`;
    ``reviewed``: the plan under review (:mod:`supernode.design.plans`); ``simulation``:
    :meth:`SimResult.to_dict` or None when not simulated; ``facility``:
    :meth:`FacilityReport.to_dict`; ``fit``: the workload-fit answer or None;
    ``reliability``: :meth:`ReliabilityResult.to_dict` of the reviewed plan, or None when
    not assessed (no plan fits); ``scheduling``: the review's placement replay
    (:func:`supernode.design.scheduling.run_scheduling`), or None when not run;
    ``artefacts``: the listing of the exported files the review writes
    (:func:`supernode.design.artefacts.design_artefacts`), or None.
    """

    cluster: Cluster
    workload: dict[str, Any]
    topology: dict[str, Any]
    plans: dict[str, Any] | None
    reviewed: dict[str, Any] | None
    simulation: dict[str, Any] | None
    facility: dict[str, Any]
    fit: dict[str, Any] | None = None
    reliability: dict[str, Any] | None = None
    scheduling: dict[str, Any] | None = None
    artefacts: dict[str, Any] | None = None
