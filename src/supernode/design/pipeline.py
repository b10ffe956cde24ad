"""The design review pipeline: validate -> topology -> memory -> plan -> simulate ->
reliability -> facility -> monitoring -> scheduling -> artefacts -> rules, each stage
reading the results of the ones before (the report comes after).

:func:`run_design` loads and checks every input first (cluster with its reliability block,
workload, plan, rule pack, Prometheus major), so bad input fails before any model runs;
then each stage calls the project's public entry points
(:func:`~supernode.topology.metrics.topology_report`,
:func:`~supernode.design.memory.memory_results`, :func:`~supernode.planner.plan_job`,
:func:`~supernode.netsim.scenario.simulate_jobs`,
:func:`~supernode.reliability.assess.assess_reliability`,
:func:`~supernode.design.facility.facility_results`, :func:`~supernode.monitor.pack.build_pack`,
:func:`~supernode.scheduler.schedule`, :func:`~supernode.exports.export_files` and
:func:`~supernode.monitor.artefacts.render`, :func:`~supernode.rules.run_rules`). The
:class:`DesignResult` holds the result objects, the texts of the exported files
(``files``) and :meth:`DesignResult.to_dict`, which is ``results.json``: every figure the
report shows, checked against its model (:class:`~supernode.design.results.DesignResults`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.resolve import resolve_cluster
from supernode.design.bom import bill_of_materials, check_unit_prices
from supernode.design.decisions import decision_records
from supernode.design.fixes import review_fixes
from supernode.design.headline import executive_summary
from supernode.design.memory import check_memory_block, memory_results
from supernode.design.operations import Reviewed, run_operations
from supernode.design.plans import (
    best_view,
    confirm_straddling_best,
    given_view,
    simulation_plan,
)
from supernode.design.prices import price_model, server_price, stated_prices
from supernode.design.reliability import DESIGN_DAYS, DESIGN_RUNS
from supernode.design.reproduce import design_reproduce
from supernode.design.results import SCHEMA, check_results
from supernode.design.scheduling import (
    DESIGN_POLICIES,
    DESIGN_SHAPES,
    run_scheduling,
    scheduling_remembered,
)
from supernode.design.serving import run_serving
from supernode.design.simulation import routing_what_if, run_simulation, simulation_results
from supernode.design.summary import cluster_summary, workload_summary
from supernode.errors import InputError
from supernode.forked import in_background
from supernode.monitor.promtool import semantics_for
from supernode.netsim.limits import check_simulated_size
from supernode.planner import build_target, plan_job
from supernode.planner.fit import CONVENTIONAL_DOMAIN, FitInput, workload_fit
from supernode.reliability.assess import check_reliability_block
from supernode.rules import Facts, load_pack, run_rules, summary
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.planfile import fill_dp, plan_document
from supernode.topology.metrics import topology_report
from supernode.workload.presets import load_workload

STAGES = ("validate", "topology", "memory", "plan", "simulate", "reliability", "facility",
          "monitoring", "scheduling", "artefacts", "rules")
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class DesignInput:
    """What to review: cluster and workload (preset or file), optional plan and rule pack."""

    cluster: str | Path
    workload: str | Path
    plan: Path | None = None
    rules: Path | None = None
    simulate: bool = True
    top: int = 5
    seed: int = 0
    global_batch: int | None = None
    example: str | None = None
    reliability_runs: int = DESIGN_RUNS
    reliability_days: float = DESIGN_DAYS
    prometheus_major: int | None = None
    #: processes per plan search (None: as many as pay); 1 also keeps the scheduling
    #: replay in this process
    workers: int | None = None
    #: a serve file: the serving stage (design/serving.py) answers for serving it too
    serve: str | Path | None = None
    #: replay the scheduling trace (False: ``scheduling`` is null, with a note)
    schedule: bool = True


@dataclass
class DesignResult:
    """Result objects of every stage and the JSON-ready dicts the report reads."""

    inputs: DesignInput
    data: dict[str, Any]
    findings: list[Any]
    timings_s: dict[str, float] = field(default_factory=dict)
    #: Texts of the exported and monitoring files by path in the design folder.
    files: dict[str, str] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        """Ids of the error-severity rules that failed."""
        return self.data["verdict"]["errors"]

    def to_dict(self) -> dict[str, Any]:
        """``results.json``: stable keys (docs/design.md), checked against
        :class:`~supernode.design.results.DesignResults` (a stage that drifts from it raises
        pydantic's ``ValidationError``); the dict is returned as built."""
        data = {**self.data, "timings_s": self.timings_s}
        check_results(data)
        return data


def _load(inputs: DesignInput):
    """Every input loaded and checked (InputError with the field path otherwise)."""
    spec = load_cluster_spec(inputs.cluster)
    try:
        cluster = resolve_cluster(spec)
        check_reliability_block(cluster)
        check_memory_block(cluster)
        check_unit_prices(cluster)
        if inputs.simulate:  # refused now, not after the stages before the simulation
            check_simulated_size(cluster.accelerators, "--cluster")
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=str(inputs.cluster)) from None
    workload = load_workload(inputs.workload)
    pack = load_pack(inputs.rules) if inputs.rules is not None else None
    doc = plan_document(inputs.plan) if inputs.plan is not None else None
    return spec, cluster, workload, pack, doc


def _given_plan(doc: dict[str, Any] | None, gpus: int, global_batch: int,
                source: str) -> ParallelPlan | None:
    if doc is None:
        return None
    data = fill_dp(dict(doc), gpus, "the cluster")
    data.setdefault("global_batch_sequences", global_batch)
    return plan_from_data(data, source=source)


def _fit(cluster, workload, global_batch: int, workers: int | None, searched=()
         ) -> tuple[dict | None, str | None]:
    """The planner's workload fit at 8 GPUs and at the supernode's size (or why not), at
    the price model's prices: the cluster's own domain at its GPU-hour price, 8-GPU
    servers of the same chips at that price less the supernode premium."""
    price, premium = server_price(cluster)
    extra = {"supernode_premium": premium}
    try:
        fit = workload_fit(FitInput(workload, cluster.spec, None, global_batch,
                                    tuple(sorted({CONVENTIONAL_DOMAIN, cluster.scale_up.size})),
                                    price_per_gpu_hour=price, workers=workers,
                                    searched=tuple(searched), **extra))
        return fit, None
    except InputError as exc:
        return None, f"workload fit not computed: {exc.message}"


def _results(inputs: DesignInput, cluster, topo, facts: Facts, monitoring: dict[str, Any],
             findings: list, notes: list[str]) -> dict[str, Any]:
    """The ``results.json`` dict (without decisions and timings)."""
    return {
        "schema": SCHEMA,
        "inputs": {"cluster": str(inputs.cluster), "workload": str(inputs.workload),
                   "plan": str(inputs.plan) if inputs.plan else None,
                   "rules": str(inputs.rules) if inputs.rules else "default",
                   "example": inputs.example, "simulate": inputs.simulate,
                   "schedule": inputs.schedule,
                   "seed": inputs.seed, "reliability_runs": inputs.reliability_runs,
                   "reliability_days": inputs.reliability_days},
        "verdict": summary(findings),
        "cluster": cluster_summary(cluster, topo),
        "workload": facts.workload,
        "topology": facts.topology,
        "plans": facts.plans,
        "reviewed_plan": facts.reviewed_plan,
        "simulation": facts.simulation,
        "reliability": facts.reliability,
        "facility": facts.facility,
        "monitoring": monitoring,
        "scheduling": facts.scheduling,
        "artefacts": facts.artefacts,
        "fit": facts.fit,
        "memory": facts.memory,
        "economics": price_model(cluster),
        "findings": [f.to_dict() for f in findings],
        "notes": notes,
    }


class _Clock:
    """Start time of each stage, and the progress callback told of each."""

    def __init__(self, progress: Progress | None) -> None:
        self.starts: dict[str, float] = {}
        self.progress = progress

    def __call__(self, name: str) -> None:
        self.starts[name] = time.perf_counter()
        if self.progress is not None:
            self.progress(name, STAGES.index(name), len(STAGES))

    def timings(self) -> dict[str, float]:
        """Seconds per stage (each until the next began; the last until now)."""
        ends = [self.starts[n] for n in STAGES[1:]] + [time.perf_counter()]
        return {n: end - self.starts[n] for n, end in zip(STAGES, ends, strict=True)}


def run_design(inputs: DesignInput, progress: Progress | None = None) -> DesignResult:
    """Run every stage of the review; InputError for bad input anywhere in the chain.

    The scheduling replay depends on the cluster and the seed alone: unless ``workers``
    is 1 (or it is remembered), it runs in a forked child from here on, beside the plan,
    simulation and reliability stages (:func:`supernode.forked.in_background`); the
    results are the same either way."""
    clock = _Clock(progress)
    clock("validate")
    loaded = _load(inputs)
    with _scheduling_beside(loaded[1], inputs) as scheduling:
        return _review(inputs, loaded, clock, scheduling)


def _simulated(cluster, workload, seed: int, plan, order) -> dict[str, Any]:
    """The report's results of one simulated iteration of ``plan``."""
    return simulation_results(run_simulation(cluster, workload, plan, order, seed))


def _scheduling_beside(cluster, inputs: DesignInput) -> AbstractContextManager[Any]:
    """The scheduling replay started in a child now (None: run it in its stage)."""
    if (not inputs.schedule or inputs.workers == 1
            or scheduling_remembered(cluster, inputs.seed)):
        return nullcontext(None)
    return in_background(partial(run_scheduling, cluster, inputs.seed))


def _review(inputs: DesignInput, loaded: tuple, clock: _Clock, scheduling: Any
            ) -> DesignResult:
    """The stages after validation (``scheduling``: the replay running beside, or None)."""
    spec, cluster, workload, pack, doc = loaded
    semantics, major = semantics_for(inputs.prometheus_major)
    clock("topology")
    topo = topology_report(cluster)
    clock("memory")
    memory = memory_results(cluster)
    clock("plan")
    price = stated_prices(cluster)[0]
    target, _ = build_target(spec, workload, None, inputs.global_batch,
                             price_per_gpu_hour=price)
    given = _given_plan(doc, target.gpus, target.global_batch_sequences, str(inputs.plan))
    if given is not None and given.precision != target.precision:
        # a given plan's precision is the job's: its MFU against that precision's peak
        # and the alternatives searched at it, as ``estimate --plan`` costs it
        target, _ = build_target(spec, workload, None, inputs.global_batch, given.precision,
                                 price_per_gpu_hour=price)
    report = plan_job(target, top=inputs.top, reference=given, workers=inputs.workers)
    view = given_view(target, given, report) if given is not None else best_view(report)
    fit, fit_note = _fit(cluster, workload, target.global_batch_sequences, inputs.workers,
                         (report,))
    serving = (run_serving(inputs.serve, inputs.workload, cluster, inputs.cluster)
               if inputs.serve is not None else None)
    plan, order = simulation_plan(view, report, given) if view is not None else (None, ())
    clock("simulate")
    sim = what_if = None
    if inputs.simulate and plan is not None:
        sim = _simulated(cluster, workload, inputs.seed, plan, order)
        if given is None:  # a straddling best plan stays first only if the run confirms it
            view, plan, order, sim = confirm_straddling_best(
                report, sim, partial(_simulated, cluster, workload, inputs.seed))
        what_if = routing_what_if(cluster, workload, plan, order, inputs.seed, sim)
        sim["routing_what_if"] = what_if
    ops = run_operations(inputs, cluster, topo, Reviewed(workload, target, view, plan, sim),
                      (semantics, major), clock, scheduling)
    clock("rules")
    facts = Facts(cluster=cluster, workload=workload_summary(workload),
                  topology=topo.to_dict(), facility=ops["fac"], plans=report.to_dict(),
                  reviewed_plan=view, simulation=sim, fit=fit, reliability=ops["rel"],
                  scheduling=ops["scheduling"], artefacts=ops["artefacts"], memory=memory)
    findings = run_rules(facts, pack)
    notes = [n for n in (fit_note, None if ops["rel"] else "reliability not assessed: no plan "
                                                          "fits", ops["sched_note"]) if n]
    data = _results(inputs, cluster, topo, facts, ops["monitoring"], findings, notes)
    review_fixes(facts, findings, data["findings"], data["verdict"]["failed_by_severity"])
    data["inputs"]["prometheus_major"] = major
    data["bom"] = bill_of_materials(cluster, data)
    data["decisions"] = decision_records(data, cluster, ops["alt"])
    data["summary"] = executive_summary(data, what_if)
    if serving is not None:
        data["serving"] = serving
    data["reproduce"] = design_reproduce(data, plan, order, list(DESIGN_POLICIES),
                                         DESIGN_SHAPES, inputs.global_batch)
    return DesignResult(inputs, data, findings, clock.timings(), ops["files"])
