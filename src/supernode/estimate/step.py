"""One optimizer step of a plan, vectorised over candidate plans: the time breakdown.

Per busiest GPU and step (seconds), every part adds up to the step time exactly:

* ``compute``: forward + backward + recomputation of all ``m`` micro-batches on the
  busiest pipeline GPU (the slowest stage sets the pace);
* ``tp_comm``, ``cp_comm``: exposed collectives of those dimensions (TP partly hidden
  under the GEMMs when TP overlap is on, never longer than they last:
  :func:`tp_hidden_s`; the CP ring exchange hidden under the attention core it feeds,
  the all-gather and all-to-all exchanges exposed: :func:`cp_exposed_s`);
* ``ep_comm``: expert all-to-all dispatch and combine plus expert-TP gathers; with the
  all-to-all overlap on (Megatron 1F1B A2A overlap / DeepEP) the passes that have a
  partner micro-batch (:func:`paired_share` of those that set the pace) hide it under
  that partner's compute, as far as the compute lasts (less the TP traffic hidden there
  when TP crosses the same links: one tier's window carries one transfer's time at once,
  :func:`same_tier`);
* ``pp_comm``: the pipeline sends on the schedule's critical path
  (:func:`~supernode.estimate.pipeline_comm.pipeline_critical_s`: the fill, each round
  of the interleaved warm-up and cool-down, the slack-free steady state of plain 1F1B,
  less what a busier stage hides), the other sends overlapped;
* ``pipeline_bubble``: ``(p - 1) / v`` micro-batches of the pipeline's mean stage time
  (Narayanan et al., SC'21, interleaved 1F1B), a pass lasting its compute plus the
  communication exposed inside it (TP and CP left exposed, the expert all-to-all when
  it is not overlapped; with the overlap, the passes without a partner that the bubble
  waits on are those :func:`paired_share` leaves exposed in ``ep_comm``);
* ``dp_comm``: data-parallel communication left after overlap. Dense and expert
  gradients share one stream, so their calls of a phase share one window: with ZeRO-0/1
  the bucketed gradient reduction runs under the last micro-batch's backward and the
  parameter all-gather under the next step's forwards up to each model chunk's first
  one (:func:`~supernode.estimate.dp_comm.param_gather_window_s`; Megatron
  ``--overlap-grad-reduce`` / ``--overlap-param-gather``); ZeRO-2/3 communicate every
  micro-batch layer by layer, each layer's transfer prefetched under the previous layer's
  compute: of a pass's comm ``c`` over its ``n`` layers, the first layer's ``c / n`` is
  exposed and the rest hides under the pass's compute ``w``,
  ``c / n + max(c (n - 1) / n - w, 0)``; on TP's tier the windows lose the TP traffic
  hidden in them;
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
from supernode.estimate.dp_comm import dp_exposed_s
from supernode.estimate.pipeline_comm import pipeline_critical_s
from supernode.estimate.system import SystemModel
from supernode.spec.plan import PlanArrays
from supernode.spec.stack import tp_overlap_on
from supernode.spec.workload import WorkloadSpec
from supernode.workload.cp_exchange import ring_hidden_share, torch_exposed_s
from supernode.workload.memory import params_per_gpu
from supernode.workload.traffic import (
    CollectiveCall,
    cp_forward_runs,
    torch_cp,
    traffic_per_step,
)

BREAKDOWN_KEYS = ("compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "pipeline_bubble",
                  "dp_comm", "optimizer", "other")


@dataclass(frozen=True)
class Overlap:
    """Which overlaps the plans enable (boolean arrays broadcast over plans)."""

    tp: Any = True
    dp: Any = True
    pp: Any = True
    a2a: Any = None  # None: the plans' own moe_a2a_overlap


@dataclass(frozen=True)
class StepArrays:
    """Breakdown (seconds per step) and issued communication per group, per plan.

    ``comm_by_dim_s`` holds the seconds of collectives issued per step (before any
    overlap) by each call dimension (tp, cp, pp, dp, dp_expert, ep, etp) and ``dim_tier`` the
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
    call_time_s`, Megatron-Core rank order); a planner passes its own rank mapping here.
    """
    overlap = overlap or Overlap()
    comp = microbatch_compute(w, a, system, cal)
    m = a.microbatches.astype(float)
    per_dim: dict[str, Any] = {}
    dim_tier: dict[str, Any] = {}
    dp_phase: dict[str, Any] = {"forward": 0.0, "backward": 0.0, "step": 0.0}
    tp_phase: dict[str, Any] = {"forward": 0.0, "backward": 0.0}
    pp_one: Any = 0.0
    # CP seconds by (phase, beside the attention core or not)
    cp_part: dict[tuple[str, bool], Any] = {(p, h): 0.0 for p in ("forward", "backward")
                                            for h in (True, False)}
    for call in traffic_per_step(w, a):
        if not np.any(call.calls_per_step) or not np.any(np.asarray(call.group_size) > 1):
            continue  # made by no plan of the grid (a size-1 group, a stage not used)
        one, per_step, tier = call_time(call, a, system.fabric)
        per_dim[call.dim] = per_dim.get(call.dim, 0.0) + per_step
        dim_tier[call.dim] = tier
        if call.dim.startswith("dp"):
            dp_phase[call.phase] = dp_phase[call.phase] + per_step
        if call.dim == "tp":
            tp_phase[call.phase] = tp_phase[call.phase] + per_step
        if call.dim == "cp":
            key = (call.phase, call.hidden)
            cp_part[key] = cp_part[key] + per_step
        if call.dim == "pp":
            pp_one = pp_one + np.where(np.asarray(call.calls_per_step) > 0, one, 0.0)
    core_per_step = m * (comp.attention_core_forward_s + comp.attention_core_backward_s)
    compute = m * comp.total_s
    expert = per_dim.get("ep", 0.0) + per_dim.get("etp", 0.0)
    tp_hidden = tp_hidden_s(tp_phase, comp, a, cal, tp_overlap_on(overlap.tp, w.software))
    tp_exposed = sum(tp_phase.values()) - sum(tp_hidden.values())
    # a window hides one tier's transfers at a time: TP traffic hidden under the GEMMs
    # occupies them for a DP or EP transfer on the same links (the simulator shares the
    # links the same way); on another tier the two run side by side
    dp_tier = dim_tier.get("dp", dim_tier.get("dp_expert"))
    dp_busy = {ph: same_tier(dp_tier, dim_tier.get("tp")) * tp_hidden[ph] / m
               for ph in tp_hidden}
    dp_exposed, dp_window = dp_exposed_s(dp_phase, comp, a, cal, overlap.dp, dp_busy)
    # windows are disjoint shares of the compute (monotone: a slower GPU never speeds a
    # step): CP hides under the attention core, DP under the rest of its passes, the
    # expert all-to-all under what is left of the paired passes
    ep_busy = same_tier(dim_tier.get("ep"), dim_tier.get("tp")) * sum(tp_hidden.values())
    ep_window = np.maximum(compute - core_per_step - dp_window - ep_busy, 0.0)
    cp_exposed = _cp_exposed(w, a, cp_part, comp, m)
    a2a_on = np.asarray(a.moe_a2a_overlap if overlap.a2a is None else overlap.a2a)
    # a pass of the bubble lasts its compute and the communication exposed in it; with
    # the all-to-all overlap the passes without a partner are already in ep_comm
    in_pass = (tp_exposed + cp_exposed + np.where(a2a_on, 0.0, expert)) / np.maximum(m, 1.0)
    breakdown = {
        "compute": compute,
        "tp_comm": tp_exposed,
        "cp_comm": cp_exposed,
        "ep_comm": _ep_exposed(expert, ep_window, a, cal, overlap),
        "pp_comm": _pp_exposed(per_dim.get("pp", 0.0), pp_one, comp, a, cal, overlap),
        "pipeline_bubble": (a.pp - 1) / a.vpp * (comp.mean_stage_s + in_pass),
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


def cp_exposed_s(ring_s: Any, serial_s: Any, core_s: Any, a: PlanArrays) -> Any:
    """Context-parallel seconds left exposed per step: the exchange on the critical path
    (all-gathers, all-to-alls) and the ring hops beyond the share of the attention core
    they run beside (:func:`~supernode.workload.cp_exchange.ring_hidden_share`; the
    simulator's pass does the same)."""
    return serial_s + np.maximum(ring_s - ring_hidden_share(a) * core_s, 0.0)


def _cp_exposed(w: WorkloadSpec, a: PlanArrays, part: dict[tuple[str, bool], Any],
                comp: MicrobatchCompute, m: Any) -> Any:
    """Exposed CP seconds per step from the issued seconds by (phase, hidden): PyTorch's
    context_parallel per pass (:func:`~supernode.workload.cp_exchange.torch_exposed_s`), else
    :func:`cp_exposed_s`."""
    serial = part[("forward", False)] + part[("backward", False)]
    core_f, core_b = m * comp.attention_core_forward_s, m * comp.attention_core_backward_s
    if torch_cp(w):
        runs = cp_forward_runs(w, a)  # the forward exchange runs again with recomputation
        return torch_exposed_s(part[("forward", True)], part[("backward", True)], serial,
                               runs * core_f, core_b, a)
    ring = part[("forward", True)] + part[("backward", True)]
    return cp_exposed_s(ring, serial, core_f + core_b, a)


def same_tier(tier: Any, other: Any) -> Any:
    """1.0 where two dimensions' collectives cross the same (slowest) fabric tier, 0.0
    where not or where either makes no call (tier indices, arrays over plans)."""
    if tier is None or other is None:
        return 0.0
    return (np.asarray(tier) == np.asarray(other)).astype(float)


def tp_hidden_s(phase_s: dict[str, Any], comp: MicrobatchCompute, a: PlanArrays,
                cal: Calibration, on: Any = True) -> dict[str, Any]:
    """TP collective seconds per step hidden under compute, by phase.

    ``phase_s``: issued TP seconds per step of the forward and of the backward passes
    (recomputation included). With the overlap on, ``tp_overlap`` of a pass's TP traffic
    runs beside its GEMMs and streaming work (the compute outside the attention core) as
    far as that compute lasts: ``min(t c, w)`` per phase (the simulator's pass does the
    same); without, nothing hides. The exposed rest is ``c - hidden``, per phase
    ``(1 - t) c + max(t c - w, 0)``.
    """
    m = np.maximum(a.microbatches, 1).astype(float)
    windows = {"forward": m * (comp.forward_s - comp.attention_core_forward_s),
               "backward": m * (comp.backward_s + comp.recompute_s
                                - comp.attention_core_backward_s)}
    share = cal.tp_overlap * np.asarray(on, dtype=float)
    return {phase: np.minimum(share * issued, np.maximum(windows[phase], 0.0))
            for phase, issued in phase_s.items()}


def paired_share(a: PlanArrays) -> Any:
    """Share of a step's micro-batch passes on the critical path that run beside another
    micro-batch's pass (so can hide its expert all-to-all), ``(m - p) / m``.

    Passes without a partner are the warm-up forwards before a device's first backward
    and the matching cool-down backwards. In Megatron's interleaved schedule the first
    device has the most (``2 (p - 1) + (v - 1) p``), but the step's pace is set along the
    last device's: its ``(v - 1) p`` warm-up chunks plus the ``p`` chunk passes of the
    fill it waits for, ``p v`` of its ``m v`` chunk passes each way (without pipelining,
    ``1`` of ``m``). Exact for equal passes (tests/test_estimate_pipeline.py checks it
    against the schedule's dependency graph).
    """
    m = np.maximum(a.microbatches, 1).astype(float)
    return np.clip((m - np.asarray(a.pp, dtype=float)) / m, 0.0, 1.0)


def _ep_exposed(issued: Any, window: Any, a: PlanArrays, cal: Calibration,
                overlap: Overlap) -> Any:
    """Expert communication left exposed (all of it without the all-to-all overlap):
    the paired passes' share hides under their share of ``window`` (compute seconds)."""
    on = np.asarray(a.moe_a2a_overlap if overlap.a2a is None else overlap.a2a)
    if not on.any():  # nothing paired: all of it exposed (dense models, overlap off)
        return issued
    paired = paired_share(a) * on
    hidden = np.minimum(paired * issued, cal.a2a_overlap * paired * window)
    return issued - hidden


def _pp_exposed(per_step: Any, one: Any, comp: MicrobatchCompute, a: PlanArrays,
                cal: Calibration, overlap: Overlap) -> Any:
    """Pipeline p2p exposed: the sends on the schedule's critical path
    (:func:`pipeline_critical_s`), plus what the overlap fails to hide of the rest."""
    critical = np.minimum(pipeline_critical_s(one, comp, a), per_step)
    steady = np.maximum(per_step - critical, 0.0) * (1.0 - cal.pp_overlap
                                                     * np.asarray(overlap.pp))
    return critical + steady


def _optimizer_s(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration) -> Any:
    first, last = params_per_gpu(w, a, "first"), params_per_gpu(w, a, "last")
    dense = np.maximum(first["dense"], last["dense"])
    expert = np.maximum(first["expert"], last["expert"])
    sharded = a.zero >= 1
    shard_dense = np.where(sharded, (a.dp * a.cp).astype(float), 1.0)
    shard_expert = np.where(sharded, a.edp.astype(float), 1.0)
    return (optimizer_step_s(dense, shard_dense, system, cal)
            + optimizer_step_s(expert, shard_expert, system, cal))
