"""How layers fall on pipeline stages: each GPU's layer count and dense/MoE layer mix.

With ``pp * vpp`` virtual stages of ``c`` slots each, ``c = ceil(slots / (pp * vpp))``,
every GPU holds ``vpp`` chunks. ``slots`` is the layer count, plus two with the
``embedding_and_loss_as_layers`` layout (plan ``pp_layout`` code 1: the first chunk's
first slot is the embedding, the last chunk's last slot the loss, so the first and last
GPUs hold one transformer layer less each; Megatron's ``--account-for-embedding-in-
pipeline-split --account-for-loss-in-pipeline-split``). Uneven splits are allowed; the
busiest GPU holds full chunks. The first GPU is taken to hold layers ``[0, n)`` and the
last ``[layers - n, layers)`` (exact for ``vpp == 1``; with interleaving it sets only the
dense/MoE mix); a middle GPU (``pp >= 3``) gets the model's average mix.
All functions broadcast over numpy arrays of ``pp``, ``vpp`` and the layout code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.spec.workload import WorkloadSpec, moe_layers_in_range

STAGES = ("first", "middle", "last")


def chunk_slots(w: WorkloadSpec, pp: Any, vpp: Any = 1, layout: Any = 0) -> np.ndarray:
    """Slots (layers, or the embedding / loss) in the busiest virtual stage."""
    pp, vpp, layout = np.asarray(pp), np.asarray(vpp), np.asarray(layout)
    slots: np.ndarray = -(-(w.layers + 2 * layout) // (pp * vpp))
    return slots


def stage_layer_count(w: WorkloadSpec, pp: Any, vpp: Any = 1, layout: Any = 0,
                      stage: str = "first") -> np.ndarray:
    """Transformer layers on the first, a middle or the last pipeline GPU."""
    pp, vpp, layout = np.asarray(pp), np.asarray(vpp), np.asarray(layout)
    full = vpp * chunk_slots(w, pp, vpp, layout)
    edge = stage != "middle"
    both = (pp == 1) & edge  # one GPU holds the embedding and the loss
    n = full - np.where(edge, layout, 0) - np.where(both, layout, 0)
    layers: np.ndarray = np.clip(n, 0, w.layers)
    return layers


def layers_per_gpu_max(w: WorkloadSpec, pp: Any, vpp: Any = 1, layout: Any = 0) -> np.ndarray:
    """Transformer layers on the busiest pipeline GPU."""
    counts = [stage_layer_count(w, pp, vpp, layout, s) for s in ("first", "last")]
    middle = np.where(np.asarray(pp) >= 3, stage_layer_count(w, pp, vpp, layout, "middle"), 0)
    busiest: np.ndarray = np.maximum(np.maximum(*counts), middle)
    return busiest


def stage_layer_mix(w: WorkloadSpec, pp: Any, vpp: Any = 1, stage: str = "first",
                    layout: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """(dense layers, MoE layers) on the first, a middle or the last pipeline GPU."""
    n = stage_layer_count(w, pp, vpp, layout, stage)
    if stage == "middle":
        moe = np.round(n * (w.moe_layers / w.layers)).astype(np.int64)
        return n - moe, moe
    start = np.zeros_like(n) if stage == "first" else w.layers - n
    moe = np.asarray(moe_layers_in_range(w, start, start + n))
    return n - moe, moe
