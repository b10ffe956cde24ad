"""``results.json`` -> ``plans.stack``: the software stack the planner assumed
(:meth:`supernode.spec.stack.Stack.to_dict`, docs/workload.md)."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field


class SoftwareStack(ResultModel):
    """The framework a search assumed and each of its choices."""

    framework: str = field("Training framework (megatron-core by default).")
    elementwise: str = field("Element-wise kernels: fused, compiled or eager.")
    tp_comm_overlap: bool = field("True when the stack overlaps TP collectives with GEMMs.")
    moe_dispatcher: str | None = field("alltoall or deepep; null: chosen per plan.")
    attention_kernel: str = field("Fused-attention kernel family.")
    cross_entropy: str = field("Loss implementation: unfused, native, fused, eager-fp32 or "
                               "eager-bf16 (its HBM traffic: docs/estimate.md).")
    overridden: list[str] = field("Choices the workload set itself (the rest: defaults).")
    source: str = field("Where the framework's defaults come from.")
