"""One plan vocabulary for every command that takes a plan (estimate, plan, simulate,
reliability).

Each option is one :class:`~supernode.spec.plan.ParallelPlan` field (``--global-batch``
is ``global_batch_sequences``) and means the same everywhere: a value given fixes the
knob, a knob left out is chosen (``estimate``, ``simulate``) or searched (``plan``).
``--gpus`` is the job's size: the cluster grows by whole scalable units when it is
smaller, and a smaller job uses the first GPUs. A plan without ``--global-batch`` takes the
one default of every command (4 Mi tokens:
:func:`supernode.workload.batch.with_default_batch`). The options are declared once, in
:data:`PLAN_OPTIONS`; a command takes the ones it needs with :func:`plan_options` and
receives them parsed once, as :class:`PlanOptions`.

``--calibration FILE`` (:data:`CalibrationFile`, with the :func:`calibrated` decorator)
is the same on every command that costs collectives (estimate, plan, simulate, facility,
reliability, serve, fit, design, check, compare): a ``supernode calibrate`` file whose fitted
efficiencies are in force for the whole command (:func:`recorded_calibration` is how
results record it).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar, get_args

import typer

from supernode.bounds import MAX_WORKERS
from supernode.spec.plan import MAX_GLOBAL_BATCH
from supernode.spec.stack import FRAMEWORK_NAMES

PlanFile = Annotated[Path | None, typer.Option("--plan", help="Plan file (YAML/JSON).")]
Gpus = Annotated[int | None, typer.Option("--gpus", min=1, help="GPUs the job uses (the "
                                          "cluster grows by whole units if smaller).")]
#: Most processes ``--workers`` may ask for (every command's: :mod:`supernode.bounds`;
#: the range is applied to every ``--workers`` by ``commands/_option_limits.py``).
MAX_SEARCH_WORKERS = MAX_WORKERS
SearchWorkers = Annotated[int | None, typer.Option(
    "--workers",
    help="Processes scoring each plan search (default: one per 250k plans, up to 4 and "
         "the CPU cores). Same results for any number.")]
Tp = Annotated[int | None, typer.Option("--tp", help="Tensor-parallel size.")]
Pp = Annotated[int | None, typer.Option("--pp", help="Pipeline stages.")]
Dp = Annotated[int | None, typer.Option("--dp", help="Data-parallel size (default: fill).")]
Cp = Annotated[int | None, typer.Option("--cp", help="Context-parallel size.")]
CpCommType = Annotated[str | None, typer.Option(
    "--cp-comm-type", help="Context-parallel exchange: p2p (ring pass-KV, overlapped), "
    "all_gather, a2a (Ulysses), a2a+p2p (Megatron-Core --cp-comm-type); default: p2p.")]
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
RecomputeModules = Annotated[str | None, typer.Option(
    "--recompute-modules", help="With selective recomputation, the modules recomputed, "
    "comma-separated: core_attn, layernorm, mla_up_proj, mlp, moe, moe_act, shared_experts "
    "(Megatron-Core --recompute-modules).")]
RecomputeNumLayers = Annotated[int | None, typer.Option(
    "--recompute-num-layers", help="With full recomputation, the layers of each virtual "
    "stage recomputed (default: all).")]
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
Framework = Annotated[str | None, typer.Option(
    "--framework", help="Software stack the job runs on (replaces the workload's "
    "stack.framework, keeps its overrides): " + "|".join(FRAMEWORK_NAMES) + ".")]
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

P = ParamSpec("P")
R = TypeVar("R")


def calibrated(command: Callable[P, R]) -> Callable[P, R]:
    """Run ``command`` with its ``calibration`` file (``--calibration``) in force; the
    command still receives the path (to record it). Bad files are one ``error:`` line."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        path = kwargs.get("calibration")
        if path is None:  # the packaged tables: nothing to load
            return command(*args, **kwargs)
        from supernode.measurements.calfile import calibration_in_force

        assert isinstance(path, str | Path)  # what the --calibration option gives
        with calibration_in_force(path):
            return command(*args, **kwargs)

    return run

def recorded_calibration(path: Path | None) -> dict[str, Any] | None:
    """The ``--calibration`` file in force as results record it (``inputs.calibration``):
    its path, hash, cluster, date and what it fitted; None without one (the calibration
    module, and scipy's fitting behind it, are then not imported: half a second)."""
    if path is None:
        return None
    from supernode.measurements.calfile import calibration_record, read_calibration

    return calibration_record(read_calibration(path), path)


def with_help(option: Any, text: str) -> Any:
    """The ``typer.Option`` of ``option`` (one of this module's ``Annotated`` options) with
    the help ``text`` of one command, its name and bounds unchanged; a command annotates
    its parameter ``Annotated[<the option's type>, with_help(option, text)]``."""
    info = copy.copy(get_args(option)[1])
    info.help = text
    return info


#: Every plan option, in the order commands list them: keyword -> option.
PLAN_OPTIONS: dict[str, Any] = {
    "plan": PlanFile, "gpus": Gpus, "tp": Tp, "pp": Pp, "dp": Dp, "cp": Cp,
    "cp_comm_type": CpCommType, "ep": Ep,
    "etp": Etp, "vpp": Vpp, "micro_batch": MicroBatch, "global_batch": GlobalBatch,
    "recompute": Recompute, "recompute_modules": RecomputeModules,
    "recompute_num_layers": RecomputeNumLayers, "sequence_parallel": SequenceParallel,
    "zero_stage": ZeroStage,
    "distributed_optimizer": DistributedOptimizer, "grad_fp32": GradFp32,
    "a2a_overlap": A2aOverlap, "pp_layout": PpLayout, "rank_order": RankOrder,
    "overlap_tp": OverlapTp, "overlap_dp": OverlapDp, "overlap_pp": OverlapPp,
    "precision": Precision,
}
#: The options that are plan fields (all but ``--plan`` and ``--gpus``).
PLAN_FIELD_OPTIONS = tuple(k for k in PLAN_OPTIONS if k not in ("plan", "gpus"))

#: Command-line option name (Python keyword) -> plan field, where they differ.
_FIELD_OF = {"global_batch": "global_batch_sequences", "overlap_tp": "overlap_tp_comm",
             "overlap_dp": "overlap_dp_comm", "overlap_pp": "overlap_pp_comm",
             "grad_fp32": "grad_reduce_in_fp32", "a2a_overlap": "moe_a2a_overlap"}


def plan_flags(**values: Any) -> dict[str, Any]:
    """Plan fields from the inline options (keywords as the commands name them); options
    left out (None) are omitted, so a plan file's values stand."""
    out = {_FIELD_OF.get(k, k): v for k, v in values.items() if v is not None}
    if isinstance(out.get("recompute_modules"), str):  # comma-separated on the command line
        out["recompute_modules"] = [m.strip() for m in out["recompute_modules"].split(",")
                                    if m.strip()]
    return out


@dataclass(frozen=True)
class PlanOptions:
    """The plan options a command was given (:func:`plan_options`): ``fields``, the plan
    fields set inline (:func:`plan_flags`: options left out are absent); ``plan``, the
    ``--plan`` file; ``gpus``, the job's GPUs (``--gpus``)."""

    fields: dict[str, Any] = field(default_factory=dict)
    plan: Path | None = None
    gpus: int | None = None


def plan_options(names: Sequence[str] = tuple(PLAN_OPTIONS)
                 ) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Give a command the plan options ``names`` (keys of :data:`PLAN_OPTIONS`, listed in
    that order) in place of its ``options`` parameter (declared ``options: PlanOptions =
    PlanOptions()``), which then receives them as :class:`PlanOptions`. Apply it next to
    the function (below the other decorators)."""
    unknown = set(names) - set(PLAN_OPTIONS)
    if unknown:
        raise ValueError(f"not plan options: {sorted(unknown)}")
    chosen = [k for k in PLAN_OPTIONS if k in names]

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command, eval_str=True)
        params = list(signature.parameters.values())
        at = [p.name for p in params].index("options")
        added = [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                                   annotation=PLAN_OPTIONS[k]) for k in chosen]

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> R:
            given = {k: kwargs.pop(k, None) for k in chosen}
            options = PlanOptions(plan_flags(**{k: v for k, v in given.items()
                                                if k in PLAN_FIELD_OPTIONS}),
                                  given.get("plan"), given.get("gpus"))
            return command(*args, options=options, **kwargs)

        # what typer reads; functions do not declare __signature__ to the checker
        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*params[:at], *added, *params[at + 1:]])
        return run

    return decorate
