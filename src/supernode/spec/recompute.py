"""Activation recomputation: the modules a plan recomputes, as one bit mask.

Megatron-Core recomputes either whole layers (``--recompute-granularity full``, optionally
only ``--recompute-num-layers`` of each stage's layers) or chosen submodules
(``--recompute-granularity selective --recompute-modules ...``; its ``TransformerConfig.
recompute_modules``):

* ``core_attn``: the attention core (scores, softmax, context) - the default module;
* ``layernorm``: the input and pre-MLP norms (output-discarding checkpointing);
* ``mla_up_proj``: MLA's up-projections and rotary embedding (output-discarding);
* ``mlp``: a dense layer's whole MLP (normal checkpointing: only its input is kept);
* ``moe``: a MoE layer's whole MoE block, router, dispatch and combine included;
* ``moe_act``: the experts' activation function (output-discarding);
* ``shared_experts``: the shared experts' MLP.

A plan's ``recompute`` is one integer per candidate plan: the OR of the modules' bits, or
:data:`FULL` for whole layers. The named modes of the plan vocabulary are masks too:
``none`` (0), ``selective`` (``core_attn``, Megatron's default), ``modules`` (``core_attn``,
``layernorm``, ``moe_act``, ``mla_up_proj``: every output-discarding module plus the
attention core) and ``full``. A label joining module names with ``+``
(``layernorm+moe_act``) names any other set; :func:`recompute_label` writes the shortest
label of a mask.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from supernode.errors import InputError

#: Megatron-Core's recomputable submodules, in the order of their bits.
RECOMPUTE_MODULES: tuple[str, ...] = (
    "core_attn", "layernorm", "mla_up_proj", "mlp", "moe", "moe_act", "shared_experts")
RecomputeModule = Literal[
    "core_attn", "layernorm", "mla_up_proj", "mlp", "moe", "moe_act", "shared_experts"]
#: Bit of each module in a recompute mask.
MODULE_BITS: dict[str, int] = {name: 1 << i for i, name in enumerate(RECOMPUTE_MODULES)}
#: Whole layers recomputed from their input (``--recompute-granularity full``).
FULL = 1 << 7
#: The named modes of the plan vocabulary, as masks.
RECOMPUTE_MODES: dict[str, int] = {
    "none": 0,
    "selective": MODULE_BITS["core_attn"],
    "modules": (MODULE_BITS["core_attn"] | MODULE_BITS["layernorm"]
                | MODULE_BITS["moe_act"] | MODULE_BITS["mla_up_proj"]),
    "full": FULL,
}


def modules_mask(modules: Sequence[str], path: str = "recompute_modules") -> int:
    """The mask of a list of module names; :class:`InputError` at ``path`` for an unknown
    name (the allowed ones listed)."""
    mask = 0
    for name in modules:
        if name not in MODULE_BITS:
            raise InputError(path, f"unknown module {name!r}; allowed: "
                                   f"{', '.join(RECOMPUTE_MODULES)}")
        mask |= MODULE_BITS[name]
    return mask


def recompute_mask(label: str | int, path: str = "recompute") -> int:
    """The mask of a mode name (``none``, ``selective``, ``modules``, ``full``), a ``+``-joined
    module list (``layernorm+moe_act``) or a mask already."""
    if isinstance(label, int | np.integer) and not isinstance(label, bool):
        return int(label)
    text = str(label)
    if text in RECOMPUTE_MODES:
        return RECOMPUTE_MODES[text]
    parts = [p for p in text.split("+") if p]
    if not parts or any(p not in MODULE_BITS for p in parts):
        raise InputError(path, f"unknown recomputation {text!r}; allowed: "
                               f"{', '.join(RECOMPUTE_MODES)}, or modules joined with + "
                               f"({', '.join(RECOMPUTE_MODULES)})")
    return modules_mask(parts, path)


def recompute_label(mask: int) -> str:
    """The shortest label of a mask: a mode name where one matches, else the modules joined
    with ``+`` in :data:`RECOMPUTE_MODULES` order."""
    mask = int(mask)
    for name, value in RECOMPUTE_MODES.items():
        if value == mask:
            return name
    return "+".join(m for m in RECOMPUTE_MODULES if mask & MODULE_BITS[m])


def recomputes(mask: Any, module: str) -> np.ndarray:
    """Where ``mask`` (array) recomputes ``module`` (a :data:`RECOMPUTE_MODULES` name)."""
    return np.asarray((np.asarray(mask) & MODULE_BITS[module]) != 0)


def is_full(mask: Any) -> np.ndarray:
    """Where ``mask`` (array) recomputes whole layers."""
    return np.asarray((np.asarray(mask) & FULL) != 0)


def recompute_choices(moe: bool, mla: bool) -> tuple[str, ...]:
    """The recomputation labels a search tries when a plan leaves it open: none, the
    attention core (selective), every output-discarding module (modules) and full. For a
    MoE model the two sets Megatron-Core's MoE recipes use to fit long or wide runs take
    the place of ``modules``: the norms and the expert activation (with MLA's
    up-projections where there are any; ``modules`` less the attention core, which
    ``selective`` covers) and the norms with the whole MoE block - five sets, so the MoE
    search grows by a quarter, not a half."""
    if moe:
        return ("none", "selective",
                "layernorm+mla_up_proj+moe_act" if mla else "layernorm+moe_act",
                "layernorm+moe", "full")
    return ("none", "selective", "modules", "full")


def recompute_fields(label: str | int) -> dict[str, Any]:
    """The plan-document fields of a recompute label or mask: ``{"recompute": mode}`` for
    a named mode, ``{"recompute": "selective", "recompute_modules": [...]}`` otherwise."""
    mask = recompute_mask(label)
    name = recompute_label(mask)
    if name in RECOMPUTE_MODES:
        return {"recompute": name}
    return {"recompute": "selective", "recompute_modules": name.split("+")}
