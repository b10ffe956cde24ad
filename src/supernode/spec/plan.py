"""Schema of a parallel training plan, and the rules that make a plan legal for a workload.

A plan splits ``gpus = tp * pp * dp * cp`` ways (Megatron-LM order); expert parallelism
``ep`` is carved out of the ``dp * cp`` ranks, and expert weights are tensor-parallel with
the same ``tp`` (no separate expert-TP). ``None`` in a field means "let the planner choose".

The legality rules are written once, over numpy arrays (:func:`_rules`); the scalar
:func:`check_plan` raises :class:`InputError` for the first broken rule, the vectorised
:func:`plan_legal_mask` returns a boolean mask over millions of candidate plans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.resolve import MAX_ACCELERATORS
from supernode.spec.workload import WorkloadSpec, _fail, validate_as

Recompute = Literal["none", "selective", "full"]
RECOMPUTE_CODES: dict[str, int] = {"none": 0, "selective": 1, "full": 2}
PlanPrecision = Literal["bf16", "fp16", "fp8"]
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
    ep: int = Field(1, ge=1, le=MAX_PARALLEL,
                    description="Expert-parallel size, a divisor of dp * cp.")
    vpp: int | None = Field(None, ge=1, le=MAX_PARALLEL,
                            description="Virtual stages per GPU (interleaved 1F1B); "
                                        "null = choose, 1 = plain 1F1B.")
    micro_batch: int | None = Field(None, ge=1, le=MAX_GLOBAL_BATCH,
                                    description="Sequences per micro-batch; null = choose.")
    global_batch_sequences: int = Field(gt=0, le=MAX_GLOBAL_BATCH,
                                        description="Sequences per optimizer step.")
    recompute: Recompute | None = Field(None, description="Activation recomputation; "
                                                          "null = choose.")
    sequence_parallel: bool | None = Field(None, description="Megatron sequence parallelism "
                                                             "(needs tp > 1); null = choose.")
    zero_stage: int = Field(0, ge=0, le=3, description="ZeRO stage: 1 optimizer, 2 +gradients, "
                                                       "3 +parameters sharded over dp.")
    distributed_optimizer: bool = Field(False, description="Megatron distributed optimizer "
                                                           "(shards optimizer states, = ZeRO-1).")
    overlap_dp_comm: bool | None = Field(None, description="Overlap gradient reduce / param "
                                                           "gather with compute; null = choose.")
    overlap_tp_comm: bool | None = Field(None, description="Overlap TP collectives with GEMMs "
                                                           "(TP comm overlap); null = choose.")
    overlap_pp_comm: bool | None = Field(None, description="Overlap pipeline p2p with compute; "
                                                           "null = choose.")
    precision: PlanPrecision = Field("bf16", description="Compute precision of matmuls.")
    flash_attention: bool = Field(True, description="Fused attention kernel: no s x s matrices "
                                                    "are stored (FlashAttention).")

    @model_validator(mode="after")
    def _check(self) -> ParallelPlan:
        if self.vpp is not None and self.vpp > 1 and self.pp == 1:
            raise _fail("vpp", "interleaving (vpp > 1) needs pipeline parallelism (pp > 1)")
        if self.distributed_optimizer and self.zero_stage >= 2:
            raise _fail("zero_stage", "the distributed optimizer is ZeRO-1; use zero_stage 0 "
                                      "or 1 with it, or turn it off for ZeRO-2/3")
        return self


@dataclass(frozen=True)
class PlanArrays:
    """Plan fields as broadcast numpy arrays (one element per candidate plan).

    ``recompute`` holds :data:`RECOMPUTE_CODES` (0 none, 1 selective, 2 full);
    ``precision`` is one string shared by all plans. Unresolved choices must be filled in
    before building one (see :meth:`from_plan`).
    """

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    vpp: np.ndarray
    micro_batch: np.ndarray
    global_batch_sequences: np.ndarray
    recompute: np.ndarray
    sequence_parallel: np.ndarray
    zero_stage: np.ndarray
    distributed_optimizer: np.ndarray
    flash_attention: np.ndarray
    precision: str = "bf16"

    @classmethod
    def from_columns(cls, *, precision: str = "bf16", **columns: Any) -> PlanArrays:
        """Build from keyword arrays or scalars (broadcast together); missing ones default.

        Defaults: tp=pp=dp=cp=ep=vpp=micro_batch=1, recompute none, sequence_parallel
        off, zero_stage 0, no distributed optimizer, flash attention on.
        ``global_batch_sequences`` is required. ``recompute`` may be strings or codes.
        """
        names = [f.name for f in fields(cls) if f.name != "precision"]
        unknown = set(columns) - set(names)
        if unknown:
            raise InputError(sorted(unknown)[0], f"not a plan field; allowed: {', '.join(names)}")
        if "global_batch_sequences" not in columns:
            raise InputError("global_batch_sequences", "required")
        defaults = {"recompute": 0, "sequence_parallel": False, "zero_stage": 0,
                    "distributed_optimizer": False, "flash_attention": True}
        values = {n: columns.get(n, defaults.get(n, 1)) for n in names}
        rec = np.asarray(values["recompute"])
        if rec.dtype.kind in "UO":
            bad = set(np.unique(rec).tolist()) - set(RECOMPUTE_CODES)
            if bad:
                raise InputError("recompute", f"unknown mode {sorted(bad)[0]!r}; "
                                              f"allowed: none, selective, full")
            rec = np.vectorize(RECOMPUTE_CODES.__getitem__, otypes=[np.int64])(rec)
        values["recompute"] = rec
        arrays = np.broadcast_arrays(*[np.asarray(values[n]) for n in names])
        kinds = {"sequence_parallel": bool, "distributed_optimizer": bool,
                 "flash_attention": bool}
        out = {n: a.astype(kinds.get(n, np.int64)) for n, a in zip(names, arrays, strict=True)}
        return cls(precision=precision, **out)

    @classmethod
    def from_plan(cls, plan: ParallelPlan) -> PlanArrays:
        """Build 0-d arrays from one plan, filling its unresolved (null) choices neutrally.

        null vpp -> 1, micro_batch -> 1, recompute -> none, sequence_parallel -> tp > 1.
        A planner should resolve choices itself; this is for evaluating a fixed plan.
        """
        return cls.from_columns(
            precision=plan.precision, tp=plan.tp, pp=plan.pp, dp=plan.dp, cp=plan.cp,
            ep=plan.ep, vpp=plan.vpp or 1, micro_batch=plan.micro_batch or 1,
            global_batch_sequences=plan.global_batch_sequences,
            recompute=RECOMPUTE_CODES[plan.recompute or "none"],
            sequence_parallel=plan.tp > 1 if plan.sequence_parallel is None
            else plan.sequence_parallel,
            zero_stage=plan.zero_stage, distributed_optimizer=plan.distributed_optimizer,
            flash_attention=plan.flash_attention)

    @property
    def microbatches(self) -> np.ndarray:
        """Micro-batches per step per pipeline: global / (micro_batch * dp), floored."""
        return self.global_batch_sequences // np.maximum(self.micro_batch * self.dp, 1)

    @property
    def sp(self) -> np.ndarray:
        """Sequence parallelism actually in effect (it is a no-op when tp == 1)."""
        return self.sequence_parallel & (self.tp > 1)


def as_plan_arrays(plan: ParallelPlan | PlanArrays) -> PlanArrays:
    """Return ``plan`` as :class:`PlanArrays` (a ParallelPlan becomes 0-d arrays)."""
    return plan if isinstance(plan, PlanArrays) else PlanArrays.from_plan(plan)


Rule = tuple[str, np.ndarray, Callable[[], str]]


def _rules(w: WorkloadSpec, a: PlanArrays, gpus: Any) -> list[Rule]:
    """Every legality rule as (field path, ok-mask, message maker), in reporting order."""
    ffn = [w.ffn_hidden] + ([w.expert_ffn_hidden] if w.moe else [])
    ep_ok = (a.ep == 1) if w.moe is None else (w.moe.experts % a.ep == 0)
    m = a.micro_batch * a.dp
    rules: list[Rule] = [
        ("tp", w.heads % a.tp == 0, lambda: f"tp ({a.tp}) must divide heads ({w.heads})"),
        ("tp", w.n_kv_heads % a.tp == 0,
         lambda: f"tp ({a.tp}) must divide kv_heads ({w.n_kv_heads}) (Megatron query groups)"),
        ("tp", np.logical_and.reduce([f % a.tp == 0 for f in ffn]),
         lambda: f"tp ({a.tp}) must divide the MLP widths {ffn}"),
        ("pp", w.layers >= a.pp * a.vpp,
         lambda: f"pp * vpp ({a.pp} * {a.vpp}) exceeds layers ({w.layers}); each virtual "
                 f"stage needs at least one layer"),
        ("vpp", (a.vpp == 1) | (a.pp > 1), lambda: "vpp > 1 needs pp > 1"),
        ("ep", ep_ok, lambda: "ep > 1 needs a moe block" if w.moe is None
         else f"ep ({a.ep}) must divide moe.experts ({w.moe.experts})"),
        ("ep", (a.dp * a.cp) % a.ep == 0, lambda: f"ep ({a.ep}) must divide dp * cp "
                                                  f"({a.dp} * {a.cp})"),
        ("cp", (a.cp == 1) | (w.seq_len % (2 * a.cp) == 0),
         lambda: f"seq_len ({w.seq_len}) must be divisible by 2 * cp ({2 * a.cp}) for "
                 f"load-balanced causal context parallelism"),
        ("global_batch_sequences", a.global_batch_sequences % m == 0,
         lambda: f"global_batch_sequences ({a.global_batch_sequences}) must be a multiple of "
                 f"micro_batch * dp ({a.micro_batch} * {a.dp})"),
        ("zero_stage", (a.zero_stage < 2) | (a.pp == 1),
         lambda: "ZeRO-2/3 cannot be combined with pipeline parallelism (DeepSpeed); use "
                 "zero_stage <= 1 or pp = 1"),
        ("zero_stage", ~(a.distributed_optimizer & (a.zero_stage >= 2)),
         lambda: "the distributed optimizer is ZeRO-1; zero_stage must be 0 or 1 with it"),
    ]
    if gpus is not None:
        total = a.tp * a.pp * a.dp * a.cp
        rules.append(("dp", total == gpus, lambda: f"tp*pp*dp*cp = {a.tp}*{a.pp}*{a.dp}*{a.cp}"
                                                   f" = {total} but the cluster has {gpus} GPUs"))
    return rules


def plan_legal_mask(workload: WorkloadSpec, plans: PlanArrays | ParallelPlan,
                    gpus: Any = None) -> np.ndarray:
    """Boolean mask, one element per plan: True where every legality rule holds.

    ``gpus`` (int, array or None) adds the rule ``tp*pp*dp*cp == gpus``.
    """
    a = as_plan_arrays(plans)
    mask = np.ones(np.broadcast(a.tp, a.micro_batch).shape, dtype=bool)
    for _, ok, _ in _rules(workload, a, gpus):
        mask &= ok
    return mask


def check_plan(workload: WorkloadSpec, plan: ParallelPlan, gpus: int | None = None) -> None:
    """Raise :class:`InputError` (path ``plan.<field>``) for the first rule ``plan`` breaks.

    Unresolved choices are checked at their neutral values (micro_batch 1, vpp 1).
    """
    a = PlanArrays.from_plan(plan)
    for path, ok, message in _rules(workload, a, gpus):
        if not bool(ok):
            raise InputError(f"plan.{path}", message())


def plan_from_data(data: Any, source: str | None = None) -> ParallelPlan:
    """Validate parsed YAML/JSON data as a :class:`ParallelPlan`; raise :class:`InputError`."""
    return validate_as(ParallelPlan, data, "plan", source)
