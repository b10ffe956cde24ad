"""Element-wise HBM traffic by software stack: hand-fused, compiled and eager kernels.

The step model counts the bytes the element-wise work between GEMMs streams (norms,
activations, rotary embedding, residuals) as Megatron-Core's hand-fused Transformer
Engine kernels move them (:mod:`supernode.estimate.compute`); compiled stacks
(torch.compile, XLA) fuse the same chains into one kernel each and move the same. An eager
stack runs every operator as its own kernel; :func:`elementwise_cost` gives the multiples
of the fused traffic its norms, gated activations and rotary embedding move.
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.spec.workload import WorkloadSpec


@dataclass(frozen=True)
class ElementwiseCost:
    """HBM traffic of the element-wise families under a stack, as multiples of the
    hand-fused kernels' (``fused``: 1 each)."""

    norm: float = 1.0
    activation: float = 1.0
    rotary: float = 1.0


#: Eager PyTorch, one kernel per operator, BF16 activations (2 B), as the reference
#: modules are written (Hugging Face transformers ``LlamaRMSNorm``, ``LlamaMLP``,
#: ``apply_rotary_pos_emb``): RMSNorm upcasts to fp32, squares, reduces, scales, casts back
#: and multiplies by the weight, 36 B per element against the fused kernel's 4 B (read +
#: write) = 9x (``torch.nn.LayerNorm`` is one native kernel: 1x); SwiGLU runs SiLU then
#: the product, 10 B against 6 B = 5/3 (a plain GeLU MLP: 1x); rotary multiplies by cos,
#: builds ``rotate_half`` (two slices, a negation, a concatenation), multiplies by sin and
#: adds, 20 B against 4 B = 5x. torch.compile / XLA fuse each chain into one kernel: 1x.
EAGER_RMSNORM_RATIO = 9.0
EAGER_SWIGLU_RATIO = 10.0 / 6.0
EAGER_ROTARY_RATIO = 5.0


def elementwise_cost(w: WorkloadSpec) -> ElementwiseCost:
    """The element-wise traffic multipliers of ``w``'s stack (see :data:`EAGER_RMSNORM_RATIO`)."""
    if w.software.elementwise != "eager":
        return ElementwiseCost()
    return ElementwiseCost(norm=EAGER_RMSNORM_RATIO if w.norm == "rmsnorm" else 1.0,
                           activation=EAGER_SWIGLU_RATIO if w.gated_mlp else 1.0,
                           rotary=EAGER_ROTARY_RATIO)


#: Of the NON_MLP_ELEMENTS_PER_HIDDEN, the two norms' reads and writes.
NORM_ELEMENTS_PER_HIDDEN = 4.0
