"""One optimizer step of a plan, vectorised over candidate plans: the time breakdown.

Per busiest GPU and step (seconds), every part adds up to the step time exactly:

* ``compute``: forward + backward + recomputation of all ``m`` micro-batches;
* ``tp_comm``, ``cp_comm``, ``ep_comm``: exposed collectives of those dimensions (TP
  partly hidden under GEMMs when TP overlap is on; CP ring exchange hidden under the
  attention core it feeds; EP all-to-all exposed);
* ``pp_comm``: pipeline sends exposed in fill and drain (steady-state sends overlap);
* ``pipeline_bubble``: ``(p - 1) / v`` micro-batches of idle time (Narayanan et al.,
  SC'21, interleaved 1F1B);
* ``dp_comm``: gradient reduction and parameter gathering left after the overlap with
  the last micro-batch's backward / first forward (Megatron ``--overlap-grad-reduce``,
  ``--overlap-param-gather``);
* ``optimizer``: the Adam update at HBM speed;
* ``other``: a fixed per-step cost (gradient-norm and loss reductions, optimizer kernel
  launches over every parameter tensor, data loading and logging), calibrated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.estimate.calibration import Calibration
from supernode.estimate.comm import call_time_s
from supernode.estimate.compute import MicrobatchCompute, microbatch_compute, optimizer_step_s
from supernode.estimate.system import SystemModel
from supernode.spec.plan import PlanArrays
from supernode.spec.workload import WorkloadSpec
from supernode.workload.memory import params_per_gpu
from supernode.workload.traffic import CollectiveCall, traffic_per_step

BREAKDOWN_KEYS = ("compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "pipeline_bubble",
                  "dp_comm", "optimizer", "other")


@dataclass(frozen=True)
class Overlap:
    """Which overlaps the plans enable (boolean arrays broadcast over plans)."""

    tp: Any = True
    dp: Any = True
    pp: Any = True


@dataclass(frozen=True)
class StepArrays:
    """Breakdown (seconds per step) and communication totals per tier, per plan."""

    breakdown_s: dict[str, Any]
    comm_total_by_tier_s: dict[str, Any]
    compute: MicrobatchCompute

    @property
    def step_time_s(self) -> Any:
        """Sum of the breakdown (seconds)."""
        return sum(self.breakdown_s[k] for k in BREAKDOWN_KEYS)


def step_arrays(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration,
                overlap: Overlap | None = None) -> StepArrays:
    """Time breakdown of one step for every plan in ``a`` (arrays, seconds)."""
    overlap = overlap or Overlap()
    comp = microbatch_compute(w, a, system, cal)
    m = a.microbatches.astype(float)
    shape = np.broadcast(a.tp, a.micro_batch, comp.forward_s).shape
    per_dim = {d: np.zeros(shape) for d in ("tp", "cp", "ep", "pp", "dp")}
    by_tier = {t.name: np.zeros(shape) for t in system.fabric.tiers}
    dp_exposed = np.zeros(shape)
    pp_one = np.zeros(shape)
    for call in traffic_per_step(w, a):
        one, per_step, tier = call_time_s(call, a, system.fabric)
        per_step = np.broadcast_to(per_step, shape)
        tier = np.broadcast_to(tier, shape)
        for index, t in enumerate(system.fabric.tiers):
            by_tier[t.name] = by_tier[t.name] + np.where(tier == index, per_step, 0.0)
        dim = "dp" if call.dim.startswith("dp") else call.dim
        per_dim[dim] = per_dim[dim] + per_step
        if dim == "dp":
            dp_exposed = dp_exposed + _dp_exposed(call, per_step, comp, a, cal, overlap)
        if dim == "pp":
            pp_one = pp_one + np.broadcast_to(one, shape)
    core_per_step = 3.0 * m * comp.attention_core_forward_s
    bubble = (a.pp - 1) / a.vpp * comp.total_s
    breakdown = {
        "compute": m * comp.total_s,
        "tp_comm": per_dim["tp"] * (1.0 - cal.tp_overlap * np.asarray(overlap.tp)),
        "cp_comm": np.maximum(per_dim["cp"] - core_per_step, 0.0),
        "ep_comm": per_dim["ep"],
        "pp_comm": _pp_exposed(per_dim["pp"], pp_one, a, cal, overlap),
        "pipeline_bubble": bubble,
        "dp_comm": dp_exposed,
        "optimizer": _optimizer_s(w, a, system, cal),
        "other": np.full(shape, cal.step_overhead_s),
    }
    breakdown = {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in
                 breakdown.items()}
    return StepArrays(breakdown, by_tier, comp)


def _dp_exposed(call: CollectiveCall, per_step: Any, comp: MicrobatchCompute, a: PlanArrays,
                cal: Calibration, overlap: Overlap) -> Any:
    """DP time not hidden: grads under backward, gathers under forward (seconds)."""
    per_mb = a.zero_stage >= 2  # ZeRO-2/3 communicate every micro-batch
    window_mbs = np.where(per_mb, a.microbatches, 1)
    if call.phase == "backward":
        window = comp.backward_s * window_mbs
    else:
        window = comp.forward_s * np.where(call.phase == "forward", window_mbs, 1)
    hidden = cal.dp_overlap * window * np.asarray(overlap.dp)
    return np.maximum(per_step - hidden, 0.0)


def _pp_exposed(per_step: Any, one: Any, a: PlanArrays, cal: Calibration,
                overlap: Overlap) -> Any:
    """Pipeline p2p exposed: fill and drain hops, plus what steady state fails to hide."""
    fill = np.where(a.pp > 1, (a.pp - 1) * one, 0.0)
    steady = np.maximum(per_step - fill, 0.0) * (1.0 - cal.pp_overlap * np.asarray(overlap.pp))
    return fill + steady


def _optimizer_s(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration) -> Any:
    first, last = params_per_gpu(w, a, "first"), params_per_gpu(w, a, "last")
    dense = np.maximum(first["dense"], last["dense"])
    expert = np.maximum(first["expert"], last["expert"])
    sharded = (a.zero_stage >= 1) | a.distributed_optimizer
    dp_group = (a.dp * a.cp).astype(float)
    shard_dense = np.where(sharded, dp_group, 1.0)
    shard_expert = np.where(sharded, dp_group / a.ep, 1.0)
    return (optimizer_step_s(dense, shard_dense, system, cal)
            + optimizer_step_s(expert, shard_expert, system, cal))
