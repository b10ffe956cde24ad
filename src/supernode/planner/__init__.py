"""The planner: the best ways to run a workload on a cluster, and what cluster to buy.

* :func:`plan_job` searches every parallel layout (tp, pp, dp, cp, ep and the rank
  order that maps them onto the fabric's tiers) and every knob (micro-batch,
  recomputation, sequence parallelism, interleaving, ZeRO / distributed optimizer,
  overlap switches) as numpy arrays, ranks the plans that are legal and fit, and
  explains the winner (:mod:`supernode.planner.report`).
* :func:`build_target` turns a cluster (grown to the job's GPUs by whole units) and a
  workload into a :class:`PlanTarget`.
* :func:`size` derives an architecture from a requirement (seed 003 §3.1);
  :func:`workload_fit` asks whether a supernode pays off (seed 001 §1.3, §6); the sweep
  modules plan many variants on a process pool or on Ray.

Nothing here mutates a cluster: searches return plans (inputs split by owner,
docs/architecture.md).
"""

from supernode.lazy import lazy_names

#: Where each public name lives; imported when first asked for, so that a command needing
#: one module (``plan``: the search) does not import the sizing and fit modules and theirs
#: (the reliability models).
_HOMES = {
    "build_target": "build", "default_global_batch": "build",
    "FitInput": "fit", "workload_fit": "fit",
    "MEGATRON_ORDER": "mapping", "Layout": "mapping",
    "PlanReport": "report", "plan_job": "report",
    "OBJECTIVES": "search", "PlanTarget": "search", "search_layouts": "search",
    "SizingInput": "sizing", "size": "sizing", "template_for": "sizing",
    "SearchSpace": "space",
}
__getattr__ = lazy_names(__name__, globals(), _HOMES)

__all__ = list(_HOMES)
