"""``supernode estimate``: step time, MFU, breakdown and memory of one plan on one cluster."""

from __future__ import annotations

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster_spec
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import (
    A2aOverlap,
    CalibrationFile,
    Cp,
    DistributedOptimizer,
    Dp,
    Ep,
    Etp,
    GlobalBatch,
    Gpus,
    GradFp32,
    MicroBatch,
    OverlapDp,
    OverlapPp,
    OverlapTp,
    PlanFile,
    Pp,
    PpLayout,
    Precision,
    RankOrder,
    Recompute,
    SequenceParallel,
    Tp,
    Vpp,
    ZeroStage,
    calibrated,
    plan_flags,
)
from supernode.errors import InputError
from supernode.estimate.model import COMM_SHARE_THRESHOLD, Estimate, estimate_plan
from supernode.estimate.system import job_system
from supernode.spec.plan import plan_from_data
from supernode.spec.planfile import plan_data
from supernode.textsafe import rich_safe
from supernode.workload.presets import load_workload


def _table(result: Estimate) -> None:
    summary = Table(title="step", show_header=False)
    summary.add_row("step time", f"{result.step_time_s:.4g} s")
    summary.add_row("tokens/s", f"{result.tokens_per_s:,.0f}")
    summary.add_row("MFU / HFU", f"{result.mfu:.1%} / {result.hfu:.1%}")
    summary.add_row("MFU, full s x s", f"{result.mfu_published_convention:.1%} (as published: "
                                       f"Megatron, PaLM)")
    summary.add_row("chosen", rich_safe(", ".join(f"{k}={v}" for k, v in result.chosen.items()),
                                        None))
    stdout.print(summary)
    for note in result.notes:
        stdout.print(f"note: {rich_safe(note)}", highlight=False)
    parts = Table(title="time per step")
    for col in ("part", "seconds", "share"):
        parts.add_column(col, justify="right" if col != "part" else "left")
    for key, seconds in result.breakdown_s.items():
        parts.add_row(key, f"{seconds:.4g}", f"{seconds / result.step_time_s:.1%}")
    stdout.print(parts)
    comm = Table(title=f"communication share by tier (seed line {COMM_SHARE_THRESHOLD:.0%})")
    comm.add_column("tier")
    comm.add_column("share", justify="right")
    for tier, share in result.comm_share_by_tier.items():
        flag = " [bold red]over[/]" if share > COMM_SHARE_THRESHOLD else ""
        comm.add_row(tier, f"{share:.1%}{flag}")
    stdout.print(comm)
    memory = Table(title="memory per GPU (GB)")
    memory.add_column("component")
    memory.add_column("GB", justify="right")
    for key, value in result.memory_per_gpu_bytes.items():
        memory.add_row(key, f"{value / 1e9:.2f}")
    verdict = "fits" if result.fits_in_memory else "[bold red]does not fit[/]"
    memory.add_row("usable (capacity less 5% reserve)",
                   f"{result.memory_usable_bytes / 1e9:.2f} of "
                   f"{result.memory_capacity_bytes / 1e9:.2f} ({verdict})")
    stdout.print(memory)


@app.command("estimate")
@handles_input_errors
@calibrated
def estimate_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    workload: str = typer.Option(..., "--workload", help="Workload file or preset name."),
    plan: PlanFile = None,
    gpus: Gpus = None,
    tp: Tp = None,
    pp: Pp = None,
    dp: Dp = None,
    cp: Cp = None,
    ep: Ep = None,
    etp: Etp = None,
    vpp: Vpp = None,
    micro_batch: MicroBatch = None,
    global_batch: GlobalBatch = None,
    recompute: Recompute = None,
    sequence_parallel: SequenceParallel = None,
    zero_stage: ZeroStage = None,
    distributed_optimizer: DistributedOptimizer = None,
    grad_fp32: GradFp32 = None,
    a2a_overlap: A2aOverlap = None,
    pp_layout: PpLayout = None,
    rank_order: RankOrder = None,
    overlap_tp: OverlapTp = None,
    overlap_dp: OverlapDp = None,
    overlap_pp: OverlapPp = None,
    precision: Precision = None,
    calibration: CalibrationFile = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Estimate one training step: time breakdown, tokens/s, MFU, memory per GPU."""
    spec = load_workload(workload)
    flags = plan_flags(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, etp=etp, vpp=vpp,
                       micro_batch=micro_batch, global_batch=global_batch,
                       recompute=recompute, sequence_parallel=sequence_parallel,
                       zero_stage=zero_stage, distributed_optimizer=distributed_optimizer,
                       grad_fp32=grad_fp32, a2a_overlap=a2a_overlap, pp_layout=pp_layout,
                       rank_order=rank_order, overlap_tp=overlap_tp, overlap_dp=overlap_dp,
                       overlap_pp=overlap_pp, precision=precision)
    cluster_spec = load_cluster_spec(cluster)
    precision_name = flags.get("precision") or "bf16"
    system = job_system(cluster_spec, gpus, precision_name)
    data = plan_data(plan, flags, system.gpus, "the job")
    if "global_batch_sequences" not in data:
        raise InputError("plan.global_batch_sequences",
                         "required: give --global-batch or global_batch_sequences in the plan")
    parsed = plan_from_data(data, source=str(plan) if plan else "plan")
    if parsed.precision != precision_name:
        system = job_system(cluster_spec, gpus, parsed.precision)
    result = estimate_plan(spec, parsed, system)
    if json_output:
        print_json(result.to_dict())
    else:
        _table(result)
