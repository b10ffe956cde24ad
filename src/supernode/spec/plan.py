"""Schema of a parallel training plan, and the rules that make a plan legal for a workload.

A plan splits ``gpus = tp * pp * dp * cp`` ways. Ranks are numbered in a rank order,
Megatron-Core's ``tp-cp-ep-dp-pp`` by default (tensor-parallel innermost). Expert layers
re-split the same ``tp * cp * dp`` ranks of a pipeline stage as ``etp * ep * edp``
(Megatron-Core's expert decomposition, expert tensor parallelism innermost, so expert
parallelism may span tensor-parallel ranks and stays inside the scale-up domain first);
``etp`` defaults to ``tp``. ``None`` in a field means "let the estimate or planner choose".

The legality rules are written once, over numpy arrays (:mod:`supernode.spec.plan_rules`);
the scalar :func:`check_plan` raises :class:`InputError` for the first broken rule, the
vectorised :func:`plan_legal_mask` returns a boolean mask over millions of candidate plans.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.model_errors import fail as _fail
from supernode.spec.model_errors import validate_as
from supernode.spec.plan_arrays import CP_COMM_CODES, PP_LAYOUT_CODES, PlanArrays
from supernode.spec.plan_rules import legal_mask, raise_first_broken
from supernode.spec.recompute import (
    RECOMPUTE_MODES,
    RecomputeModule,
    modules_mask,
    recompute_fields,
)
from supernode.spec.resolved import MAX_ACCELERATORS
from supernode.spec.workload import WorkloadSpec

__all__ = ["MAX_GLOBAL_BATCH", "MEGATRON_ORDER", "PP_LAYOUT_CODES", "RECOMPUTE_MODES",
           "ParallelPlan", "PlanArrays", "as_plan_arrays", "check_plan", "parse_rank_order",
           "plan_from_data", "plan_legal_mask"]

Recompute = Literal["none", "selective", "full", "modules"]
PlanPrecision = Literal["bf16", "fp16", "fp8"]
PipelineLayout = Literal["uniform", "embedding_and_loss_as_layers"]
CpCommType = Literal["p2p", "all_gather", "a2a", "a2a+p2p"]
#: Dimensions a rank order permutes (tp is always innermost; ep is placed by etp x ep x
#: edp inside the tp * cp * dp ranks, so it may appear in a Megatron order string).
ORDER_DIMS = ("tp", "cp", "dp", "pp")
MEGATRON_ORDER = ("tp", "cp", "dp", "pp")
#: Largest global batch (sequences) any plan or command accepts.
MAX_GLOBAL_BATCH = 2**31
#: Largest size of one parallel dimension: no group is larger than the largest cluster.
MAX_PARALLEL = MAX_ACCELERATORS


class ParallelPlan(StrictModel):
    """How one training job is split across GPUs and which memory/overlap tricks it uses."""

    tp: int = Field(1, ge=1, le=MAX_PARALLEL,
                    description="Tensor-parallel size (Megatron column/row split).")
    pp: int = Field(1, ge=1, le=MAX_PARALLEL, description="Pipeline-parallel stages.")
    dp: int = Field(1, ge=1, le=MAX_PARALLEL, description="Data-parallel replicas.")
    cp: int = Field(1, ge=1, le=MAX_PARALLEL,
                    description="Context-parallel size (sequence split, ring attention).")
    cp_comm_type: CpCommType | None = Field(
        None, description="Context-parallel exchange (Megatron-Core --cp-comm-type): p2p "
        "(ring pass-KV, overlapped with the attention), all_gather (of K and V), a2a "
        "(Ulysses all-to-all of Q, K, V and the output; cp must divide the kv heads / tp), "
        "a2a+p2p (all-to-all inside an 8-GPU host, ring across); null = p2p, Megatron-Core's "
        "default.")
    ep: int = Field(1, ge=1, le=MAX_PARALLEL, description="Expert-parallel size: ep * etp must "
                                                          "divide tp * cp * dp.")
    etp: int | None = Field(None, ge=1, le=MAX_PARALLEL,
                            description="Expert tensor-parallel size (Megatron "
                                        "--expert-tensor-parallel-size); null = tp.")
    vpp: int | None = Field(None, ge=1, le=MAX_PARALLEL,
                            description="Virtual stages per GPU (interleaved 1F1B); "
                                        "null = choose, 1 = plain 1F1B.")
    micro_batch: int | None = Field(None, ge=1, le=MAX_GLOBAL_BATCH,
                                    description="Sequences per micro-batch; null = choose.")
    global_batch_sequences: int = Field(gt=0, le=MAX_GLOBAL_BATCH,
                                        description="Sequences per optimizer step.")
    recompute: Recompute | None = Field(None, description="Activation recomputation: none, "
                                        "selective (the recompute_modules; attention core "
                                        "when not given), modules (attention core, norms, "
                                        "expert activation, MLA up-projections), full (whole "
                                        "layers); null = choose.")
    recompute_modules: list[RecomputeModule] | None = Field(
        None, min_length=1, description="With selective recomputation, Megatron-Core's "
        "recomputed submodules (--recompute-modules): core_attn, layernorm, mla_up_proj, mlp, "
        "moe, moe_act, shared_experts; null = core_attn (or choose when recompute is null).")
    recompute_num_layers: int | None = Field(
        None, ge=1, le=MAX_PARALLEL, description="With full recomputation, the layers of each "
        "(virtual) pipeline stage recomputed (Megatron --recompute-method block "
        "--recompute-num-layers); null = all.")
    grad_reduce_in_fp32: bool | None = Field(None, description="Keep and reduce gradients "
                                             "in fp32 (else in the parameters' 16-bit type, "
                                             "as Megatron-Bridge's benchmarks); null = no.")
    sequence_parallel: bool | None = Field(None, description="Megatron sequence parallelism "
                                                             "(needs tp > 1); null = choose.")
    zero_stage: int | None = Field(None, ge=0, le=3, description="ZeRO stage: 1 optimizer, "
                                   "2 +gradients, 3 +parameters sharded over dp (FSDP); "
                                   "null = choose (1 when distributed_optimizer).")
    distributed_optimizer: bool | None = Field(None, description="Megatron distributed "
                                               "optimizer (shards optimizer states: ZeRO-1; "
                                               "with zero_stage 2 or 3, that stage, as "
                                               "Megatron-FSDP and NeMo Automodel configs set "
                                               "both); null = choose with zero_stage.")
    overlap_dp_comm: bool | None = Field(None, description="Overlap gradient reduce / param "
                                                           "gather with compute; null = choose.")
    overlap_tp_comm: bool | None = Field(None, description="Overlap TP collectives with GEMMs "
                                                           "(TP comm overlap); null = choose.")
    overlap_pp_comm: bool | None = Field(None, description="Overlap pipeline p2p with compute; "
                                                           "null = choose.")
    moe_a2a_overlap: bool | None = Field(None, description="Overlap expert all-to-all with "
                                         "another micro-batch's compute (Megatron --overlap-"
                                         "moe-expert-parallel-comm, DeepEP); null = choose.")
    pp_layout: PipelineLayout | None = Field(None, description="How layers fall on pipeline "
                                             "stages: uniform, or embedding_and_loss_as_layers;"
                                             " null = choose.")
    rank_order: str | None = Field(None, description="Rank order, innermost first, e.g. "
                                   "tp-cp-dp-pp (Megatron's); null = Megatron's.")
    precision: PlanPrecision = Field("bf16", description="Compute precision of matmuls (fp8: "
                                     "layer GEMMs at the part's FP8 figures, the rest BF16).")
    flash_attention: bool = Field(True, description="Fused attention kernel: no s x s matrices "
                                                    "are stored (FlashAttention).")

    @field_validator("rank_order")
    @classmethod
    def _order(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parse_rank_order(value)
        return value

    @model_validator(mode="after")
    def _check(self) -> ParallelPlan:
        if self.vpp is not None and self.vpp > 1 and self.pp == 1:
            raise _fail("vpp", "interleaving (vpp > 1) needs pipeline parallelism (pp > 1)")
        if self.recompute_modules is not None and self.recompute not in (None, "selective"):
            raise _fail("recompute_modules", f"modules are recomputed under selective "
                                             f"recomputation; recompute is {self.recompute}")
        if self.recompute_num_layers is not None and self.recompute != "full":
            raise _fail("recompute_num_layers", "counts layers of full recomputation; give "
                                                "recompute: full with it")
        return self

    def with_chosen(self, chosen: Mapping[str, Any]) -> ParallelPlan:
        """This plan with the knobs an estimate chose filled in, validated: a recompute
        label (``layernorm+moe``) becomes ``recompute`` and ``recompute_modules``; keys
        that are not plan fields are ignored."""
        data = self.model_dump()
        data.update({k: v for k, v in chosen.items()
                     if k != "recompute" and k in ParallelPlan.model_fields})
        if "recompute" in chosen:
            data["recompute_modules"] = None
            data.update(recompute_fields(chosen["recompute"]))
        return plan_from_data(data)

    @property
    def recompute_mask(self) -> int | None:
        """The recompute mask (:mod:`supernode.spec.recompute`), None when left to choose."""
        if self.recompute_modules is not None:
            return modules_mask(self.recompute_modules)
        return None if self.recompute is None else RECOMPUTE_MODES[self.recompute]

    @property
    def order(self) -> tuple[str, ...]:
        """The rank order as a 4-tuple over tp, cp, dp, pp (innermost first)."""
        return parse_rank_order(self.rank_order) if self.rank_order else MEGATRON_ORDER

    def zero_choices(self) -> tuple[int, ...]:
        """ZeRO stages this plan allows: the given one (at least 1 with the distributed
        optimizer; 2 or 3 with it mean that stage), 1 for the distributed optimizer alone, 0
        when the optimizer is explicitly unsharded, else all four (to choose)."""
        if self.zero_stage is not None:
            return (max(self.zero_stage, 1 if self.distributed_optimizer else 0),)
        if self.distributed_optimizer:
            return (1,)
        if self.distributed_optimizer is False:
            return (0,)
        return (0, 1, 2, 3)


def parse_rank_order(text: str) -> tuple[str, ...]:
    """``tp-cp-dp-pp`` -> ``("tp", "cp", "dp", "pp")``; ``ep`` is dropped (Megatron
    writes it; experts are placed by etp x ep x edp); missing dimensions go outermost in
    Megatron's order. Raises :class:`InputError` for unknown or repeated names."""
    parts = [p.strip().lower() for p in str(text).split("-") if p.strip()]
    bad = [p for p in parts if p not in (*ORDER_DIMS, "ep")]
    if bad or len(set(parts)) != len(parts) or not parts or parts[0] != "tp":
        raise InputError("rank_order", f"got {text!r}; a permutation of tp, cp, dp, pp "
                                       f"(and ep), tp first, e.g. tp-cp-ep-dp-pp")
    dims = [p for p in parts if p != "ep"]
    return tuple(dims + [d for d in MEGATRON_ORDER if d not in dims])


def as_plan_arrays(plan: ParallelPlan | PlanArrays) -> PlanArrays:
    """Return ``plan`` as :class:`PlanArrays`: a ParallelPlan becomes 0-d arrays, its
    unresolved (null) choices filled neutrally.

    null vpp -> 1, micro_batch -> 1, recompute -> none, sequence_parallel -> tp > 1,
    zero_stage -> the plan's first allowed stage, moe_a2a_overlap -> off, pp_layout ->
    uniform, cp_comm_type -> p2p. A planner should resolve choices itself; this is for a fixed plan.
    """
    if isinstance(plan, PlanArrays):
        return plan
    return PlanArrays.from_columns(
        precision=plan.precision, tp=plan.tp, pp=plan.pp, dp=plan.dp, cp=plan.cp,
        ep=plan.ep, etp=plan.etp or plan.tp, vpp=plan.vpp or 1,
        micro_batch=plan.micro_batch or 1,
        global_batch_sequences=plan.global_batch_sequences,
        recompute=plan.recompute_mask or 0,
        recompute_layers=plan.recompute_num_layers or 0,
        sequence_parallel=plan.tp > 1 if plan.sequence_parallel is None
        else plan.sequence_parallel,
        zero_stage=plan.zero_choices()[0],
        distributed_optimizer=bool(plan.distributed_optimizer),
        flash_attention=plan.flash_attention,
        moe_a2a_overlap=bool(plan.moe_a2a_overlap),
        pp_layout=PP_LAYOUT_CODES[plan.pp_layout or "uniform"],
        grad_fp32=bool(plan.grad_reduce_in_fp32),
        cp_comm=CP_COMM_CODES[plan.cp_comm_type or "p2p"])


def plan_legal_mask(workload: WorkloadSpec, plans: PlanArrays | ParallelPlan,
                    gpus: Any = None) -> np.ndarray:
    """Boolean mask, one element per plan: True where every legality rule holds
    (:func:`supernode.spec.plan_rules.legal_mask`; ``gpus`` adds ``tp*pp*dp*cp == gpus``)."""
    return legal_mask(workload, as_plan_arrays(plans), gpus)


def check_plan(workload: WorkloadSpec, plan: ParallelPlan, gpus: int | None = None) -> None:
    """Raise :class:`InputError` (path ``plan.<field>``) for the first rule ``plan`` breaks.

    Unresolved choices are checked at their neutral values (micro_batch 1, vpp 1).
    """
    raise_first_broken(workload, as_plan_arrays(plan), gpus)


def plan_from_data(data: Any, source: str | None = None) -> ParallelPlan:
    """Validate parsed YAML/JSON data as a :class:`ParallelPlan`; raise :class:`InputError`."""
    return validate_as(ParallelPlan, data, "plan", source)
