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

Nothing here mutates a cluster: searches return plans (STYLE §2).
"""

from supernode.planner.build import build_target, default_global_batch
from supernode.planner.fit import FitInput, workload_fit
from supernode.planner.mapping import MEGATRON_ORDER, Layout
from supernode.planner.report import PlanReport, plan_job
from supernode.planner.search import OBJECTIVES, PlanTarget, search_layouts
from supernode.planner.sizing import SizingInput, size, template_for
from supernode.planner.space import SearchSpace

__all__ = [
    "MEGATRON_ORDER",
    "OBJECTIVES",
    "FitInput",
    "Layout",
    "PlanReport",
    "PlanTarget",
    "SearchSpace",
    "SizingInput",
    "build_target",
    "default_global_batch",
    "plan_job",
    "search_layouts",
    "size",
    "template_for",
    "workload_fit",
]
