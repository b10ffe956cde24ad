"""``supernode estimate``: step time, MFU, breakdown and memory of one plan on one cluster."""

from __future__ import annotations

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster_spec
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import (
    CalibrationFile,
    Framework,
    PlanOptions,
    calibrated,
    plan_options,
)
from supernode.estimate.interval import interval_fields
from supernode.estimate.model import (
    COMM_SHARE_THRESHOLD,
    Estimate,
    describe_stack,
    estimate_plan,
)
from supernode.estimate.system import SystemModel, job_system
from supernode.spec.plan import plan_from_data
from supernode.spec.planfile import plan_data
from supernode.textsafe import rich_safe
from supernode.workload.batch import with_default_batch
from supernode.workload.presets import load_workload, with_framework


def _capped(system: SystemModel, power_limit_w: float | None) -> SystemModel:
    """The system at ``--power-limit-w`` when given (else the cluster file's cap)."""
    return system if power_limit_w is None else system.at_power_limit(power_limit_w,
                                                                      "--power-limit-w")


def _table(result: Estimate) -> None:
    summary = Table(title="step", show_header=False)
    bands = interval_fields(result.step_time_s, result.tokens_per_s, result.mfu)
    level = bands["interval_level"]
    (t_lo, t_hi), (r_lo, r_hi), (m_lo, m_hi) = (bands[f"{k}_interval{u}"] for k, u in
                                                (("step_time", "_s"), ("tokens_per_s", ""),
                                                 ("mfu", "")))
    summary.add_row("step time", f"{result.step_time_s:.4g} s ({level:.0%}: "
                                 f"{t_lo:.3g} – {t_hi:.3g} s)")
    summary.add_row("tokens/s", f"{result.tokens_per_s:,.0f} ({level:.0%}: {r_lo:,.0f} – "
                                f"{r_hi:,.0f})")
    summary.add_row("MFU / HFU", f"{result.mfu:.1%} / {result.hfu:.1%} (MFU {level:.0%}: "
                                 f"{m_lo:.1%} – {m_hi:.1%})")
    summary.add_row("MFU, full s x s", f"{result.mfu_published_convention:.1%} (as published: "
                                       f"Megatron, PaLM)")
    summary.add_row("stack", rich_safe(describe_stack(result.stack), None))
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
    _power_table(result)


def _power_table(result: Estimate) -> None:
    p = result.power
    table = Table(title="power per GPU (board)", show_header=False)
    cap = (f"{p['power_limit_w']:,.0f} W (TDP {p['tdp_w']:,.0f} W)" if p["capped"]
           else f"none: TDP {p['tdp_w']:,.0f} W ({p['tdp_source']})")
    table.add_row("power cap", cap)
    table.add_row("sustained SM clock", f"{p['sustained_clock_ratio']:.1%} of full")
    table.add_row("busy / waiting", f"{p['busy_power_w']:,.0f} W / {p['waiting_power_w']:,.0f} W")
    table.add_row("average over the step", f"{p['average_power_w']:,.0f} W")
    table.add_row("GPU energy per token", f"{p['energy_per_token_j']:.4g} J")
    stdout.print(table)


@app.command("estimate")
@handles_input_errors
@calibrated
@plan_options()
def estimate_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    workload: str = typer.Option(..., "--workload", help="Workload file or preset name."),
    options: PlanOptions = PlanOptions(),
    calibration: CalibrationFile = None,
    framework: Framework = None,
    power_limit_w: float | None = typer.Option(
        None, "--power-limit-w", help="Board power cap per accelerator in W (nvidia-smi "
        "-pl); default: the cluster file's, else TDP. Below TDP the SM clock falls "
        "(DVFS curve, docs/estimate.md)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Estimate one training step: time breakdown, tokens/s, MFU, memory per GPU, board
    power and energy per token (at a power cap with --power-limit-w)."""
    spec = with_framework(load_workload(workload), framework)
    flags, plan, gpus = options.fields, options.plan, options.gpus
    cluster_spec = load_cluster_spec(cluster)
    precision_name = flags.get("precision") or "bf16"
    system = _capped(job_system(cluster_spec, gpus, precision_name), power_limit_w)
    data = with_default_batch(plan_data(plan, flags, system.gpus, "the job"), spec)
    parsed = plan_from_data(data, source=str(plan) if plan else "plan")
    if parsed.precision != precision_name:
        system = _capped(job_system(cluster_spec, gpus, parsed.precision), power_limit_w)
    result = estimate_plan(spec, parsed, system)
    if json_output:
        print_json(result.to_dict())
    else:
        _table(result)
