"""One plan in full: breakdown, memory, where each group runs, the comm-compute table row.

The plan is re-evaluated on its own with the very same functions the search used
(a one-point grid through :func:`~supernode.planner.evaluate.score_grid`'s pieces), so
the numbers agree with the ranking exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from supernode.estimate.calibration import Calibration, default_calibration
from supernode.estimate.interval import interval_fields
from supernode.estimate.model import COMM_SHARE_THRESHOLD
from supernode.estimate.step import BREAKDOWN_KEYS, Overlap, step_arrays
from supernode.planner.economics import cost_per_million_tokens, energy_per_step_j
from supernode.planner.evaluate import LayoutCallTime, grid_plans
from supernode.planner.mapping import Layout, group_factors, group_size, rail_aligned
from supernode.planner.mapping import sub_fabric as _sub_fabric
from supernode.planner.search import PlanTarget, tp_crosses_domain
from supernode.planner.space import KnobAxes
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.plan_arrays import CP_COMM_CODES, DEFAULT_CP_COMM_TYPE
from supernode.spec.recompute import recompute_fields
from supernode.workload.flops import EXECUTED, hardware_flops_per_step, model_flops_per_step
from supernode.workload.memory import memory_bytes_per_gpu
from supernode.workload.traffic import bytes_per_step_by_dim, traffic_per_step

#: Dimensions reported in a placement, and the call dimension that carries each.
PLACED_DIMS = {"tp": "tp", "cp": "cp", "pp": "pp", "dp": "dp", "ep": "ep",
               "etp": "etp", "dp_expert": "dp_expert"}
_COMM_KEYS = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")


@dataclass
class PlanDetail:
    """Everything reported about one plan (SI units)."""

    layout: Layout
    knobs: dict[str, Any]
    gpus: int
    step_time_s: float
    tokens_per_s: float
    mfu: float
    hfu: float
    breakdown_s: dict[str, float]
    memory_per_gpu_bytes: dict[str, float]
    memory_capacity_bytes: float
    placement: dict[str, dict[str, Any]]
    comm_compute: dict[str, Any]
    cost_per_million_tokens_usd: float
    energy_per_token_j: float
    tp_crosses_domain: bool
    notes: list[str] = field(default_factory=list)
    #: (dimension, size) of its TP/CP/EP groups that straddle a scale-up domain, and why
    #: it ranks where it does (:mod:`supernode.planner.straddle`).
    straddles: tuple[tuple[str, int], ...] = ()
    rank_note: str | None = None

    def as_plan(self, global_batch_sequences: int, with_order: bool = True) -> ParallelPlan:
        """The plan document of this plan: its layout, rank order (``with_order``) and
        knobs (the recompute label as ``recompute`` and ``recompute_modules``)."""
        x = self.layout
        data: dict[str, Any] = {"tp": x.tp, "pp": x.pp, "dp": x.dp, "cp": x.cp, "ep": x.ep,
                                "etp": x.expert_tp, "global_batch_sequences":
                                global_batch_sequences}
        if with_order:
            data["rank_order"] = "-".join(x.order)
        knobs = {k: v for k, v in self.knobs.items() if k != "recompute"}
        data.update({k: v for k, v in knobs.items() if k in ParallelPlan.model_fields})
        data.update(recompute_fields(self.knobs["recompute"]))
        return plan_from_data(data)

    @property
    def fits_in_memory(self) -> bool:
        """True when the busiest GPU's peak memory fits (capacity less the reserve)."""
        return self.memory_per_gpu_bytes["total"] <= self.memory_capacity_bytes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the plan's fields first, then results."""
        x = self.layout
        return {
            "tp": x.tp, "pp": x.pp, "dp": x.dp, "cp": x.cp, "ep": x.ep, "etp": x.expert_tp,
            **self.knobs,
            "rank_order": x.order_name, "gpus": self.gpus,
            "step_time_s": self.step_time_s, "tokens_per_s": self.tokens_per_s,
            "mfu": self.mfu, "hfu": self.hfu,
            **interval_fields(self.step_time_s, self.tokens_per_s, self.mfu),
            "memory_per_gpu_bytes": self.memory_per_gpu_bytes["total"],
            "memory_breakdown_bytes": self.memory_per_gpu_bytes,
            "memory_capacity_bytes": self.memory_capacity_bytes,
            "fits_in_memory": self.fits_in_memory,
            "tp_crosses_scale_up_domain": self.tp_crosses_domain,
            "straddles_scale_up_domain": bool(self.straddles),
            "straddling_groups": [{"dim": d, "group_size": n} for d, n in self.straddles],
            "rank_note": self.rank_note,
            # every dimension: the tier its group spans, or None when its size is 1
            "placement": {d: self.placement[d]["tier"] if d in self.placement else None
                          for d in PLACED_DIMS
                          if d not in ("dp_expert", "etp") or d in self.placement},
            "placement_detail": self.placement,
            "breakdown_s": self.breakdown_s,
            "comm_compute": self.comm_compute,
            "cost_per_million_tokens_usd": self.cost_per_million_tokens_usd,
            "energy_per_token_j": self.energy_per_token_j,
            "notes": self.notes,
        }


def _axes(knobs: dict[str, Any]) -> KnobAxes:
    """A one-point knob grid (overlap switches are passed separately)."""
    return KnobAxes((knobs["micro_batch"],), (knobs["recompute"],),
                    (knobs["sequence_parallel"],), (knobs["vpp"],),
                    ((knobs["zero_stage"], knobs["distributed_optimizer"]),), (True,),
                    (knobs.get("pp_layout", "uniform"),),
                    (bool(knobs.get("moe_a2a_overlap", False)),),
                    bool(knobs.get("grad_reduce_in_fp32", False)),
                    cp_comm=CP_COMM_CODES[knobs.get("cp_comm_type") or DEFAULT_CP_COMM_TYPE])


def plan_detail(target: PlanTarget, layout: Layout, knobs: dict[str, Any],
                cal: Calibration | None = None) -> PlanDetail:
    """Evaluate one plan (layout and knobs) in full on the target."""
    cal = cal or default_calibration()
    w, system, gb = target.workload, target.system, target.global_batch_sequences
    plans, _ = grid_plans([layout], _axes(knobs), gb, target.precision)
    overlap = Overlap(tp=knobs["overlap_tp_comm"], dp=knobs["overlap_dp_comm"],
                      pp=knobs["overlap_pp_comm"])
    steps = step_arrays(w, plans, system, cal, overlap,
                        call_time=LayoutCallTime([layout], system.fabric))
    breakdown = {k: float(np.ravel(steps.breakdown_s[k])[0]) for k in BREAKDOWN_KEYS}
    step = sum(breakdown.values())
    memory = {k: float(np.ravel(v)[0]) for k, v in memory_bytes_per_gpu(w, plans).items()
              if k != "peak_stage"}
    peak_total = step * target.gpus * system.peak_flops
    econ = target.economics_or_default()
    busy = breakdown["compute"] + breakdown["optimizer"]
    tokens = target.tokens_per_step
    issued = {d: float(np.ravel(v)[0]) for d, v in steps.comm_by_dim_s.items()}
    traffic = {d: float(np.ravel(v)[0])
               for d, v in bytes_per_step_by_dim(traffic_per_step(w, plans)).items()}
    placement = placement_of(target, layout, issued, traffic)
    return PlanDetail(
        layout=layout, knobs=dict(knobs), gpus=target.gpus, step_time_s=step,
        tokens_per_s=tokens / step,
        mfu=float(model_flops_per_step(w, gb, causal_attention_factor=EXECUTED)) / peak_total,
        hfu=float(hardware_flops_per_step(w, gb, recompute=knobs["recompute"],
                                          causal_attention_factor=EXECUTED)) / peak_total,
        breakdown_s=breakdown, memory_per_gpu_bytes=memory,
        memory_capacity_bytes=system.usable_memory_bytes, placement=placement,
        comm_compute=comm_compute_row(breakdown, placement),
        cost_per_million_tokens_usd=cost_per_million_tokens(step, target.gpus, tokens, econ),
        energy_per_token_j=energy_per_step_j(busy, step, target.gpus, econ) / tokens,
        tp_crosses_domain=tp_crosses_domain(layout, system),
    )


def placement_of(target: PlanTarget, layout: Layout, issued_s: dict[str, float],
                 bytes_per_step: dict[str, float]) -> dict[str, dict[str, Any]]:
    """Where each dimension's group runs: tier, bandwidth, members, rail alignment."""
    fabric = target.system.fabric
    host = target.host_size or target.scale_up_size
    factors = group_factors(layout) or {}
    out: dict[str, dict[str, Any]] = {}
    for dim, call_dim in PLACED_DIMS.items():
        f = factors.get(call_dim, ((1, 1),))
        size = layout.pp if dim == "pp" else group_size(f)
        expert_dim = dim in ("ep", "etp", "dp_expert")
        if size <= 1 or (expert_dim and target.workload.moe is None) or \
                (dim == "dp_expert" and layout.ep == 1):
            continue
        tier = _sub_fabric(fabric, f).tiers[-1]
        out[dim] = {
            "tier": tier.name, "group_size": size,
            "factors": [list(x) for x in f],
            "bandwidth_bytes_per_s": tier.bandwidth_bytes_per_s / tier.oversubscription,
            "inside_scale_up": tier.name == "scale_up",
            "rail_aligned": tier.name == "scale_up" or rail_aligned(f, host),
            "issued_s": issued_s.get(call_dim, 0.0),
            "bytes_per_step": bytes_per_step.get(call_dim, 0.0),
        }
    return out


def comm_compute_row(breakdown: dict[str, float], placement: dict[str, dict[str, Any]]
                     ) -> dict[str, Any]:
    """Seed 000 §5.2: compute vs communication per card and step, with the 20% line.

    ``share`` is issued communication over compute + communication (as
    :class:`~supernode.estimate.model.Estimate` reports it); ``exposed_share`` is the
    communication left on the critical path over the step time.
    """
    compute = breakdown["compute"]
    by_tier: dict[str, dict[str, float]] = {}
    for p in placement.values():
        row = by_tier.setdefault(p["tier"], {"issued_s": 0.0, "bytes_per_step": 0.0})
        row["issued_s"] += p["issued_s"]
        row["bytes_per_step"] += p["bytes_per_step"]
    issued = sum(r["issued_s"] for r in by_tier.values())
    exposed = sum(breakdown[k] for k in _COMM_KEYS)
    step = sum(breakdown.values())
    share = issued / (compute + issued) if compute + issued > 0 else 0.0
    for row in by_tier.values():
        row["share"] = row["issued_s"] / (compute + issued) if compute + issued > 0 else 0.0
    return {"compute_s": compute, "comm_issued_s": issued, "comm_exposed_s": exposed,
            "comm_to_compute": issued / compute if compute > 0 else float("inf"),
            "share": share, "exposed_share": exposed / step if step > 0 else 0.0,
            "threshold": COMM_SHARE_THRESHOLD, "over_threshold": share > COMM_SHARE_THRESHOLD,
            "by_tier": by_tier}
