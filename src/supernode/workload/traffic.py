"""Communication one GPU issues per optimizer step, by parallel dimension.

Each entry is a :class:`CollectiveCall`: which dimension's group it runs in, the
collective kind, the message size, calls per step and the group size, ready for an
alpha-beta cost model. ``message_bytes`` follows nccl-tests' ``size``: the whole
(reduced or gathered) buffer for all_reduce / all_gather / reduce_scatter, the per-rank
send buffer for all_to_all, the sent tensor for p2p. Counts are for one GPU of the
busiest pipeline stage and broadcast over numpy arrays of plan fields; calls are 0
where a dimension is 1.

* **TP** (Megatron, Shoeybi et al. 2019; Korthikanti et al. 2023 §4.2.2): per layer and
  micro-batch, one all-reduce of ``s b h`` forward and one backward per TP block (the
  attention block and a dense MLP; a MoE layer's shared experts are one more, its routed
  experts use ETP); with sequence parallelism the same bytes as all-gather +
  reduce-scatter pairs, plus an all-gather in backward per block that re-gathers inputs for
  the weight gradients. Full recompute repeats the forward collectives. The input
  embedding adds one forward all-reduce.
* **ETP** (Megatron-Core expert tensor parallelism): per MoE layer an all-gather of the
  routed token copies over the ``etp`` group before the experts and a reduce-scatter
  after, each way.
* **CP** (Megatron context parallelism): per layer and micro-batch the exchange of the
  plan's ``cp_comm_type`` (:mod:`supernode.workload.cp_exchange`: ring pass-KV by default,
  all-gather of K and V, all-to-all of Q, K, V and the output, or both hierarchically);
  recomputing the attention core (or the whole layer) repeats the forward exchange.
* **PP** (Narayanan et al. SC'21): one activation send forward and one gradient send
  backward per micro-batch and virtual stage, ``s b h / (cp t_sp)`` each.
* **DP**: gradients all-reduced once per step (ZeRO-0); reduce-scatter + parameter
  all-gather with the distributed optimizer / ZeRO-1; ZeRO-2 reduce-scatters every
  micro-batch; ZeRO-3 also all-gathers parameters before forward and backward of every
  micro-batch (Rajbhandari et al. SC'20 §7). Split into buckets of ``bucket_params``.
* **EP** (GShard / Megatron MoE): per MoE layer and micro-batch an all-to-all dispatch
  and combine of ``tokens * top_k * h`` forward, the same backward (tokens: the GPU's
  sequence-parallel share, ``mb s / (cp tp)``): the alltoall dispatcher's bytes; the
  call carries its routing so that the cost of a group prices the stack's dispatcher
  (DeepEP sends fewer copies across a domain boundary, :mod:`supernode.workload.dispatch`).
* Expert parameters sync over the expert data-parallel group ``edp = tp cp dp / (ep
  etp)`` (``dp_expert``); everything else over ``dp * cp``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from supernode.spec.plan import ParallelPlan, PlanArrays, as_plan_arrays
from supernode.spec.recompute import is_full, recomputes
from supernode.spec.workload import WorkloadSpec
from supernode.workload.activations import activation_element_bytes, full_recompute_share
from supernode.workload.cp_exchange import cp_exchange
from supernode.workload.memory import params_per_gpu, plan_state_bytes
from supernode.workload.stages import layers_per_gpu_max, stage_layer_mix

CollectiveKind = Literal["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p"]
DEFAULT_BUCKET_PARAMS = 40_000_000  # Megatron DDP default bucket (parameters)


@dataclass(frozen=True)
class CollectiveCall:
    """One kind of collective a GPU issues: size, count per step, group (arrays broadcast)."""

    dim: str
    kind: CollectiveKind
    message_bytes: Any
    calls_per_step: Any
    group_size: Any
    phase: Literal["forward", "backward", "step"]
    #: (experts, top_k, dispatcher) of an expert dispatch (dispatcher None: per group,
    #: :mod:`supernode.workload.dispatch`); None for every other call
    routing: tuple[int, int, str | None] | None = None
    #: runs beside the attention core it feeds (the CP ring), not on the critical path
    hidden: bool = False

    @property
    def bytes_per_step(self) -> Any:
        """``message_bytes * calls_per_step`` (bytes)."""
        return np.asarray(self.message_bytes) * self.calls_per_step


def _forward_repeats(w: WorkloadSpec, a: PlanArrays) -> Any:
    """1 + the share of layers full recomputation runs forward again (0 without it)."""
    return 1.0 + np.where(is_full(a.recompute), full_recompute_share(w, a), 0.0)


def cp_forward_runs(w: WorkloadSpec, a: PlanArrays) -> Any:
    """Forward runs of the attention core per micro-batch: 1, plus the recomputation's
    (full recomputation's share of layers, or ``core_attn`` recomputed); the CP exchange
    inside the core runs again with it."""
    return _forward_repeats(w, a) + recomputes(a.recompute, "core_attn")


def attention_kv_heads(w: WorkloadSpec) -> int:
    """Key/value heads the attention call sees: the model's ``kv_heads``, or the query
    heads where the stack expands them first (``attention_kv: expanded``, repeat_kv)."""
    return w.n_heads if w.software.attention_kv == "expanded" else w.n_kv_heads


def torch_cp(w: WorkloadSpec) -> bool:
    """Whether the workload's stack runs PyTorch's context-parallel attention
    (``context_parallel: torch``, :mod:`supernode.workload.cp_exchange`)."""
    return w.software.context_parallel == "torch"


def _tp_blocks(w: WorkloadSpec, a: PlanArrays) -> tuple[Any, Any]:
    """TP-parallel blocks (each one all-reduce or AG/RS pair per pass) on the busiest GPU,
    and the extra forward blocks recomputed modules run again (a dense ``mlp``, the shared
    experts with ``moe`` or ``shared_experts``)."""
    n_dense, n_moe = (np.maximum(*pair) for pair in zip(
        stage_layer_mix(w, a.pp, a.vpp, "first", a.pp_layout),
        stage_layer_mix(w, a.pp, a.vpp, "last", a.pp_layout), strict=True))
    shared = 1 if (w.moe is not None and w.moe.shared_experts) else 0
    scale = layers_per_gpu_max(w, a.pp, a.vpp, a.pp_layout) / np.maximum(n_dense + n_moe, 1)
    blocks = (2 * n_dense + (1 + shared) * n_moe) * scale
    again = (n_dense * recomputes(a.recompute, "mlp")
             + shared * n_moe * (recomputes(a.recompute, "moe")
                                 | recomputes(a.recompute, "shared_experts"))) * scale
    return blocks, again


def _tp_calls(w: WorkloadSpec, a: PlanArrays, e: int) -> list[CollectiveCall]:
    tokens = a.micro_batch * (w.seq_len / a.cp)
    msg = tokens * e * w.hidden
    # FP8: Transformer Engine all-gathers the sequence-parallel input of an FP8 GEMM in FP8
    gather = msg / e if a.precision == "fp8" else msg
    blocks, again = _tp_blocks(w, a)
    on = (a.tp > 1) * a.microbatches
    # + the input-embedding all-reduce
    fwd = on * (blocks * _forward_repeats(w, a) + again) + on
    bwd = on * blocks
    sp, nsp = a.sp, ~a.sp
    return [
        CollectiveCall("tp", "all_reduce", msg, nsp * fwd, a.tp, "forward"),
        CollectiveCall("tp", "all_reduce", msg, nsp * bwd, a.tp, "backward"),
        CollectiveCall("tp", "all_gather", gather, sp * fwd, a.tp, "forward"),
        CollectiveCall("tp", "reduce_scatter", msg, sp * fwd, a.tp, "forward"),
        CollectiveCall("tp", "all_gather", gather, sp * 2 * bwd, a.tp, "backward"),
        CollectiveCall("tp", "reduce_scatter", msg, sp * bwd, a.tp, "backward"),
    ]


def _cp_pp_calls(w: WorkloadSpec, a: PlanArrays, e: int) -> list[CollectiveCall]:
    tokens = a.micro_batch * (w.seq_len / a.cp)
    layers = layers_per_gpu_max(w, a.pp, a.vpp, a.pp_layout)
    kv = e * tokens * attention_kv_heads(w) * (w.qk_head_dim + w.v_head_dim) / a.tp
    q = e * tokens * w.n_heads * w.qk_head_dim / a.tp
    out = e * tokens * w.n_heads * w.v_head_dim / a.tp
    per_layer = layers * a.microbatches
    again = cp_forward_runs(w, a)
    calls = [CollectiveCall("cp", kind, msg, count * per_layer
                            * (again if phase == "forward" else 1), group, phase,
                            hidden=hidden)
             for phase, kind, msg, count, group, hidden
             in cp_exchange(kv, q, out, a, torch_cp(w))]
    sp_div = np.where(a.sp, a.tp, 1)
    pp_msg = tokens * e * w.hidden / sp_div
    sends = (a.pp > 1) * a.microbatches * a.vpp
    return calls + [
        CollectiveCall("pp", "p2p", pp_msg, sends, 2, "forward"),
        CollectiveCall("pp", "p2p", pp_msg, sends, 2, "backward"),
    ]


def _dp_calls(dim: str, params: Any, group: Any, a: PlanArrays,
              bucket_params: float) -> list[CollectiveCall]:
    wb, gb, _ = plan_state_bytes(a)
    on = group > 1
    buckets = np.maximum(np.ceil(params / bucket_params), 1)
    z = a.zero
    m = a.microbatches
    grad_msg, param_msg = params * gb / buckets, params * wb / buckets
    return [
        CollectiveCall(dim, "all_reduce", grad_msg, on * (z == 0) * buckets, group, "backward"),
        CollectiveCall(dim, "reduce_scatter", grad_msg,
                       on * buckets * np.where(z == 1, 1, np.where(z >= 2, m, 0)), group,
                       "backward"),
        CollectiveCall(dim, "all_gather", param_msg, on * (z == 1) * buckets, group, "step"),
        CollectiveCall(dim, "all_gather", param_msg, on * (z == 3) * 2 * m * buckets, group,
                       "forward"),
    ]


def moe_layers_on_busiest(w: WorkloadSpec, a: PlanArrays) -> Any:
    """MoE layers on the pipeline GPU holding the most of them."""
    firsts = stage_layer_mix(w, a.pp, a.vpp, "first", a.pp_layout)[1]
    lasts = stage_layer_mix(w, a.pp, a.vpp, "last", a.pp_layout)[1]
    middle = np.where(a.pp >= 3, stage_layer_mix(w, a.pp, a.vpp, "middle", a.pp_layout)[1], 0)
    return np.maximum(np.maximum(firsts, lasts), middle)


def _ep_calls(w: WorkloadSpec, a: PlanArrays, e: int) -> list[CollectiveCall]:
    if w.moe is None:
        return []
    tokens = a.micro_batch * (w.seq_len / a.cp) / a.tp
    copies = w.moe.top_k * (w.moe.capacity_factor or 1.0) * w.moe.token_imbalance
    msg = tokens * copies * e * w.hidden
    n_moe = moe_layers_on_busiest(w, a)
    per_step = (a.ep > 1) * n_moe * a.microbatches * 2  # dispatch + combine
    # recomputing the MoE block dispatches and combines again
    repeats = _forward_repeats(w, a) + recomputes(a.recompute, "moe")
    fwd = per_step * repeats
    # expert tensor parallelism: gather the etp ranks' routed copies, scatter them back
    etp_msg = msg * a.etp
    etp_on = (a.etp > 1) * n_moe * a.microbatches
    etp_fwd = etp_on * repeats
    routing = (w.moe.experts, w.moe.top_k, w.software.moe_dispatcher)
    return [CollectiveCall("ep", "all_to_all", msg, fwd, a.ep, "forward", routing=routing),
            CollectiveCall("ep", "all_to_all", msg, per_step, a.ep, "backward",
                           routing=routing),
            CollectiveCall("etp", "all_gather", etp_msg, etp_fwd, a.etp, "forward"),
            CollectiveCall("etp", "reduce_scatter", etp_msg, etp_fwd, a.etp, "forward"),
            CollectiveCall("etp", "all_gather", etp_msg, etp_on, a.etp, "backward"),
            CollectiveCall("etp", "reduce_scatter", etp_msg, etp_on, a.etp, "backward")]


def traffic_per_step(w: WorkloadSpec, plan: ParallelPlan | PlanArrays,
                     bucket_params: float = DEFAULT_BUCKET_PARAMS) -> list[CollectiveCall]:
    """Every collective one GPU of the busiest stage issues in one optimizer step.

    Dimensions: tp, cp, pp, dp (non-expert parameters over ``dp * cp`` ranks),
    dp_expert (routed experts over ``edp``), ep, etp. Entries with zero calls are kept so
    that arrays line up across plans.
    """
    a = as_plan_arrays(plan)
    e = activation_element_bytes(a.precision)
    first = params_per_gpu(w, a, "first")
    last = params_per_gpu(w, a, "last")
    dense = np.maximum(first["dense"], last["dense"])
    expert = np.maximum(first["expert"], last["expert"])
    calls = _tp_calls(w, a, e) + _cp_pp_calls(w, a, e)
    calls += _dp_calls("dp", dense, a.dp * a.cp, a, bucket_params)
    if w.moe is not None:
        calls += _dp_calls("dp_expert", expert, a.edp, a, bucket_params)
    return calls + _ep_calls(w, a, e)


def bytes_per_step_by_dim(calls: list[CollectiveCall]) -> dict[str, Any]:
    """Sum of ``message_bytes * calls_per_step`` per dimension (bytes per GPU per step)."""
    out: dict[str, Any] = {}
    for c in calls:
        out[c.dim] = out.get(c.dim, 0.0) + c.bytes_per_step
    return out
