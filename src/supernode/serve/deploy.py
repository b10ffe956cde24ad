"""Serving deployments as numpy columns: one element per candidate (tp, pp, dp, ep, batch).

One *instance* (model replica) runs on ``tp * dp * pp`` GPUs: ``pp`` pipeline stages, each
of ``dp`` attention data-parallel ranks of ``tp`` tensor-parallel GPUs. Attention and dense
layers are split ``tp`` ways and replicated over the ``dp`` ranks; the routed experts of a
MoE layer are spread over the stage's ``tp * dp`` GPUs as ``ep`` expert-parallel groups of
``etp = tp * dp / ep`` expert-tensor-parallel GPUs (the validation format's layout; SGLang
and TensorRT-LLM's DEP: ``tp 1, dp n, ep n``). ``batch`` is the sequences in flight per
attention-DP rank (across the pipeline's micro-batches).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from supernode.spec.plan import PlanArrays


@dataclass(frozen=True)
class Deployments:
    """Broadcast integer arrays of deployment fields (see the module docstring)."""

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    ep: np.ndarray
    batch: np.ndarray

    @classmethod
    def of(cls, **columns: Any) -> Deployments:
        """Build from scalars or arrays, broadcast together (ep defaults to 1)."""
        names = [f.name for f in fields(cls)]
        values = [np.asarray(columns.get(n, 1)) for n in names]
        arrays = np.broadcast_arrays(*values)
        return cls(**{n: np.asarray(a, dtype=np.int64) for n, a in
                      zip(names, arrays, strict=True)})

    @property
    def gpus(self) -> np.ndarray:
        """GPUs of one instance: ``tp * dp * pp``."""
        out: np.ndarray = self.tp * self.dp * self.pp
        return out

    @property
    def etp(self) -> np.ndarray:
        """Expert tensor-parallel size ``tp * dp / ep`` (at least 1)."""
        out: np.ndarray = np.maximum((self.tp * self.dp) // np.maximum(self.ep, 1), 1)
        return out

    def select(self, index: Any) -> Deployments:
        """The deployments at ``index`` (a mask or integer array)."""
        return replace(self, **{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def plan_arrays(self, micro_batch: Any, precision: str) -> PlanArrays:
        """The step model's plan columns for one forward pass of ``micro_batch`` sequences
        per attention-DP rank: TP and the expert layout as above, no CP, no recompute,
        no pipeline split of the layer shapes (layers per stage are counted here)."""
        return PlanArrays.from_columns(
            precision=precision, tp=self.tp, dp=self.dp, ep=np.maximum(self.ep, 1),
            etp=self.etp, micro_batch=np.maximum(np.asarray(micro_batch), 1),
            global_batch_sequences=1, sequence_parallel=False)
