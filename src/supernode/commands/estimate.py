"""``supernode estimate``: step time, MFU, breakdown and memory of one plan on one cluster."""

from __future__ import annotations

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import (
    Cp,
    DistributedOptimizer,
    Dp,
    Ep,
    GlobalBatch,
    MicroBatch,
    PlanFile,
    Pp,
    Precision,
    Recompute,
    SequenceParallel,
    Tp,
    Vpp,
    ZeroStage,
)
from supernode.errors import InputError
from supernode.estimate.model import COMM_SHARE_THRESHOLD, Estimate, estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.spec.clusterfile import load_cluster
from supernode.spec.plan import plan_from_data
from supernode.spec.planfile import INLINE_PLAN_FIELDS, plan_data
from supernode.textsafe import rich_safe
from supernode.workload.presets import load_workload


def _table(result: Estimate) -> None:
    summary = Table(title="step", show_header=False)
    summary.add_row("step time", f"{result.step_time_s:.4g} s")
    summary.add_row("tokens/s", f"{result.tokens_per_s:,.0f}")
    summary.add_row("MFU / HFU", f"{result.mfu:.1%} / {result.hfu:.1%}")
    summary.add_row("chosen", rich_safe(", ".join(f"{k}={v}" for k, v in result.chosen.items()),
                                        None))
    stdout.print(summary)
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
def estimate_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    workload: str = typer.Option(..., "--workload", help="Workload file or preset name."),
    plan: PlanFile = None,
    tp: Tp = None,
    pp: Pp = None,
    dp: Dp = None,
    cp: Cp = None,
    ep: Ep = None,
    vpp: Vpp = None,
    micro_batch: MicroBatch = None,
    global_batch: GlobalBatch = None,
    recompute: Recompute = None,
    sequence_parallel: SequenceParallel = None,
    zero_stage: ZeroStage = None,
    distributed_optimizer: DistributedOptimizer = None,
    precision: Precision = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Estimate one training step: time breakdown, tokens/s, MFU, memory per GPU."""
    loaded = load_cluster(cluster)
    spec = load_workload(workload)
    flags = dict(zip(INLINE_PLAN_FIELDS, (tp, pp, dp, cp, ep, vpp, micro_batch, global_batch,
                                          recompute,
                              sequence_parallel, zero_stage, distributed_optimizer, precision),
                     strict=True))
    data = plan_data(plan, flags, loaded.accelerators)
    if "global_batch_sequences" not in data:
        raise InputError("plan.global_batch_sequences",
                         "required: give --global-batch or global_batch_sequences in the plan")
    parsed = plan_from_data(data, source=str(plan) if plan else "plan")
    system = system_from_cluster(loaded, parsed.precision)
    result = estimate_plan(spec, parsed, system)
    if json_output:
        print_json(result.to_dict())
    else:
        _table(result)
