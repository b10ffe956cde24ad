"""One plan vocabulary for every command that takes a plan (plan, estimate, simulate).

Each option is one :class:`~supernode.spec.plan.ParallelPlan` field (``--global-batch``
is ``global_batch_sequences``) and means the same everywhere: a value given fixes the
knob, a knob left out is chosen (``estimate``, ``simulate``) or searched (``plan``).
``--gpus`` is the job's size: the cluster grows by whole scalable units when it is
smaller, and a smaller job uses the first GPUs.

``--calibration FILE`` (:data:`CalibrationFile`, with the :func:`calibrated` decorator)
is the same on every command that costs collectives (estimate, plan, simulate, design,
compare): a ``supernode calibrate`` file whose fitted efficiencies are in force for the
whole command.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from supernode.spec.plan import MAX_GLOBAL_BATCH

PlanFile = Annotated[Path | None, typer.Option("--plan", help="Plan file (YAML/JSON).")]
Gpus = Annotated[int | None, typer.Option("--gpus", min=1, help="GPUs the job uses (the "
                                          "cluster grows by whole units if smaller).")]
#: Most processes ``--workers`` may ask for.
MAX_SEARCH_WORKERS = 64
SearchWorkers = Annotated[int | None, typer.Option(
    "--workers", min=1, max=MAX_SEARCH_WORKERS,
    help="Processes scoring each plan search (default: one per 250k plans, up to 4 and "
         "the CPU cores). Same results for any number.")]
Tp = Annotated[int | None, typer.Option("--tp", help="Tensor-parallel size.")]
Pp = Annotated[int | None, typer.Option("--pp", help="Pipeline stages.")]
Dp = Annotated[int | None, typer.Option("--dp", help="Data-parallel size (default: fill).")]
Cp = Annotated[int | None, typer.Option("--cp", help="Context-parallel size.")]
Ep = Annotated[int | None, typer.Option("--ep", help="Expert-parallel size.")]
Etp = Annotated[int | None, typer.Option("--etp", help="Expert tensor-parallel size "
                                         "(default: tp).")]
Vpp = Annotated[int | None, typer.Option("--vpp", help="Virtual stages (null: choose).")]
MicroBatch = Annotated[int | None, typer.Option("--micro-batch", help="Micro-batch size.")]
GlobalBatch = Annotated[int | None, typer.Option("--global-batch", min=1,
                                                 max=MAX_GLOBAL_BATCH,
                                                 help="Sequences per step.")]
Recompute = Annotated[str | None, typer.Option("--recompute", help="none|selective|modules|"
                                               "full.")]
SequenceParallel = Annotated[bool | None, typer.Option(
    "--sequence-parallel/--no-sequence-parallel", help="Megatron SP.")]
ZeroStage = Annotated[int | None, typer.Option("--zero-stage", help="ZeRO stage 0-3 "
                                               "(3 = FSDP); default: choose.")]
DistributedOptimizer = Annotated[bool | None, typer.Option(
    "--distributed-optimizer/--no-distributed-optimizer", help="Megatron distributed "
    "optimizer (ZeRO-1); default: choose the ZeRO stage.")]
GradFp32 = Annotated[bool | None, typer.Option(
    "--grad-reduce-in-fp32/--no-grad-reduce-in-fp32", help="fp32 gradients (default: "
    "16-bit).")]
A2aOverlap = Annotated[bool | None, typer.Option(
    "--moe-a2a-overlap/--no-moe-a2a-overlap", help="Overlap expert all-to-all with "
    "another micro-batch's compute; default: choose.")]
PpLayout = Annotated[str | None, typer.Option("--pp-layout", help="uniform|"
                                              "embedding_and_loss_as_layers.")]
RankOrder = Annotated[str | None, typer.Option("--rank-order", help="Rank order, innermost "
                                               "first, e.g. tp-cp-dp-pp (Megatron's).")]
OverlapTp = Annotated[bool | None, typer.Option("--overlap-tp/--no-overlap-tp",
                                                help="TP comm overlap (default on).")]
OverlapDp = Annotated[bool | None, typer.Option("--overlap-dp/--no-overlap-dp",
                                                help="DP comm overlap (default on).")]
OverlapPp = Annotated[bool | None, typer.Option("--overlap-pp/--no-overlap-pp",
                                                help="PP comm overlap (default on).")]
Precision = Annotated[str | None, typer.Option("--precision", help="bf16|fp16|fp8.")]
CalibrationFile = Annotated[Path | None, typer.Option(
    "--calibration", help="Calibration file (supernode calibrate): its fitted collective "
    "efficiencies replace the packaged ones.")]

F = TypeVar("F", bound=Callable[..., Any])


def calibrated(command: F) -> F:
    """Run ``command`` with its ``calibration`` file (``--calibration``) in force; the
    command still receives the path (to record it). Bad files are one ``error:`` line."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("calibration") is None:  # the packaged tables: nothing to load
            return command(*args, **kwargs)
        from supernode.measurements.calfile import calibration_in_force

        with calibration_in_force(kwargs.get("calibration")):
            return command(*args, **kwargs)

    return run  # type: ignore[return-value]

#: Command-line option name (Python keyword) -> plan field, where they differ.
_FIELD_OF = {"global_batch": "global_batch_sequences", "overlap_tp": "overlap_tp_comm",
             "overlap_dp": "overlap_dp_comm", "overlap_pp": "overlap_pp_comm",
             "grad_fp32": "grad_reduce_in_fp32", "a2a_overlap": "moe_a2a_overlap"}


def plan_flags(**values: Any) -> dict[str, Any]:
    """Plan fields from the inline options (keywords as the commands name them); options
    left out (None) are omitted, so a plan file's values stand."""
    return {_FIELD_OF.get(k, k): v for k, v in values.items() if v is not None}
