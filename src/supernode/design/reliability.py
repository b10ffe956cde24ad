"""The reliability stage of the review: failures, recovery and goodput of the reviewed plan.

:func:`run_reliability` calls :func:`~supernode.reliability.assess.assess_reliability` on the
plan under review with a seeded Monte Carlo of :data:`DESIGN_RUNS` runs of
:data:`DESIGN_DAYS` days (small enough that the flagship review stays within its 30 s;
``supernode reliability`` runs more), and once more with the other recovery policy
(restart from checkpoint, or isolate and shrink) without what-ifs, for the decision
record's options. The first result's ``to_dict()`` is ``results.json`` -> ``reliability``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from supernode.reliability.assess import ReliabilityOptions, assess_reliability
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


def run_reliability(cluster: Cluster, workload: WorkloadSpec, plan: ParallelPlan, seed: int,
                    days: float = DESIGN_DAYS, runs: int = DESIGN_RUNS
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The reliability result of ``plan`` (its ``to_dict()``) and the other recovery
    policy's :func:`policy_summary`."""
    options = ReliabilityOptions(days=days, runs=runs, seed=seed)
    main = finite(assess_reliability(cluster, workload, plan, options).to_dict())
    other = "shrink" if main["recovery"]["policy"] == "restart" else "restart"
    alt = assess_reliability(cluster, workload, plan,
                             replace(options, recovery=other, what_if=False)).to_dict()
    return main, finite(policy_summary(alt))
