"""The public estimate: one plan (unknown knobs chosen as a tuned run would) -> a result.

Knobs a plan leaves ``null`` (micro-batch, recompute, sequence parallelism, interleaving,
ZeRO stage, pipeline layout, expert all-to-all overlap; TP/DP/PP overlaps default on) are
searched: every combination is evaluated at once with the vectorised model
(:func:`supernode.estimate.step.step_arrays`), illegal ones masked, and the fastest plan
that fits in memory wins. If none fits, the fastest of those needing at most
``FALLBACK_MEMORY_SLACK`` more than the least memory-hungry one is reported, marked as not
fitting (so interleaving and the other speed knobs are still chosen). What was chosen is
part of the result. A plan's ``rank_order`` lays its groups out as given (default
Megatron-Core's ``tp-cp-ep-dp-pp``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from supernode.collectives import Fabric
from supernode.errors import InputError
from supernode.estimate.calibration import Calibration, default_calibration
from supernode.estimate.comm import call_time_s, group_fabric
from supernode.estimate.energy import step_power
from supernode.estimate.interval import interval_fields
from supernode.estimate.layout import FactorCallTime, group_factors
from supernode.estimate.step import BREAKDOWN_KEYS, CallTime, Overlap, step_arrays
from supernode.estimate.system import SystemModel
from supernode.spec.plan import (
    MEGATRON_ORDER,
    PP_LAYOUT_CODES,
    ParallelPlan,
    PlanArrays,
    check_plan,
    plan_legal_mask,
)
from supernode.spec.plan_arrays import CP_COMM_CODES, DEFAULT_CP_COMM_TYPE
from supernode.spec.recompute import recompute_choices, recompute_label, recompute_mask
from supernode.spec.workload import WorkloadSpec
from supernode.workload.activations import full_recompute_share
from supernode.workload.flops import EXECUTED, hardware_flops_per_step, model_flops_per_step
from supernode.workload.memory import memory_bytes_per_gpu

#: Seed 000 §5.2 / seed 001 §1.1: above this communication share efficiency collapses.
COMM_SHARE_THRESHOLD = 0.20
#: What ``comm_share_by_tier`` measures, and what the threshold is judged on, per tier.
COMM_SHARE_DEFINITION = ("per tier: the tier's issued (pre-overlap) communication time over "
                         "compute plus all issued communication, the step with nothing "
                         "overlapped (seed 000 §5.2); over the threshold when any one tier is")
MICRO_BATCH_CHOICES = (1, 2, 4, 8)
MAX_VPP = 16
#: When no candidate fits, choose the fastest within this share of the least memory.
FALLBACK_MEMORY_SLACK = 0.10
_LAYOUT_NAMES = {v: k for k, v in PP_LAYOUT_CODES.items()}


@dataclass(frozen=True)
class Estimate:
    """Step time, throughput, MFU and memory of one resolved plan (SI units).

    ``mfu`` and ``hfu`` count the FLOPs the kernels execute (the causal half of the
    attention square, windows on windowed layers; HFU adds recomputation), so they never
    exceed 1. ``mfu_published_convention`` counts the full ``s x s`` attention square as
    Megatron-LM (``72 B s l h^2 ...``) and PaLM (``6 N + 12 l h s``) do, the figure to
    compare with published MFU; it reads higher for the same run.
    """

    step_time_s: float
    tokens_per_s: float
    mfu: float
    hfu: float
    mfu_published_convention: float
    breakdown_s: dict[str, float]
    memory_per_gpu_bytes: dict[str, float]
    memory_capacity_bytes: float
    memory_usable_bytes: float
    fits_in_memory: bool
    comm_share_by_tier: dict[str, float]
    chosen: dict[str, Any]
    plan: dict[str, Any]
    gpus: int
    notes: list[str] = field(default_factory=list)
    stack: dict[str, Any] = field(default_factory=dict)
    power: dict[str, Any] = field(default_factory=dict)

    @property
    def energy_per_token_j(self) -> float:
        """GPU board energy per token (J) at the system's power cap (``power``)."""
        return float(self.power.get("energy_per_token_j", 0.0))

    @property
    def comm_share_over_threshold(self) -> bool:
        """True when one tier's communication share of the step exceeds the seeds' 20 %
        (:data:`COMM_SHARE_DEFINITION`, seed 000 §5.2): judged per tier, as the docstring
        always said (it summed the tiers' issued time before)."""
        return any(share > COMM_SHARE_THRESHOLD for share in self.comm_share_by_tier.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with stable keys."""
        return {
            "step_time_s": self.step_time_s,
            "tokens_per_s": self.tokens_per_s,
            "mfu": self.mfu,
            **interval_fields(self.step_time_s, self.tokens_per_s, self.mfu),
            "hfu": self.hfu,
            "mfu_published_convention": self.mfu_published_convention,
            "breakdown_s": self.breakdown_s,
            "memory_per_gpu_bytes": self.memory_per_gpu_bytes,
            "memory_capacity_bytes": self.memory_capacity_bytes,
            "memory_usable_bytes": self.memory_usable_bytes,
            "fits_in_memory": self.fits_in_memory,
            "comm_share_by_tier": self.comm_share_by_tier,
            "comm_share_threshold": COMM_SHARE_THRESHOLD,
            "comm_share_over_threshold": self.comm_share_over_threshold,
            "comm_share_definition": COMM_SHARE_DEFINITION,
            "chosen": self.chosen,
            "plan": self.plan,
            "gpus": self.gpus,
            "energy_per_token_j": self.energy_per_token_j,
            "power": self.power,
            "notes": self.notes,
            "stack": self.stack,
        }


def candidate_columns(w: WorkloadSpec, plan: ParallelPlan) -> dict[str, np.ndarray]:
    """Every combination of the plan's unresolved knobs, as plan columns (arrays)."""
    per_dp = plan.global_batch_sequences // plan.dp
    mbs = [plan.micro_batch] if plan.micro_batch else \
        [b for b in MICRO_BATCH_CHOICES if per_dp % b == 0] or [1]
    recs = ([plan.recompute_mask] if plan.recompute_mask is not None
            else list(recompute_choices(w.moe is not None, w.mla is not None)))
    sps = [plan.sequence_parallel] if plan.sequence_parallel is not None else [plan.tp > 1]
    if plan.vpp is not None:
        vpps = [plan.vpp]
    elif plan.pp == 1:
        vpps = [1]
    else:
        # uneven splits are legal (the busiest GPU then holds vpp * ceil(l / (pp vpp))); the
        # embedding and the loss may fill a slot each (the legality mask says where)
        vpps = [v for v in range(1, MAX_VPP + 1) if plan.pp * v <= w.layers + 2] or [1]
    moe_ep = w.moe is not None and plan.ep > 1
    a2a = [plan.moe_a2a_overlap] if plan.moe_a2a_overlap is not None else \
        ([False, True] if moe_ep else [False])
    layouts = [plan.pp_layout] if plan.pp_layout is not None else \
        (list(PP_LAYOUT_CODES) if plan.pp > 1 else ["uniform"])
    combos = list(itertools.product(mbs, recs, sps, vpps, plan.zero_choices(), a2a, layouts))
    columns: dict[str, Any] = {
        "micro_batch": [c[0] for c in combos],
        "recompute": [recompute_mask(cast(str | int, c[1])) for c in combos],
        "sequence_parallel": [bool(c[2]) for c in combos],
        "vpp": [c[3] for c in combos],
        "zero_stage": [c[4] for c in combos],
        "moe_a2a_overlap": [bool(c[5]) for c in combos],
        "pp_layout": [PP_LAYOUT_CODES[c[6]] for c in combos],
    }
    return {k: np.asarray(v) for k, v in columns.items()}


def interleave_ok(a: PlanArrays) -> np.ndarray:
    """Megatron's interleaved schedule needs micro-batches divisible by pp."""
    ok: np.ndarray = (a.vpp == 1) | (a.microbatches % a.pp == 0)
    return ok


def plan_call_time(plan: ParallelPlan, fabric: Fabric) -> CallTime:
    """The collective cost hook for a plan's rank order (Megatron-Core's: the default)."""
    if plan.order == MEGATRON_ORDER:
        return call_time_s
    factors = group_factors(plan.tp, plan.cp, plan.dp, plan.pp, plan.ep, plan.etp,
                            plan.order)
    if factors is None:
        raise InputError("plan.rank_order", f"ep * etp ({plan.ep} * {plan.etp or plan.tp}) "
                                            f"cannot be carved from the stage's ranks in "
                                            f"order {plan.rank_order}")
    return FactorCallTime([factors], fabric, ndim=0)


def estimate_plan(w: WorkloadSpec, plan: ParallelPlan, system: SystemModel,
                  cal: Calibration | None = None) -> Estimate:
    """Estimate one plan on one system, choosing its unresolved knobs (see module doc)."""
    cal = cal or default_calibration()
    check_plan(w, plan, gpus=system.gpus)
    cols = candidate_columns(w, plan)
    a = PlanArrays.from_columns(
        precision=plan.precision, tp=plan.tp, pp=plan.pp, dp=plan.dp, cp=plan.cp, ep=plan.ep,
        etp=plan.etp or plan.tp, global_batch_sequences=plan.global_batch_sequences,
        recompute_layers=plan.recompute_num_layers or 0,
        distributed_optimizer=bool(plan.distributed_optimizer),
        flash_attention=plan.flash_attention, grad_fp32=bool(plan.grad_reduce_in_fp32),
        cp_comm=CP_COMM_CODES[plan.cp_comm_type or DEFAULT_CP_COMM_TYPE], **cols)
    overlap = Overlap(tp=_on(plan.overlap_tp_comm), dp=_on(plan.overlap_dp_comm),
                      pp=_on(plan.overlap_pp_comm))
    steps = step_arrays(w, a, system, cal, overlap, plan_call_time(plan, system.fabric))
    memory = memory_bytes_per_gpu(w, a)
    legal = interleave_ok(a) & plan_legal_mask(w, a, system.gpus)
    time = np.where(legal, steps.step_time_s, np.inf)
    fits = memory["total"] <= system.usable_memory_bytes
    if (fits & legal).any():
        best = int(np.argmin(np.where(fits, time, np.inf)))
    else:
        least = float(np.min(np.where(legal, memory["total"], np.inf)))
        near = legal & (memory["total"] <= least * (1.0 + FALLBACK_MEMORY_SLACK))
        best = int(np.argmin(np.where(near, time, np.inf)))
    return _result(w, plan, system, a, steps, memory, best, bool(fits[best] & legal[best]))


def _on(flag: bool | None) -> bool:
    return True if flag is None else flag


def _result(w: WorkloadSpec, plan: ParallelPlan, system: SystemModel, a: PlanArrays,
            steps: Any, memory: dict[str, Any], i: int, fits: bool) -> Estimate:
    step = float(steps.step_time_s[i])
    breakdown = {k: float(steps.breakdown_s[k][i]) for k in BREAKDOWN_KEYS}
    recompute = recompute_label(int(a.recompute[i]))
    gb = plan.global_batch_sequences
    model = float(model_flops_per_step(w, gb, causal_attention_factor=EXECUTED))
    hardware = float(hardware_flops_per_step(w, gb, recompute=int(a.recompute[i]),
                                             causal_attention_factor=EXECUTED,
                                             full_share=full_recompute_share(w, a)[i]))
    published = float(model_flops_per_step(w, gb, causal_attention_factor=1.0))
    peak_total = step * system.gpus * system.peak_flops
    comm_total = sum(float(v[i]) for v in steps.comm_total_by_tier_s.values())
    denominator = breakdown["compute"] + comm_total
    shares = {t: float(v[i]) / denominator for t, v in steps.comm_total_by_tier_s.items()}
    chosen = {"micro_batch": int(a.micro_batch[i]), "recompute": recompute,
              "sequence_parallel": bool(a.sequence_parallel[i]), "vpp": int(a.vpp[i]),
              "zero_stage": int(a.zero_stage[i]),
              "pp_layout": _LAYOUT_NAMES[int(a.pp_layout[i])]}
    if w.moe is not None and plan.ep > 1:
        chosen["moe_a2a_overlap"] = bool(a.moe_a2a_overlap[i])
    if plan.cp > 1 and plan.cp_comm_type is None:  # null: Megatron-Core's default
        chosen["cp_comm_type"] = DEFAULT_CP_COMM_TYPE
    notes = list(system.notes) + ([] if fits else [
        f"does not fit: needs {memory['total'][i] / 1e9:.1f} GB per GPU, "
        f"{system.usable_memory_bytes / 1e9:.1f} GB available"])
    return Estimate(
        step_time_s=step,
        tokens_per_s=gb * w.seq_len / step,
        mfu=model / peak_total,
        hfu=hardware / peak_total,
        mfu_published_convention=published / peak_total,
        breakdown_s=breakdown,
        memory_per_gpu_bytes={k: float(v[i]) for k, v in memory.items() if k != "peak_stage"},
        memory_capacity_bytes=system.memory_bytes,
        memory_usable_bytes=system.usable_memory_bytes,
        fits_in_memory=fits,
        comm_share_by_tier=shares,
        chosen=chosen,
        plan=plan.with_chosen(chosen).model_dump(),
        gpus=system.gpus,
        notes=notes,
        stack=stack_fields(w, a.etp.ravel()[0] if np.ndim(a.etp) else a.etp, plan.ep,
                           system.fabric),
        power=step_power(system, breakdown, gb * w.seq_len),
    )


def stack_fields(w: WorkloadSpec, etp: Any, ep: int, fabric: Fabric) -> dict[str, Any]:
    """The software stack a result assumed (``--json`` ``stack``): the framework, each of
    its choices, which of them the workload set, and the source of the defaults. The MoE
    dispatcher is the one the plan's EP group gets (null for a dense model or ``ep = 1``)."""
    st = w.software
    dispatcher = None
    if w.moe is not None and ep > 1:
        crosses = len(group_fabric(fabric, int(etp), int(ep)).tiers) > 1
        dispatcher = st.moe_dispatcher or ("deepep" if crosses else "alltoall")
    return {**st.to_dict(), "moe_dispatcher": dispatcher}


def describe_stack(stack: dict[str, Any]) -> str:
    """One line of a result's :func:`stack_fields`: the framework and its choices, and
    which of them the workload set (the rest are the framework's defaults)."""
    parts = [f"elementwise={stack['elementwise']}",
             f"tp_comm_overlap={'on' if stack['tp_comm_overlap'] else 'off'}",
             f"attention={stack['attention_kernel']}",
             f"cross_entropy={stack['cross_entropy']}"]
    if stack.get("moe_dispatcher"):
        parts.append(f"moe_dispatcher={stack['moe_dispatcher']}")
    set_here = f"; set: {', '.join(stack['overridden'])}" if stack["overridden"] else ""
    return f"{stack['framework']} ({', '.join(parts)}{set_here})"
