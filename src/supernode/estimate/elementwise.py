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


#: HBM bytes per vocabulary entry and token of the loss, (forward, backward), by
#: implementation (the stack's ``cross_entropy``), each counted from its code path over
#: one TP rank's slice of BF16 logits:
#:
#: * ``unfused``: Megatron-Core ``tensor_parallel/cross_entropy.py``, one kernel per step:
#:   ``.float()`` (read 2, write 4), max (read 4), subtract in place (8), exp in place (8),
#:   sum (4), divide in place (8) = 38 forward; backward multiplies the stored softmax by
#:   the output gradient in place (8) and casts it back to BF16 (read 4, write 2) = 14.
#: * ``native``: Megatron-Core ``fusions/fused_cross_entropy.py``, the same steps in
#:   jit-fused kernels: upcast + max (6), subtract + exp + sum (8), divide (8) = 22
#:   forward; gradient and BF16 cast in one kernel (read 4, write 2) = 6 backward.
#: * ``fused``: one online-softmax pass that writes the gradient in place (Transformer
#:   Engine's ``parallel_cross_entropy``: read 2, then read 2 and write 2 = 6 forward;
#:   backward scales it in place, 4); torch.compile and XLA fuse the chain alike.
#: * ``eager-fp32``: ``F.cross_entropy`` on fp32-upcast logits: upcast (6), log-softmax
#:   (read 4, write 4) = 14 forward; backward writes the NLL gradient (4), runs the
#:   log-softmax backward (read 8, write 4) and casts to BF16 (6) = 22.
#: * ``eager-bf16``: the same on BF16 logits: log-softmax (read 2, write 2), 2 more for its
#:   reduction pass = 6 forward; NLL gradient (2) and log-softmax backward (read 4, write
#:   2) = 8 backward.
CROSS_ENTROPY_BYTES_PER_VOCAB: dict[str, tuple[float, float]] = {
    "unfused": (38.0, 14.0),
    "native": (22.0, 6.0),
    "fused": (6.0, 4.0),
    "eager-fp32": (14.0, 22.0),
    "eager-bf16": (6.0, 8.0),
}


def cross_entropy_bytes(w: WorkloadSpec) -> tuple[float, float]:
    """(forward, backward) HBM bytes per vocabulary entry and token of ``w``'s loss, by
    its stack's cross-entropy implementation (:data:`CROSS_ENTROPY_BYTES_PER_VOCAB`)."""
    return CROSS_ENTROPY_BYTES_PER_VOCAB[w.software.cross_entropy]


#: Of the NON_MLP_ELEMENTS_PER_HIDDEN, the two norms' reads and writes.
NORM_ELEMENTS_PER_HIDDEN = 4.0
