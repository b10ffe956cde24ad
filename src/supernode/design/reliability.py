"""The reliability stage of the review: failures, recovery and goodput of the reviewed plan.

:func:`run_reliability` assesses the plan under review
(:func:`~supernode.reliability.assess.assess_then_what_ifs`) with a seeded Monte Carlo of
:data:`DESIGN_RUNS` runs of :data:`DESIGN_DAYS` days (small enough that the flagship review
stays within its 30 s; ``supernode reliability`` runs more) under each recovery policy
(restart from checkpoint, or isolate and shrink) once, for the decision record's options,
and the what-ifs of the chosen one only. The chosen result's ``to_dict()`` is
``results.json`` -> ``reliability``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from supernode.cluster.cooling import CoolingTopology
from supernode.reliability.assess import ReliabilityOptions, assess_then_what_ifs
from supernode.spec.plan import ParallelPlan
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec

#: Monte Carlo of the design review: runs of this many days each (seeded by ``--seed``).
DESIGN_DAYS = 30.0
DESIGN_RUNS = 500


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (an infinite MTBF when nothing restarts the
    job) replaced by None, so that ``results.json`` stays strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def policy_summary(data: dict[str, Any]) -> dict[str, Any]:
    """The figures of one recovery policy a decision record compares (SI units)."""
    rec, good = data["recovery"], data["goodput"]
    mc = good["monte_carlo"]["goodput"]
    return {"policy": rec["policy"], "rto_s": rec["rto_s"],
            "recovery_s": rec["paths_s"]["shrink" if rec["policy"] == "shrink"
                                         else "restart_hardware"],
            "analytic_goodput": good["analytic"], "monte_carlo_goodput": mc["mean"],
            "standard_error": mc["standard_error"],
            "interval_s": data["checkpoint"]["chosen_interval_s"]}


def stated_policy(cluster: Cluster) -> str | None:
    """The recovery policy the cluster file states (``reliability.recovery``), or None."""
    spec = cluster.spec.reliability
    return spec.recovery if spec is not None and "recovery" in spec.model_fields_set else None


def run_reliability(cluster: Cluster, workload: WorkloadSpec, plan: ParallelPlan, seed: int,
                    days: float = DESIGN_DAYS, runs: int = DESIGN_RUNS,
                    cooling: CoolingTopology | None = None
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reliability result of ``plan`` (its ``to_dict()``) under the review's one
    recovery policy, and the other policy's :func:`policy_summary`.

    The policy: the cluster file's ``reliability.recovery`` when it states one, else the
    one of restart and shrink with the higher Monte Carlo goodput (same seed, so the
    same draws). The result carries the choice under ``recovery_decision`` (policy, why,
    the other's figures): the decision record, the reliability section, the verdict
    and ``results.json`` all read this one. ``cooling``: the facility's cooling topology
    (:func:`supernode.facility.cluster_cooling`)."""
    options = ReliabilityOptions(days=days, runs=runs, seed=seed, cooling=cooling)
    stated = stated_policy(cluster)
    policy = stated or (cluster.spec.reliability.recovery if cluster.spec.reliability
                        else "restart")
    other = "shrink" if policy == "restart" else "restart"
    # each policy assessed once; the what-ifs (same scenario, same Monte Carlo rows) of
    # the chosen one only
    assessed = {p: assess_then_what_ifs(cluster, workload, plan, replace(options, recovery=p))
                for p in (policy, other)}
    mine, alt = (finite(policy_summary(assessed[p][0].to_dict())) for p in (policy, other))
    if stated is None and alt["monte_carlo_goodput"] > mine["monte_carlo_goodput"]:
        policy, mine, alt = other, alt, mine
    result, what_ifs = assessed[policy]
    result.what_if = what_ifs()
    main = finite(result.to_dict())
    chosen = main["recovery"]["policy"]
    why = (f"stated by the cluster file (reliability.recovery: {stated})" if stated else
           f"higher Monte Carlo goodput than {alt['policy']} on the same draws "
           f"({mine['monte_carlo_goodput']:.4f} vs {alt['monte_carlo_goodput']:.4f})"
           if mine["monte_carlo_goodput"] > alt["monte_carlo_goodput"] else
           f"the default (restart); {alt['policy']} is no better on the same draws")
    main["recovery_decision"] = {"policy": chosen, "why": why, "stated": stated is not None,
                                 "alternative": alt}
    return main, alt
