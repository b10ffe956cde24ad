"""Communication of one serving forward pass, priced by the collective model.

* **TP**: two all-reduces per layer (attention output, MLP output) of ``tokens x h`` BF16
  elements over the ``tp`` consecutive ranks (Megatron's row-parallel layers).
* **EP**: per MoE layer a dispatch and a combine all-to-all over the ``ep`` ranks at
  stride ``etp`` (the expert layout of :mod:`supernode.serve.deploy`): each GPU sends its
  ``tokens / tp`` tokens' ``top_k`` copies, FP8 on dispatch when the experts run in FP8
  or FP4 (DeepEP's FP8 dispatch), BF16 on combine. Once the group leaves the scale-up
  domain the dispatcher sends one copy per distinct remote domain a token reaches, not one
  per expert (DeepEP; :func:`supernode.workload.dispatch.deepep_byte_ratio`, the step
  model's rule for cross-domain EP).

* **Expert TP across attention-DP ranks** (``etp > tp``: the experts split wider than the
  attention's TP group): per MoE layer the ``etp / tp`` DP ranks' tokens are all-gathered
  onto every expert slice and the partial outputs reduce-scattered back (FP8 gather when
  the experts run in FP8 or FP4, BF16 scatter), over the ranks at stride ``tp``.

Each group's tiers come from :func:`supernode.estimate.comm.group_fabric` (the step model's
view of strided groups) and its time from :func:`supernode.collectives.collective_time_s`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.collectives import collective_time_s
from supernode.collectives.fabric import Fabric
from supernode.estimate.comm import group_fabric
from supernode.serve.deploy import Deployments
from supernode.serve.precision import ServePrecision
from supernode.spec.workload import WorkloadSpec
from supernode.workload.dispatch import deepep_byte_ratio


def _grouped(op: str, fabric: Fabric, stride: np.ndarray, size: np.ndarray,
             message: np.ndarray, routing: tuple[int, int] | None = None) -> np.ndarray:
    """Seconds of one ``op`` per element, one collective-model call per distinct group."""
    stride, size, message = np.broadcast_arrays(stride, size, np.asarray(message, dtype=float))
    out = np.zeros(size.shape)
    for s, n in {(int(a), int(b)) for a, b in zip(stride.ravel(), size.ravel(), strict=True)}:
        if n <= 1:
            continue
        mask = (stride == s) & (size == n)
        view = group_fabric(fabric, s, n)
        ratio = 1.0
        if routing is not None and len(view.tiers) > 1:
            ratio = deepep_byte_ratio(routing[0], routing[1], n, view.tiers[0].group_size)
        out[mask] = np.asarray(collective_time_s(op, message[mask] * ratio, n, view)[0],
                               dtype=float)
    return out


def tp_allreduce_s(w: WorkloadSpec, d: Deployments, fabric: Fabric, tokens: Any) -> Any:
    """Seconds of one layer's two TP all-reduces for ``tokens`` tokens per DP rank."""
    message = np.asarray(tokens, dtype=float) * w.hidden * 2.0
    return 2.0 * _grouped("all_reduce", fabric, np.ones_like(d.tp), d.tp, message)


def ep_alltoall_s(w: WorkloadSpec, d: Deployments, fabric: Fabric, p: ServePrecision,
                  tokens: Any) -> Any:
    """Seconds of one MoE layer's token exchange for ``tokens`` tokens per DP rank: the EP
    dispatch + combine, and the expert-TP gather + scatter across DP ranks."""
    if w.moe is None:
        return np.zeros(d.tp.shape)
    copies = np.asarray(tokens, dtype=float) / d.tp * w.moe.top_k * w.hidden
    dispatch_bytes = 1.0 if p.main in ("fp8", "fp4") else 2.0
    ep = np.maximum(d.ep, 1)
    routing = (w.moe.experts, w.moe.top_k)
    dispatch = _grouped("all_to_all", fabric, d.etp, ep, copies * dispatch_bytes, routing)
    combine = _grouped("all_to_all", fabric, d.etp, ep, copies * 2.0, routing)
    wide = np.maximum(d.etp // d.tp, 1)  # DP ranks one expert slice serves
    gathered = np.asarray(tokens, dtype=float) * w.hidden * wide
    gather = _grouped("all_gather", fabric, d.tp, wide, gathered * dispatch_bytes)
    scatter = _grouped("reduce_scatter", fabric, d.tp, wide, gathered * 2.0)
    return dispatch + combine + gather + scatter
