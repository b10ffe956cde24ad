"""The rules that make a plan legal for a workload, written once over numpy arrays.

Each rule is (field path, ok-mask, message maker) over :class:`PlanArrays`; the scalar
:func:`supernode.spec.plan.check_plan` raises for the first broken one, the vectorised
:func:`legal_mask` is the boolean mask over millions of candidate plans.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from supernode.errors import InputError
from supernode.spec.plan_arrays import CP_COMM_CODES, PlanArrays
from supernode.spec.workload import WorkloadSpec

Rule = tuple[str, np.ndarray, Callable[[], str]]


def rules(w: WorkloadSpec, a: PlanArrays, gpus: Any) -> list[Rule]:
    """Every legality rule as (field path, ok-mask, message maker), in reporting order."""
    ep_ok = (a.ep == 1) if w.moe is None else (w.moe.experts % a.ep == 0)
    expert_ffn = w.expert_ffn_hidden if w.moe else 1
    moe = w.moe is not None
    m = a.micro_batch * a.dp
    a2a = a.moe_a2a_overlap & (a.ep > 1)
    rules: list[Rule] = [
        ("tp", w.n_heads % a.tp == 0, lambda: f"tp ({a.tp}) must divide heads ({w.n_heads})"),
        ("tp", w.n_kv_heads % a.tp == 0,
         lambda: f"tp ({a.tp}) must divide kv_heads ({w.n_kv_heads}) (Megatron query groups)"),
        ("tp", w.ffn_hidden % a.tp == 0,
         lambda: f"tp ({a.tp}) must divide the dense MLP width ({w.ffn_hidden})"),
        ("etp", (~np.asarray(moe) & (a.etp == a.tp)) | (expert_ffn % a.etp == 0),
         lambda: f"etp ({a.etp}) must divide the expert MLP width ({expert_ffn})" if moe
         else "etp is for expert layers; a dense model needs etp = tp (or null)"),
        # with embedding_and_loss_as_layers the embedding and the loss fill a slot each
        ("pp", w.layers + 2 * a.pp_layout >= a.pp * a.vpp,
         lambda: f"pp * vpp ({a.pp} * {a.vpp}) exceeds the layers ({w.layers}, + 2 with "
                 f"pp_layout embedding_and_loss_as_layers); each virtual stage needs at least "
                 f"one slot"),
        ("vpp", (a.vpp == 1) | (a.pp > 1), lambda: "vpp > 1 needs pp > 1"),
        ("ep", ep_ok, lambda: "ep > 1 needs a moe block" if w.moe is None
         else f"ep ({a.ep}) must divide moe.experts ({w.moe.experts})"),
        ("ep", (a.tp * a.cp * a.dp) % (a.ep * a.etp) == 0,
         lambda: f"ep * etp ({a.ep} * {a.etp}) must divide tp * cp * dp ({a.tp} * {a.cp} * "
                 f"{a.dp}): Megatron-Core splits a stage's ranks as etp x ep x edp"),
        ("sequence_parallel", ~np.asarray(moe) | (a.tp == 1) | a.sequence_parallel,
         lambda: "MoE with tp > 1 needs sequence parallelism (Megatron-Core)"),
        ("cp", (a.cp == 1) | (w.seq_len % (2 * a.cp) == 0),
         lambda: f"seq_len ({w.seq_len}) must be divisible by 2 * cp ({2 * a.cp}) for "
                 f"load-balanced causal context parallelism"),
        ("cp_comm_type", (a.cp_comm != CP_COMM_CODES["a2a"])
         | ((w.n_kv_heads // np.maximum(a.tp, 1)) % a.cp == 0),
         lambda: f"cp_comm_type a2a splits the heads over cp: cp ({a.cp}) must divide the "
                 f"kv heads per TP rank ({w.n_kv_heads} / {a.tp})"),
        ("global_batch_sequences", a.global_batch_sequences % m == 0,
         lambda: f"global_batch_sequences ({a.global_batch_sequences}) must be a multiple of "
                 f"micro_batch * dp ({a.micro_batch} * {a.dp})"),
        ("moe_a2a_overlap", ~a2a | (a.pp == 1) | (a.vpp > 1),
         lambda: "all-to-all overlap pairs one micro-batch's forward with another's backward: "
                 "with pp > 1 it needs the interleaved schedule (vpp > 1)"),
    ]
    if gpus is not None:
        total = a.tp * a.pp * a.dp * a.cp
        rules.append(("dp", total == gpus, lambda: f"tp*pp*dp*cp = {a.tp}*{a.pp}*{a.dp}*{a.cp}"
                                                   f" = {total} but the cluster has {gpus} GPUs"))
    return rules


def legal_mask(w: WorkloadSpec, a: PlanArrays, gpus: Any = None) -> np.ndarray:
    """Boolean mask, one element per plan of ``a``: True where every rule holds.

    ``gpus`` (int, array or None) adds the rule ``tp*pp*dp*cp == gpus``.
    """
    oks = [np.asarray(ok) for _, ok, _ in rules(w, a, gpus)]
    # each rule at its own shape (a TP rule spans the layouts only); the mask at their union
    mask = np.ones(np.broadcast_shapes(np.shape(a.tp), np.shape(a.micro_batch),
                                       *(ok.shape for ok in oks)), dtype=bool)
    for ok in oks:
        mask &= ok
    return mask


def raise_first_broken(w: WorkloadSpec, a: PlanArrays, gpus: int | None = None) -> None:
    """Raise :class:`InputError` (path ``plan.<field>``) for the first rule one plan of
    ``a`` (0-d arrays) breaks."""
    for path, ok, message in rules(w, a, gpus):
        if not bool(ok):
            raise InputError(f"plan.{path}", message())
