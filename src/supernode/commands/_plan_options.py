"""Inline plan options shared by the commands that take a plan (estimate, simulate)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from supernode.spec.plan import MAX_GLOBAL_BATCH

PlanFile = Annotated[Path | None, typer.Option("--plan", help="Plan file (YAML/JSON).")]
Tp = Annotated[int | None, typer.Option("--tp", help="Tensor-parallel size.")]
Pp = Annotated[int | None, typer.Option("--pp", help="Pipeline stages.")]
Dp = Annotated[int | None, typer.Option("--dp", help="Data-parallel size (default: fill).")]
Cp = Annotated[int | None, typer.Option("--cp", help="Context-parallel size.")]
Ep = Annotated[int | None, typer.Option("--ep", help="Expert-parallel size.")]
Vpp = Annotated[int | None, typer.Option("--vpp", help="Virtual stages (null: choose).")]
MicroBatch = Annotated[int | None, typer.Option("--micro-batch", help="Micro-batch size.")]
GlobalBatch = Annotated[int | None, typer.Option("--global-batch", min=1,
                                                 max=MAX_GLOBAL_BATCH,
                                                 help="Sequences per step.")]
Recompute = Annotated[str | None, typer.Option("--recompute", help="none|selective|full.")]
SequenceParallel = Annotated[bool | None, typer.Option(
    "--sequence-parallel/--no-sequence-parallel", help="Megatron SP.")]
ZeroStage = Annotated[int | None, typer.Option("--zero-stage", help="ZeRO stage 0-3.")]
DistributedOptimizer = Annotated[bool | None, typer.Option(
    "--distributed-optimizer/--no-distributed-optimizer", help="Megatron distributed "
    "optimizer (ZeRO-1).")]
Precision = Annotated[str | None, typer.Option("--precision", help="bf16|fp16|fp8.")]
