"""How layers fall on pipeline stages: the busiest GPU's layer count and layer mix.

Uneven splits are allowed: with ``pp * vpp`` virtual stages, each holds ``floor`` or
``ceil(layers / (pp * vpp))`` layers, and the busiest GPU holds ``vpp`` of the larger
chunks. The first GPU is taken to hold layers ``[0, n)`` and the last ``[layers - n,
layers)`` (exact for ``vpp == 1``; with interleaving it sets only the dense/MoE mix).
All functions broadcast over numpy arrays of ``pp`` and ``vpp``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.spec.workload import WorkloadSpec, moe_layers_in_range


def layers_per_gpu_max(w: WorkloadSpec, pp: Any, vpp: Any = 1) -> np.ndarray:
    """Layers on the busiest pipeline GPU: ``vpp * ceil(layers / (pp * vpp))``."""
    pp, vpp = np.asarray(pp), np.asarray(vpp)
    return vpp * -(-w.layers // (pp * vpp))


def stage_layer_mix(w: WorkloadSpec, pp: Any, vpp: Any = 1, stage: str = "first"
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(dense layers, MoE layers) on the first or last pipeline GPU (``stage``)."""
    n = np.minimum(layers_per_gpu_max(w, pp, vpp), w.layers)
    start = np.zeros_like(n) if stage == "first" else w.layers - n
    moe = np.asarray(moe_layers_in_range(w, start, start + n))
    return n - moe, moe
