"""Plan fields as numpy columns: one element per candidate plan (millions at once).

:class:`PlanArrays` is what every model reads (workload, estimate, planner); the document
a user writes is :class:`supernode.spec.plan.ParallelPlan`, which
:func:`supernode.spec.plan.as_plan_arrays` turns into 0-d arrays, filling the knobs it
leaves open neutrally.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from supernode.errors import InputError
from supernode.spec.recompute import recompute_mask

#: Pipeline layouts and their codes in :class:`PlanArrays`. ``uniform``: transformer
#: layers split evenly over the pp * vpp virtual stages, embedding on the first and output
#: layer + loss on the last on top (Megatron's default); ``embedding_and_loss_as_layers``:
#: the first and last virtual stages count the embedding and the loss as one layer each
#: (Megatron ``--account-for-embedding-in-pipeline-split --account-for-loss-in-...``).
PP_LAYOUT_CODES: dict[str, int] = {"uniform": 0, "embedding_and_loss_as_layers": 1}
#: Context-parallel exchanges (Megatron-Core ``--cp-comm-type``) and their codes:
#: :mod:`supernode.workload.cp_exchange` says what each moves.
CP_COMM_CODES: dict[str, int] = {"p2p": 0, "all_gather": 1, "a2a": 2, "a2a+p2p": 3}
#: What Megatron-Core runs when ``--cp-comm-type`` is not given (ring pass-KV).
DEFAULT_CP_COMM_TYPE = "p2p"


@dataclass(frozen=True)
class PlanArrays:
    """Plan fields as broadcast numpy arrays (one element per candidate plan).

    ``recompute`` holds a recompute mask (:mod:`supernode.spec.recompute`: the OR of the
    recomputed modules' bits, or ``FULL``), ``recompute_layers`` the layers of each
    virtual stage full recomputation covers (0: all), ``pp_layout`` :data:`PP_LAYOUT_CODES`,
    ``cp_comm`` the context-parallel exchange (:data:`~supernode.workload.cp_exchange.
    CP_COMM_CODES`: 0 ring pass-KV, 1 all-gather, 2 all-to-all, 3 hierarchical);
    ``precision`` is one string shared by all plans. The effective ZeRO stage is
    :attr:`zero` (the distributed optimizer is stage 1). Unresolved choices must be filled
    in before building one (see :func:`supernode.spec.plan.as_plan_arrays`).
    """

    tp: np.ndarray
    pp: np.ndarray
    dp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    etp: np.ndarray
    vpp: np.ndarray
    micro_batch: np.ndarray
    global_batch_sequences: np.ndarray
    recompute: np.ndarray
    recompute_layers: np.ndarray
    sequence_parallel: np.ndarray
    zero_stage: np.ndarray
    distributed_optimizer: np.ndarray
    flash_attention: np.ndarray
    moe_a2a_overlap: np.ndarray
    pp_layout: np.ndarray
    grad_fp32: np.ndarray
    cp_comm: np.ndarray = field(default_factory=lambda: np.zeros((), dtype=np.int64))
    precision: str = "bf16"

    @classmethod
    def from_columns(cls, *, precision: str = "bf16", **columns: Any) -> PlanArrays:
        """Build from keyword arrays or scalars (broadcast together); missing ones default.

        Defaults: tp=pp=dp=cp=ep=vpp=micro_batch=1, etp=tp, recompute none,
        sequence_parallel on where tp > 1 (as for a fixed plan,
        :func:`supernode.spec.plan.as_plan_arrays`), zero_stage 0, no
        distributed optimizer, flash attention on, no all-to-all overlap, uniform pipeline
        layout, 16-bit gradients, ring pass-KV context parallelism. ``global_batch_sequences``
        is required. ``recompute`` may be labels (:func:`~supernode.spec.recompute.
        recompute_mask`) or masks, ``pp_layout`` and ``cp_comm`` strings or codes.
        """
        names = [f.name for f in fields(cls) if f.name != "precision"]
        unknown = set(columns) - set(names)
        if unknown:
            raise InputError(sorted(unknown)[0], f"not a plan field; allowed: {', '.join(names)}")
        if "global_batch_sequences" not in columns:
            raise InputError("global_batch_sequences", "required")
        defaults = {"recompute": 0, "recompute_layers": 0, "sequence_parallel": False,
                    "zero_stage": 0,
                    "distributed_optimizer": False, "flash_attention": True,
                    "moe_a2a_overlap": False, "pp_layout": 0, "grad_fp32": False,
                    "cp_comm": 0}
        values = {n: columns.get(n, defaults.get(n, 1)) for n in names}
        if "sequence_parallel" not in columns:
            values["sequence_parallel"] = np.asarray(values["tp"]) > 1
        if "etp" not in columns or columns["etp"] is None:
            values["etp"] = values["tp"]
        values["recompute"] = _masks(values["recompute"])
        values["pp_layout"] = _codes(values["pp_layout"], PP_LAYOUT_CODES, "pp_layout")
        values["cp_comm"] = _codes(values["cp_comm"], CP_COMM_CODES, "cp_comm_type")
        arrays = np.broadcast_arrays(*[np.asarray(values[n]) for n in names])
        kinds = {"sequence_parallel": bool, "distributed_optimizer": bool,
                 "flash_attention": bool, "moe_a2a_overlap": bool, "grad_fp32": bool}
        out = {n: a.astype(kinds.get(n, np.int64)) for n, a in zip(names, arrays, strict=True)}
        return cls(precision=precision, **out)

    @property
    def microbatches(self) -> np.ndarray:
        """Micro-batches per step per pipeline: global / (micro_batch * dp), floored."""
        count: np.ndarray = self.global_batch_sequences // np.maximum(self.micro_batch * self.dp,
                                                                        1)
        return count

    @property
    def sp(self) -> np.ndarray:
        """Sequence parallelism actually in effect (it is a no-op when tp == 1)."""
        on: np.ndarray = self.sequence_parallel & (self.tp > 1)
        return on

    @property
    def zero(self) -> np.ndarray:
        """Effective ZeRO stage: ``zero_stage``, at least 1 with the distributed optimizer."""
        stage: np.ndarray = np.maximum(self.zero_stage, np.where(self.distributed_optimizer, 1, 0))
        return stage

    @property
    def edp(self) -> np.ndarray:
        """Expert data-parallel size: ``tp * cp * dp / (ep * etp)`` (floored)."""
        size: np.ndarray = (self.tp * self.cp * self.dp) // np.maximum(self.ep * self.etp, 1)
        return size


def _masks(values: Any) -> np.ndarray:
    """Recompute labels (or masks) -> masks; InputError naming the allowed modules."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "UO":
        return arr
    return np.asarray(np.vectorize(recompute_mask, otypes=[np.int64])(arr))


def _codes(values: Any, codes: dict[str, int], name: str) -> np.ndarray:
    """Strings (or codes) -> integer codes; InputError naming the allowed strings."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "UO":
        return arr
    bad = set(np.unique(arr).tolist()) - set(codes)
    if bad:
        raise InputError(name, f"unknown value {sorted(bad)[0]!r}; allowed: {', '.join(codes)}")
    coded: np.ndarray = np.vectorize(codes.__getitem__, otypes=[np.int64])(arr)
    return coded
