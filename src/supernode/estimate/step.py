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

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from supernode.collectives import Fabric
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
    """Breakdown (seconds per step) and issued communication per group, per plan.

    ``comm_by_dim_s`` holds the seconds of collectives issued per step (before any
    overlap) by each call dimension (tp, cp, pp, dp, dp_expert, ep) and ``dim_tier`` the
    index (into ``tier_names``) of the slowest tier that dimension's group crosses.
    Arrays broadcast over plans; every breakdown entry has the full plan shape.
    """

    breakdown_s: dict[str, Any]
    comm_by_dim_s: dict[str, Any]
    dim_tier: dict[str, Any]
    tier_names: tuple[str, ...]
    compute: MicrobatchCompute

    @property
    def step_time_s(self) -> Any:
        """Sum of the breakdown (seconds)."""
        return sum(self.breakdown_s[k] for k in BREAKDOWN_KEYS)

    @cached_property
    def comm_total_by_tier_s(self) -> dict[str, Any]:
        """Issued communication seconds per step, by the slowest tier each group crosses."""
        shape = np.shape(self.breakdown_s["compute"])
        out = {}
        for index, name in enumerate(self.tier_names):
            total: Any = 0.0
            for dim, seconds in self.comm_by_dim_s.items():
                total = total + np.where(self.dim_tier[dim] == index, seconds, 0.0)
            out[name] = np.broadcast_to(np.asarray(total, dtype=float), shape)
        return out


CallTime = Callable[[CollectiveCall, PlanArrays, Fabric], tuple[Any, Any, np.ndarray]]


def step_arrays(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration,
                overlap: Overlap | None = None, call_time: CallTime = call_time_s
                ) -> StepArrays:
    """Time breakdown of one step for every plan in ``a`` (arrays, seconds).

    Plan fields may be arrays of different broadcastable shapes (a grid): every term is
    computed at its own shape and only the sums reach the full one. ``call_time`` costs
    one collective call over the plans (default :func:`~supernode.estimate.comm.
    call_time_s`, Megatron rank order); a planner passes its own rank mapping here.
    """
    overlap = overlap or Overlap()
    comp = microbatch_compute(w, a, system, cal)
    m = a.microbatches.astype(float)
    per_dim: dict[str, Any] = {}
    dim_tier: dict[str, Any] = {}
    hidden = _dp_hidden_s(comp, a, cal, overlap)
    dp_exposed: Any = 0.0
    pp_one: Any = 0.0
    for call in traffic_per_step(w, a):
        one, per_step, tier = call_time(call, a, system.fabric)
        per_dim[call.dim] = per_dim.get(call.dim, 0.0) + per_step
        dim_tier[call.dim] = tier
        if call.dim.startswith("dp"):
            dp_exposed = dp_exposed + np.maximum(per_step - hidden[call.phase], 0.0)
        if call.dim == "pp":
            pp_one = pp_one + np.where(np.asarray(call.calls_per_step) > 0, one, 0.0)
    core_per_step = 3.0 * m * comp.attention_core_forward_s
    breakdown = {
        "compute": m * comp.total_s,
        "tp_comm": per_dim.get("tp", 0.0) * (1.0 - cal.tp_overlap * np.asarray(overlap.tp)),
        "cp_comm": np.maximum(per_dim.get("cp", 0.0) - core_per_step, 0.0),
        "ep_comm": per_dim.get("ep", 0.0),
        "pp_comm": _pp_exposed(per_dim.get("pp", 0.0), pp_one, a, cal, overlap),
        "pipeline_bubble": (a.pp - 1) / a.vpp * comp.total_s,
        "dp_comm": dp_exposed,
        "optimizer": _optimizer_s(w, a, system, cal),
        "other": cal.step_overhead_s,
    }
    shape = np.broadcast_shapes(np.shape(a.tp), np.shape(a.micro_batch),
                                *(np.shape(v) for v in breakdown.values()))
    breakdown = {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in
                 breakdown.items()}
    names = tuple(t.name for t in system.fabric.tiers)
    return StepArrays(breakdown, per_dim, dim_tier, names, comp)


def _dp_hidden_s(comp: MicrobatchCompute, a: PlanArrays, cal: Calibration,
                 overlap: Overlap) -> dict[str, Any]:
    """DP seconds hidden per call phase: grads under backward, gathers under forward.

    ZeRO-2/3 communicate every micro-batch, so their window spans all micro-batches.
    """
    per_mb = a.zero_stage >= 2
    window_mbs = np.where(per_mb, a.microbatches, 1)
    on = cal.dp_overlap * np.asarray(overlap.dp)
    return {"backward": on * (comp.backward_s * window_mbs),
            "forward": on * (comp.forward_s * window_mbs),
            "step": on * comp.forward_s}


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
