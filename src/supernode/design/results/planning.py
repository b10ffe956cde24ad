"""``results.json`` -> ``plans`` (the planner's report, ``supernode plan --json``) and
``reviewed_plan`` (the plan under review, :mod:`supernode.design.plans`); the workload fit
is in :mod:`supernode.design.results.fit`. SI units: seconds, bytes, bytes/s, joules, USD."""

from __future__ import annotations

from typing import Literal

from supernode.design.results.base import ResultModel, field, optional
from supernode.design.results.stack import SoftwareStack
from supernode.design.results.straddle import InsideBest, StraddlingGroup


class StepBreakdown(ResultModel):
    """Seconds of one training step by part (they sum to the step time)."""

    compute: float = field("Forward and backward compute (s).")
    tp_comm: float = field("Exposed tensor-parallel communication (s).")
    cp_comm: float = field("Exposed context-parallel communication (s).")
    ep_comm: float = field("Exposed expert-parallel communication (s).")
    pp_comm: float = field("Exposed pipeline communication (s).")
    pipeline_bubble: float = field("Pipeline bubble (s).")
    dp_comm: float = field("Exposed data-parallel communication (s).")
    optimizer: float = field("Optimizer step (s).")
    other: float = field("Everything else (s).")


class MemoryBreakdown(ResultModel):
    """Peak memory of the busiest GPU by component (bytes)."""

    weights: float = field("Weights (bytes).")
    gradients: float = field("Gradients (bytes).")
    optimizer_states: float = field("Optimizer states (bytes).")
    activations: float = field("Activations kept for the backward pass (bytes).")
    output_logits: float = field("Output logits (bytes).")
    comm_buffers: float = field("Communication buffers (bytes).")
    total: float = field("The sum (bytes).")


class Placement(ResultModel):
    """The tier each parallel dimension's group spans (null when its size is 1)."""

    tp: str | None = field("Tensor parallelism.")
    cp: str | None = field("Context parallelism.")
    pp: str | None = field("Pipeline parallelism.")
    dp: str | None = field("Data parallelism.")
    ep: str | None = field("Expert parallelism.")
    etp: str | None = optional("Expert tensor parallelism (when placed).")
    dp_expert: str | None = optional("Data parallelism of the experts (when placed).")


class GroupPlacement(ResultModel):
    """Where one dimension's group runs and what it carries per step."""

    tier: str = field("Slowest tier the group spans.")
    group_size: int = field("GPUs in the group.")
    factors: list[list[int]] = field("The group's (stride, size) factors of the rank order.")
    bandwidth_bytes_per_s: float = field("Bandwidth of that tier per GPU, after "
                                         "oversubscription (bytes/s).")
    inside_scale_up: bool = field("True when the group stays inside a scale-up domain.")
    rail_aligned: bool = field("True when the group's ranks share rails.")
    issued_s: float = field("Communication issued per step (s).")
    bytes_per_step: float = field("Bytes each GPU moves per step.")


class TierComm(ResultModel):
    """Communication issued on one tier per step."""

    issued_s: float = field("Seconds issued per step.")
    bytes_per_step: float = field("Bytes per GPU and step.")
    share: float = field("Issued over compute + issued communication.")


class CommCompute(ResultModel):
    """Compute against communication per GPU and step, with the seeds' 20 % line."""

    compute_s: float = field("Compute per step (s).")
    comm_issued_s: float = field("Communication issued per step (s).")
    comm_exposed_s: float = field("Communication on the critical path per step (s).")
    comm_to_compute: float = field("Issued communication over compute.")
    share: float = field("Issued communication over compute + communication.")
    exposed_share: float = field("Exposed communication over the step time.")
    threshold: float = field("The share's line (0.2).")
    over_threshold: bool = field("True when share is above the line.")
    by_tier: dict[str, TierComm] = field("Per tier the groups span.")


class CommComputeRow(CommCompute):
    """One row of the comm-compute table (seed 000 §5.2)."""

    rank: int = field("Rank of the plan (1: best).")
    plan: str = field("The plan's label.")


class PlanRow(ResultModel):
    """One described plan of the planner (``plans.plans[]``): sizes, knobs, results."""

    rank: int = field("Rank (1: best).")
    tp: int = field("Tensor-parallel size.")
    pp: int = field("Pipeline stages.")
    dp: int = field("Data-parallel replicas.")
    cp: int = field("Context-parallel size.")
    ep: int = field("Expert-parallel size.")
    etp: int = field("Expert tensor-parallel size.")
    micro_batch: int = field("Sequences per micro-batch.")
    recompute: str = field("Activation recomputation.")
    sequence_parallel: bool = field("Megatron sequence parallelism.")
    vpp: int = field("Virtual pipeline stages per GPU.")
    zero_stage: int = field("ZeRO stage.")
    distributed_optimizer: bool = field("Megatron distributed optimizer.")
    pp_layout: str = field("How layers fall on pipeline stages.")
    moe_a2a_overlap: bool = field("Expert all-to-all overlapped with compute.")
    overlap_tp_comm: bool = field("TP collectives overlapped with GEMMs.")
    overlap_dp_comm: bool = field("Gradient reduce overlapped with backward.")
    overlap_pp_comm: bool = field("Pipeline p2p overlapped with compute.")
    grad_reduce_in_fp32: bool = field("Gradients kept and reduced in fp32.")
    cp_comm_type: str = field("Context-parallel exchange (Megatron-Core --cp-comm-type: p2p, "
                              "all_gather, a2a, a2a+p2p).")
    rank_order: str = field("Rank order, innermost first.")
    gpus: int = field("GPUs of the job.")
    step_time_s: float = field("Step time (s).")
    tokens_per_s: float = field("Training throughput (tokens/s).")
    mfu: float = field("Model FLOPs utilisation.")
    hfu: float = field("Hardware FLOPs utilisation.")
    step_time_interval_s: list[float] = field("[low, high] of the step time at "
                                              "interval_level (s): the model's "
                                              "leave-one-source-out errors (docs/estimate.md).")
    tokens_per_s_interval: list[float] = field("[low, high] of tokens/s at interval_level.")
    mfu_interval: list[float] = field("[low, high] of the MFU at interval_level.")
    interval_level: float = field("Probability the intervals are drawn at (0.8).")
    memory_per_gpu_bytes: float = field("Peak memory of the busiest GPU (bytes).")
    memory_breakdown_bytes: MemoryBreakdown = field("That peak by component (bytes).")
    memory_capacity_bytes: float = field("Usable memory per GPU (bytes).")
    fits_in_memory: bool = field("True when the peak fits.")
    tp_crosses_scale_up_domain: bool = field("True when TP leaves the scale-up domain.")
    straddles_scale_up_domain: bool = field("True when a TP, CP or EP group does not sit "
                                            "inside one scale-up domain.")
    straddling_groups: list[StraddlingGroup] = field("Those groups (empty when none).")
    rank_note: str | None = field("Why a straddling plan ranks where it does (null: it "
                                  "does not straddle).")
    placement: Placement = field("The tier of each dimension's group.")
    placement_detail: dict[str, GroupPlacement] = field("Each placed dimension in full.")
    breakdown_s: StepBreakdown = field("The step by part (s).")
    comm_compute: CommCompute = field("Compute against communication.")
    cost_per_million_tokens_usd: float = field("Cost per million tokens (USD).")
    energy_per_token_j: float = field("GPU energy per token (J).")
    notes: list[str] = field("Notes on the plan.")


class Alternative(ResultModel):
    """Why not another family of plans: its best member against the winner."""

    alternative: str = field("The family (e.g. TP beyond the domain).")
    status: str = field("slower, not better, does not fit, not legal, excluded (...).")
    reason: str = field("Why, in a sentence.")
    plan: str | None = optional("The member's label (when one fits).")
    step_time_s: float | None = optional("Its step time (s), when one fits.")
    slower_by: float | None = optional("Its step time over the winner's, minus 1.")
    least_memory_per_gpu_bytes: float | None = optional(
        "Memory the least hungry member needs per GPU (bytes), when none fits.")


class Advice(ResultModel):
    """Why no plan fits, and what would make one."""

    reason: str = field("Why no plan is eligible.")
    suggestions: list[str] = field("What would make one (sentences).")


class SizesOnly(ResultModel):
    """The sizes of a plan."""

    tp: int = field("Tensor-parallel size.")
    pp: int = field("Pipeline stages.")
    dp: int = field("Data-parallel replicas.")
    cp: int = field("Context-parallel size.")
    ep: int = field("Expert-parallel size.")


class ChosenKnobs(ResultModel):
    """Knobs a given plan left open, as the estimate chose them (a tuned run)."""

    micro_batch: int = field("Sequences per micro-batch.")
    recompute: str = field("Activation recomputation.")
    sequence_parallel: bool = field("Megatron sequence parallelism.")
    vpp: int = field("Virtual pipeline stages per GPU.")
    zero_stage: int = field("ZeRO stage.")
    pp_layout: str = field("How layers fall on pipeline stages.")
    moe_a2a_overlap: bool | None = optional("Expert all-to-all overlapped (MoE with EP > 1).")
    cp_comm_type: str | None = optional("Context-parallel exchange (cp > 1 and none given: "
                                        "Megatron-Core's default p2p).")


class ReferencePlan(ResultModel):
    """A given plan ranked among the planner's (``--plan``)."""

    plan: SizesOnly = field("Its sizes.")
    chosen: ChosenKnobs = field("The knobs the estimate chose.")
    step_time_s: float = field("Its step time (s).")
    fits_in_memory: bool = field("True when it fits.")
    rank: int = field("Its rank among the distinct layouts searched.")
    best_step_time_s: float | None = field("The planner's best step time (s), or null.")
    best_speedup: float | None = field("Its step time over the best's, or null.")


class Economics(ResultModel):
    """Price and power the planner's cost and energy figures assume."""

    price_per_gpu_hour_usd: float = field("Price of one GPU-hour (USD).")
    tdp_w: float = field("Accelerator power (W).")
    note: str = field("Where the price comes from.")


class PlanResults(ResultModel):
    """The planner's report (``supernode plan --json``, docs/planner.md)."""

    workload: str = field("Workload name.")
    accelerator: str = field("Accelerator name.")
    gpus: int = field("GPUs of the job.")
    global_batch_sequences: int = field("Sequences per step.")
    objective: str = field("What was ranked: time, cost or energy.")
    allow_cross_domain_tp: bool = field("True when TP may leave the scale-up domain.")
    straddle_margin: float = field("Share a straddling plan must win by to rank above the "
                                   "plans inside the domains.")
    best_inside_domain: InsideBest | None = field("The best plan inside the domains when "
                                                  "the best straddles (else null).")
    feasible: bool = field("True when some plan fits.")
    plans: list[PlanRow] = field("The best distinct layouts (the nearest when none fits).")
    comm_compute_table: list[CommComputeRow] = field("Seed 000 §5.2 table, one row a plan.")
    explanation: list[str] = field("Why the winner is laid out as it is.")
    alternatives: list[Alternative] = field("Each family's best member against the winner.")
    advice: Advice | None = field("Why no plan fits (null when one does).")
    reference: ReferencePlan | None = field("The given plan's rank (null without one).")
    candidates_evaluated: int = field("Plans scored.")
    legal_candidates: int = field("Legal plans.")
    candidates_pruned_by_memory: int = field("Plans dropped for memory before scoring.")
    layouts_considered: int = field("Layouts (sizes and rank orders) considered.")
    layouts_pruned_by_memory: int = field("Layouts dropped for memory.")
    search_wall_time_s: float = field("Wall time of the search (s).")
    plans_per_s: float = field("Plans scored per second.")
    search_workers: int = field("Processes of the search.")
    wall_time_s: float = field("Wall time of the planner (s).")
    economics: Economics = field("Price and power assumed.")
    notes: list[str] = field("Notes on the target and the search.")
    stack: SoftwareStack = field("The software stack the search assumed.")


class ReviewedPlan(ResultModel):
    """The plan under review, the same keys whether the planner found it or it was given
    (:mod:`supernode.design.plans`)."""

    source: Literal["planner", "given"] = field("planner (its best) or given (--plan).")
    tp: int = field("Tensor-parallel size.")
    pp: int = field("Pipeline stages.")
    dp: int = field("Data-parallel replicas.")
    cp: int = field("Context-parallel size.")
    ep: int = field("Expert-parallel size.")
    rank_order: str = field("Rank order, innermost first.")
    step_time_s: float = field("Estimated step time (s).")
    tokens_per_s: float = field("Training throughput (tokens/s).")
    mfu: float = field("Model FLOPs utilisation.")
    fits_in_memory: bool = field("True when the peak memory fits.")
    memory_per_gpu_bytes: float = field("Peak memory of the busiest GPU (bytes).")
    memory_capacity_bytes: float = field("Usable memory per GPU (bytes).")
    tp_crosses_domain: bool = field("True when TP leaves the scale-up domain.")
    straddles_domain: bool | None = optional("True when a TP, CP or EP group straddles a "
                                             "scale-up domain (the planner's best).")
    straddling_groups: list[StraddlingGroup] | None = optional("Those groups.")
    rank_note: str | None = optional("Why it ranks first though it straddles.")
    placement: Placement = field("The tier of each dimension's group.")
    comm_share: float = field("Issued communication over compute + communication.")
    exposed_comm_share: float = field("Exposed communication over the step time.")
    breakdown_s: StepBreakdown = field("The step by part (s).")
    busy_share: float = field("Compute and optimizer over the step (accelerators busy).")
    chosen: ChosenKnobs | None = optional("The knobs the estimate chose (a given plan).")
    rank: int | None = field("Rank among the planner's layouts (null if not ranked).")
    best_speedup: float | None = field("Step time over the planner's best (null if none).")
