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
* **Fused attention** (FlashAttention-style): executed FLOPs at the kernel's measured
  rate for the head size, the sequence length the kernel runs at and the causal mask
  (:mod:`supernode.estimate.attention_kernels`: FA3 paper Figs. 5-6 tables of cuDNN,
  FlashAttention-3 and FlashAttention-2 on H100), scaled to the part by its own
  ``fused_attention`` level (catalog; the cuDNN figure at its reference point). Backward
  FLOPs are 2.5 x forward (FlashAttention's convention: five matmuls including the
  recomputed scores, against two).
* **Streaming** (norms, activations, residuals, permutations, casts): bytes at
  ``HBM bandwidth x memory_eta``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from supernode.estimate.attention_kernels import DEFAULT_KERNEL, kernel_tflops
from supernode.estimate.calibration import Calibration
from supernode.estimate.system import SystemModel
from supernode.workload.shapes import Gemm

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


def attention_rate(system: SystemModel, head_dim: float, length: Any, causal: bool,
                   backward: bool, kernel: str = DEFAULT_KERNEL) -> Any:
    """Fused-attention FLOP/s on ``system``'s part for ``head_dim`` at sequence ``length``
    (queries = keys, arrays broadcast), with or without the causal mask, by pass (BF16).

    The kernel's measured curve (:func:`~supernode.estimate.attention_kernels.
    kernel_tflops`) times the part's level: its catalog ``fused_attention`` rate over the
    cuDNN curve at the reference point that rate was quoted at (forward: causal at
    ``2 forward_keys`` tokens; backward: non-causal at ``backward_keys`` tokens).
    """
    table = system.attention_backward if backward else system.attention_forward
    dims = np.array([d for d, _ in table], dtype=float)
    rates = np.array([r for _, r in table], dtype=float)
    level = float(np.interp(head_dim, dims, rates))
    keys = system.attention_reference_keys[1 if backward else 0]
    reference = float(kernel_tflops(DEFAULT_KERNEL, head_dim, keys if backward else 2.0 * keys,
                                    causal=not backward, backward=backward))
    return level / reference * kernel_tflops(kernel, head_dim, length, causal, backward)


def attention_s(flops_forward: Any, system: SystemModel, head_dim: float, length: Any,
                causal: bool, kernel: str = DEFAULT_KERNEL) -> tuple[Any, Any]:
    """(forward, backward) seconds of fused attention with ``flops_forward`` executed
    forward FLOPs, run as calls of sequence ``length`` (see :func:`attention_rate`)."""
    fwd = flops_forward / attention_rate(system, head_dim, length, causal, False, kernel)
    bwd = ATTENTION_BACKWARD_FLOPS_RATIO * flops_forward / attention_rate(
        system, head_dim, length, causal, True, kernel)
    return fwd, bwd


def stream_s(bytes_moved: Any, system: SystemModel, cal: Calibration) -> Any:
    """Seconds to stream ``bytes_moved`` through HBM at the achieved share ``memory_eta``."""
    return bytes_moved / (system.memory_bandwidth_bytes_per_s * cal.memory_eta)
