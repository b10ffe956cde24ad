"""Seconds of the three kinds of kernels on one accelerator: GEMMs, fused attention, streams.

* **GEMM** ``(m x k) @ (k x n)``: ``2 m n k`` FLOPs at the part's *measured* maximum
  achievable matmul throughput (MAMF, per precision, from the catalog) times
  ``gemm_sustained`` (the share of that burst benchmark a GEMM keeps inside a training
  step, calibrated), and never faster than streaming its operands through HBM (roofline,
  per pass): forward reads the input and the weight and writes the output; the backward's
  input-gradient GEMM reads the output gradient and the weight and writes the input
  gradient; its weight-gradient GEMM reads the input and the output gradient and
  accumulates into the gradient buffer (read and write, 2 or 4 bytes per weight element,
  Megatron's gradient-accumulation fusion). Each pass adds ``gemm_operand_passes`` HBM
  passes over the GEMM's operands (calibrated): the unfused kernels around every GEMM
  that produce and consume its operands (casts, copies, transposes, bias and residual
  work the explicit streaming count below does not list). This is what makes narrow
  GEMMs (small ``m`` per expert, small sharded ``n`` or ``k``) slower than wide ones, at
  each part's own ratio of memory bandwidth to matmul throughput.
* **Fused attention** (FlashAttention-style): executed FLOPs at the part's measured
  forward / backward throughput for the head size (catalog, interpolated linearly in head
  dim), scaled for the keys each query attends to by ``keys / (keys + K)``: a per-query-
  block fixed cost, ``K = 256`` keys fitted to the FA3 causal head-dim-128 sequence sweep
  on H100 (arXiv:2407.08608 Fig. 5: 292, 423, 521, 579, 602, 616 TFLOP/s from 512 to
  16k tokens). Backward FLOPs are 2.5 x forward (FlashAttention's convention: five
  matmuls including the recomputed scores, against two).
* **Streaming** (norms, activations, residuals, permutations, casts): bytes at
  ``HBM bandwidth x memory_eta``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from supernode.estimate.calibration import Calibration
from supernode.estimate.system import SystemModel
from supernode.workload.shapes import Gemm

#: Keys per query at which fused attention reaches half its long-sequence throughput.
ATTENTION_HALF_KEYS = 256.0
#: Backward / forward executed FLOPs of fused attention (FlashAttention convention).
ATTENTION_BACKWARD_FLOPS_RATIO = 2.5
#: Bytes per GEMM operand element: BF16 inputs and outputs; FP8 inputs, BF16 output.
_INPUT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0}


def gemm_precision(g: Gemm, plan_precision: str) -> str:
    """The precision a GEMM runs at: the plan's for layer GEMMs, BF16 for the others."""
    return plan_precision if g.precision == "layer" else "bf16"


def gemm_pass_s(gemms: Iterable[Gemm], system: SystemModel, cal: Calibration,
                plan_precision: str, grad_bytes: Any = 2.0) -> tuple[Any, Any]:
    """(forward, backward) seconds of ``gemms`` (each ``count`` times) on one GPU.

    ``grad_bytes``: bytes per element of the weight-gradient buffer (2, or 4 in fp32).
    """
    forward: Any = 0.0
    backward: Any = 0.0
    stream = system.memory_bandwidth_bytes_per_s * cal.memory_eta
    for g in gemms:
        precision = gemm_precision(g, plan_precision)
        ceiling = system.matmul_flops(precision) * cal.gemm_sustained
        m, n, k = (np.asarray(x, dtype=float) for x in (g.m, g.n, g.k))
        compute = 2.0 * m * n * k / ceiling
        e = _INPUT_BYTES.get(precision, 2.0)
        around = cal.gemm_operand_passes * (e * (m * k + k * n) + 2.0 * m * n) / stream
        fwd = np.maximum(compute, (e * (m * k + k * n) + 2.0 * m * n) / stream)
        dgrad = np.maximum(compute, (e * (m * n + k * n) + 2.0 * m * k) / stream)
        wgrad = np.maximum(compute, (e * (m * k + m * n) + 2.0 * grad_bytes * k * n) / stream)
        fwd, dgrad, wgrad = fwd + around, dgrad + around, wgrad + around
        forward = forward + g.count * fwd
        backward = backward + g.count * (dgrad + wgrad)
    return forward, backward


def gemm_forward_s(gemms: Iterable[Gemm], system: SystemModel, cal: Calibration,
                   plan_precision: str) -> Any:
    """Forward seconds of ``gemms`` (each ``count`` times) on one GPU (broadcast)."""
    return gemm_pass_s(gemms, system, cal, plan_precision)[0]


def attention_rate(system: SystemModel, head_dim: float, keys: Any, backward: bool) -> Any:
    """Fused-attention FLOP/s for ``head_dim`` and ``keys`` attended per query (BF16)."""
    table = system.attention_backward if backward else system.attention_forward
    dims = np.array([d for d, _ in table], dtype=float)
    rates = np.array([r for _, r in table], dtype=float)
    base = float(np.interp(head_dim, dims, rates))
    reference = system.attention_reference_keys[1 if backward else 0]
    keys = np.maximum(np.asarray(keys, dtype=float), 1.0)
    scale = (keys / (keys + ATTENTION_HALF_KEYS)) / (reference / (reference
                                                                   + ATTENTION_HALF_KEYS))
    return base * scale


def attention_s(flops_forward: Any, system: SystemModel, head_dim: float,
                keys: Any) -> tuple[Any, Any]:
    """(forward, backward) seconds of fused attention with ``flops_forward`` executed."""
    fwd = flops_forward / attention_rate(system, head_dim, keys, backward=False)
    bwd = ATTENTION_BACKWARD_FLOPS_RATIO * flops_forward / attention_rate(
        system, head_dim, keys, backward=True)
    return fwd, bwd


def stream_s(bytes_moved: Any, system: SystemModel, cal: Calibration) -> Any:
    """Seconds to stream ``bytes_moved`` through HBM at the achieved share ``memory_eta``."""
    return bytes_moved / (system.memory_bandwidth_bytes_per_s * cal.memory_eta)
