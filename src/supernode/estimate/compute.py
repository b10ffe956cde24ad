"""Compute time of one micro-batch on the busiest pipeline GPU (seconds, vectorised).

Three kinds of work, each at its own ceiling:

* **GEMMs** (projections, MLP, output layer) at ``peak x eta_gemm(d)``, where ``d`` is the
  GEMM's sharded inner width (``hidden / tp``, ``ffn / tp``; tokens per expert for MoE)
  and ``eta_gemm(d) = eta_max * d / (d + d_half)``: narrow GEMMs run further from peak
  (a documented, calibrated curve; see ``data/estimate/calibration.yaml``).
* **Attention core** (FlashAttention-style fused kernel; only the causal half of the
  ``s x s`` square is executed) at ``peak x eta_attention``.
* **Memory-bound element-wise work** (norms, residual adds, dropout, activation
  functions, cross-entropy) at ``HBM bandwidth x eta_memory``. Per token and layer the
  forward pass reads/writes about ``11 h`` elements outside the MLP (two norms 2h each,
  two fused bias-dropout-add 3.5h each; divided by tp under sequence parallelism) and
  ``2 f`` (``3 f`` gated) in the MLP activation; backward costs twice the forward. The
  cross-entropy reads/writes ``~12 bytes`` per vocabulary entry and token (bf16 logits,
  fp32 softmax, gradient). Counts from Megatron-LM's fused kernels (Korthikanti et al.,
  MLSys'23, §4 lists the same tensors for activation memory).

Backward = 2 x forward for all three; recomputation adds forward work. (A fixed
per-layer launch overhead was tried and fitted to zero on the public cases: dropped.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.estimate.calibration import Calibration
from supernode.estimate.system import SystemModel
from supernode.spec.plan import PlanArrays
from supernode.spec.workload import WorkloadSpec
from supernode.workload.activations import activation_element_bytes
from supernode.workload.params import attention_matrix_params, mlp_matrix_params, router_params
from supernode.workload.stages import layers_per_gpu_max, stage_layer_mix

#: Executed share of the s x s attention square with a causal mask (FlashAttention skips
#: the upper triangle).
CAUSAL_EXECUTED_FRACTION = 0.5
#: Element reads+writes per token and layer outside the MLP, forward (see module doc).
NON_MLP_ELEMENTS_PER_HIDDEN = 11.0
#: Bytes per vocabulary entry and token for logits + softmax + gradient (see module doc).
CROSS_ENTROPY_BYTES_PER_VOCAB = 12.0


@dataclass(frozen=True)
class MicrobatchCompute:
    """Seconds per micro-batch on the busiest GPU (arrays broadcast over plans)."""

    forward_s: Any
    backward_s: Any
    recompute_s: Any
    attention_core_forward_s: Any

    @property
    def total_s(self) -> Any:
        """Forward + backward + recomputation of one micro-batch (seconds)."""
        return self.forward_s + self.backward_s + self.recompute_s


def gemm_efficiency(width: Any, cal: Calibration) -> Any:
    """Fraction of peak a GEMM of sharded inner width ``width`` reaches (0..eta_max)."""
    d = np.maximum(np.asarray(width, dtype=float), 1.0)
    return cal.gemm_eta_max * d / (d + cal.gemm_half_width)


def _layer_forward(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration,
                   moe_layer: bool) -> tuple[Any, Any]:
    """(forward seconds per layer, of which attention core) for one micro-batch."""
    t = a.tp.astype(float)
    tokens = a.micro_batch * (w.seq_len / a.cp)
    peak = system.peak_flops
    attn_proj = 2.0 * attention_matrix_params(w) * tokens / t
    gemm_s = attn_proj / (peak * gemm_efficiency(w.hidden / t, cal))
    core_flops = (2.0 * w.seq_len / a.cp * w.heads * (w.qk_head_dim + w.v_head_dim)
                  * CAUSAL_EXECUTED_FRACTION * tokens / t)
    core_s = core_flops / (peak * cal.attention_eta)
    if moe_layer and w.moe is not None:
        experts_active = w.moe.top_k + w.moe.shared_experts
        mlp = 2.0 * (experts_active * mlp_matrix_params(w, w.expert_ffn_hidden)
                     + router_params(w)) * tokens / t
        per_expert_tokens = tokens * w.moe.top_k / w.moe.experts * a.ep
        width = np.minimum(w.expert_ffn_hidden / t, per_expert_tokens)
        ffn_elements = experts_active * w.expert_ffn_hidden
    else:
        mlp = 2.0 * mlp_matrix_params(w, w.ffn_hidden) * tokens / t
        width = w.ffn_hidden / t
        ffn_elements = w.ffn_hidden
    gemm_s = gemm_s + mlp / (peak * gemm_efficiency(width, cal))
    e = activation_element_bytes(a.precision)
    sp_div = np.where(a.sp, t, 1.0)
    elements = (NON_MLP_ELEMENTS_PER_HIDDEN * w.hidden / sp_div
                + (3.0 if w.gated_mlp else 2.0) * ffn_elements / t)
    memory_s = tokens * elements * e / (system.memory_bandwidth_bytes_per_s * cal.memory_eta)
    return gemm_s + core_s + memory_s, core_s


def microbatch_compute(w: WorkloadSpec, a: PlanArrays, system: SystemModel,
                       cal: Calibration) -> MicrobatchCompute:
    """Compute seconds of one micro-batch on the busiest pipeline GPU, by pass."""
    n_dense, n_moe = (np.asarray(x, dtype=float) for x in stage_layer_mix(w, a.pp, a.vpp))
    n_total = layers_per_gpu_max(w, a.pp, a.vpp).astype(float)
    dense_s, dense_core = _layer_forward(w, a, system, cal, moe_layer=False)
    moe_s, moe_core = _layer_forward(w, a, system, cal, moe_layer=True)
    # heaviest mix: the busiest GPU's layer count with the first stage's dense/MoE mix
    scale = n_total / np.maximum(n_dense + n_moe, 1.0)
    layers_s = (n_dense * dense_s + n_moe * moe_s) * scale
    core_s = (n_dense * dense_core + n_moe * moe_core) * scale
    head_s = _output_layer_forward(w, a, system, cal)
    forward = layers_s + head_s
    recompute = np.where(a.recompute == 2, layers_s, np.where(a.recompute == 1, core_s, 0.0))
    return MicrobatchCompute(forward, 2.0 * forward, recompute, core_s)


def _output_layer_forward(w: WorkloadSpec, a: PlanArrays, system: SystemModel,
                          cal: Calibration) -> Any:
    """Forward seconds of the output layer and loss (on the last stage) per micro-batch."""
    t = a.tp.astype(float)
    tokens = a.micro_batch * (w.seq_len / a.cp)
    flops = 2.0 * w.hidden * w.vocab * tokens / t
    gemm_s = flops / (system.peak_flops * gemm_efficiency(w.vocab / t, cal))
    loss_bytes = CROSS_ENTROPY_BYTES_PER_VOCAB * w.vocab * tokens / t
    return gemm_s + loss_bytes / (system.memory_bandwidth_bytes_per_s * cal.memory_eta)


def optimizer_step_s(params_per_gpu: Any, shard: Any, system: SystemModel,
                     cal: Calibration) -> Any:
    """Seconds of the Adam update: ~32 bytes moved per (sharded) parameter at HBM speed.

    fp32 master weight, m and v are read and written (24 B), the fp32 gradient read (4 B)
    and the bf16 weight written back (2 B), plus the gradient-norm read (~2 B).
    """
    return 32.0 * params_per_gpu / shard / (system.memory_bandwidth_bytes_per_s * cal.memory_eta)
