"""The training software stack a workload runs on: framework defaults and overrides.

A workload's ``stack:`` block names a framework (``megatron-core``, ``nemo``,
``nemo-automodel``, ``torchtitan``, ``maxtext``, ``llm-foundry``, ``deepspeed``,
``other``) and may override each of its choices: how the element-wise work runs
(``fused`` / ``compiled`` / ``eager``), whether TP communication overlaps the GEMMs, the
MoE token dispatcher, the fused-attention kernel, the cross-entropy implementation, whether
the attention sees the key/value heads expanded to the query heads and which
context-parallel implementation runs.
What each framework runs by default, with its source, is data
(``data/stacks/frameworks.yaml``); :func:`resolve_stack` gives the choices in force and
says which came from the framework and which from the user.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import numpy as np
from pydantic import Field

from supernode.spec.base import StrictModel
from supernode.spec.loader import parse_text, validate_document

Framework = Literal["megatron-core", "nemo", "nemo-automodel", "torchtitan", "maxtext",
                    "llm-foundry", "deepspeed", "other"]
Elementwise = Literal["fused", "compiled", "eager"]
Dispatcher = Literal["alltoall", "deepep"]
AttentionKernel = Literal["te-cudnn", "fa3", "fa2"]
CrossEntropy = Literal["unfused", "native", "fused", "eager-fp32", "eager-bf16"]
AttentionKv = Literal["grouped", "expanded"]
ContextParallel = Literal["te", "torch"]

FRAMEWORK_NAMES: tuple[str, ...] = Framework.__args__  # type: ignore[attr-defined]


class StackSpec(StrictModel):
    """``stack:`` of a workload: a framework and optional overrides of its defaults."""

    framework: Framework | None = Field(
        None, description="Training framework; null: the default (megatron-core).")
    elementwise: Elementwise | None = Field(
        None, description="How element-wise kernels run: fused (Transformer Engine), "
                          "compiled (torch.compile / XLA) or eager; null: the framework's.")
    tp_comm_overlap: bool | None = Field(
        None, description="TP collectives overlapped with the GEMMs; null: the framework's.")
    moe_dispatcher: Dispatcher | None = Field(
        None, description="MoE token dispatcher: alltoall or deepep; null: the framework's "
                          "(or the faster for the plan where it has none).")
    attention_kernel: AttentionKernel | None = Field(
        None, description="Fused-attention kernel family; null: the framework's.")
    cross_entropy: CrossEntropy | None = Field(
        None, description="Loss implementation over the vocabulary: unfused (Megatron-Core's "
                          "vocab-parallel cross-entropy), native (its jit-fused variant), "
                          "fused (Transformer Engine's kernel, or compiled), eager-fp32 / "
                          "eager-bf16 (PyTorch's cross_entropy on upcast / BF16 logits); "
                          "null: the framework's.")
    attention_kv: AttentionKv | None = Field(
        None, description="Key/value heads the attention (and its context-parallel "
                          "exchange) sees: grouped (kv_heads, GQA as published) or expanded "
                          "(repeated to the query heads before the attention call); null: "
                          "the framework's.")
    context_parallel: ContextParallel | None = Field(
        None, description="Context-parallel attention implementation: te (Transformer "
                          "Engine's) or torch (PyTorch's experimental context_parallel: "
                          "one kernel call per round, partial outputs merged in eager fp32, "
                          "dK/dV passed round the ring in fp32); null: the framework's.")


class FrameworkDefaults(StrictModel):
    """One framework of ``data/stacks/frameworks.yaml``."""

    display: str = Field(min_length=1, description="Human-readable name.")
    elementwise: Elementwise = Field(description="Element-wise kernels.")
    tp_comm_overlap: bool = Field(description="TP communication overlap available and on.")
    moe_dispatcher: Dispatcher | None = Field(description="MoE dispatcher; null: per plan.")
    attention_kernel: AttentionKernel = Field(description="Fused-attention kernel family.")
    cross_entropy: CrossEntropy = Field(description="Cross-entropy implementation.")
    attention_kv: AttentionKv = Field("grouped", description="Key/value heads the "
                                      "attention sees (grouped: kv_heads).")
    context_parallel: ContextParallel = Field("te", description="Context-parallel "
                                              "attention implementation.")
    source: str = Field(min_length=1, description="Where these defaults come from.")


class StackTable(StrictModel):
    """``data/stacks/frameworks.yaml``."""

    format: Literal["supernode-stacks/1"] = Field(description="Format tag.")
    default: Framework = Field(description="The framework a workload without a stack runs.")
    frameworks: dict[Framework, FrameworkDefaults] = Field(description="Defaults by name.")


@lru_cache(maxsize=1)
def stack_table() -> StackTable:
    """The packaged framework defaults."""
    name = "frameworks.yaml"
    text = (resources.files("supernode") / "data" / "stacks" / name).read_text("utf-8")
    return validate_document(parse_text(text, source=name), StackTable, source=name)


@dataclass(frozen=True)
class Stack:
    """The stack choices in force (``moe_dispatcher`` None: chosen per plan).

    ``overridden`` names the fields the workload set itself; the others are the
    framework's defaults (``source``).
    """

    framework: str
    display: str
    elementwise: str
    tp_comm_overlap: bool
    moe_dispatcher: str | None
    attention_kernel: str
    cross_entropy: str
    source: str
    overridden: tuple[str, ...] = ()
    attention_kv: str = "grouped"
    context_parallel: str = "te"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready choices (``moe_dispatcher`` null: chosen per plan), which of them the
        workload set, and the defaults' source. ``attention_kv`` and ``context_parallel``
        are not among them (the result schemas' ``stack`` keeps the five choices it had;
        :meth:`describe` names them where they differ from the default)."""
        return {"framework": self.framework, "elementwise": self.elementwise,
                "tp_comm_overlap": self.tp_comm_overlap, "moe_dispatcher": self.moe_dispatcher,
                "attention_kernel": self.attention_kernel, "cross_entropy": self.cross_entropy,
                "overridden": list(self.overridden),
                "source": self.source}

    def describe(self) -> str:
        """One line: the framework and every choice (the attention's key/value heads and
        context-parallel implementation where they are not the default), overrides
        marked ``*``."""
        def mark(name: str, value: Any) -> str:
            text = {True: "on", False: "off", None: "per plan"}.get(value, value)
            return f"{name}={text}{'*' if name in self.overridden else ''}"

        # the two attention properties are named only where they differ from the default
        parts = [mark(n, getattr(self, n)) for n in _CHOICES
                 if n not in _QUIET or getattr(self, n) != _QUIET[n]]
        return f"{self.framework} ({', '.join(parts)})"


_CHOICES = ("elementwise", "tp_comm_overlap", "moe_dispatcher", "attention_kernel",
            "cross_entropy", "attention_kv", "context_parallel")
_QUIET = {"attention_kv": "grouped", "context_parallel": "te"}


def resolve_stack(spec: StackSpec | None) -> Stack:
    """The choices in force for ``spec``: the framework's defaults under its overrides."""
    table = stack_table()
    spec = spec or StackSpec()
    name = spec.framework or table.default
    base = table.frameworks[name]
    values = {k: getattr(base, k) for k in _CHOICES}
    overridden = tuple(k for k in _CHOICES if getattr(spec, k) is not None)
    values.update({k: getattr(spec, k) for k in overridden})
    return Stack(framework=name, display=base.display, source=base.source,
                 overridden=overridden, **values)


def tp_overlap_on(flag: Any, stack: Stack) -> Any:
    """Whether a plan overlaps TP communication: where the stack has the overlap
    (``tp_comm_overlap``), the plan's own ``overlap_tp_comm`` (null: on); never where the
    stack lacks it. Booleans or arrays of them (the estimate and the simulator ask here)."""
    on = True if flag is None else flag
    return np.logical_and(on, stack.tp_comm_overlap)
