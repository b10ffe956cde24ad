"""``supernode plan``: the best ways to run a workload on a cluster, ranked and explained."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import (
    PLAN_FIELD_OPTIONS,
    CalibrationFile,
    Framework,
    PlanOptions,
    SearchWorkers,
    calibrated,
    plan_options,
)
from supernode.planner.build import MAX_GLOBAL_BATCH, build_target
from supernode.planner.detail import PlanDetail
from supernode.planner.report import PlanReport, plan_job
from supernode.planner.search import OBJECTIVES
from supernode.planner.space import space_from_plan_fields
from supernode.planner.straddle import STRADDLE_MARGIN, check_margin
from supernode.spec.loader import read_document
from supernode.spec.plan import plan_from_data
from supernode.textsafe import rich_safe
from supernode.workload.presets import load_workload, with_framework

GB = 1e9


def plans_table(report: PlanReport, title: str = "plans") -> Table:
    """Ranked plans: sizes, knobs, step time, throughput, MFU, memory, comm share."""
    table = Table(title=title)
    for col in ("#", "tp", "pp", "dp", "cp", "ep", "order", "vpp", "mb", "recomp", "SP",
                "ZeRO", "step s", "tokens/s", "MFU", "GB/GPU", "comm", "straddles"):
        table.add_column(col, justify="left" if col in ("order", "recomp") else "right")
    for i, d in enumerate(report.plans, 1):
        x, k = d.layout, d.knobs
        zero = "1+DO" if k["distributed_optimizer"] else str(k["zero_stage"])
        mem = f"{d.memory_per_gpu_bytes['total'] / GB:.1f}"
        if not d.fits_in_memory:
            mem = f"[bold red]{mem}![/]"
        share = d.comm_compute["share"]
        flag = f"[bold red]{share:.0%}[/]" if d.comm_compute["over_threshold"] else f"{share:.0%}"
        table.add_row(str(i), str(x.tp), str(x.pp), str(x.dp), str(x.cp), str(x.ep),
                      x.order_name, str(k["vpp"]), str(k["micro_batch"]), k["recompute"],
                      "on" if k["sequence_parallel"] else "off", zero,
                      f"{d.step_time_s:.4g}", f"{d.tokens_per_s:,.0f}", f"{d.mfu:.1%}", mem,
                      flag, straddle_flag(d.straddles))
    return table


def straddle_flag(straddles: tuple[tuple[str, int], ...]) -> str:
    """The plans table's straddle cell: ``EP16`` per straddling group, ``-`` for none."""
    return " ".join(f"{d.upper()}{n}" for d, n in straddles) or "-"


def comm_compute_table(report: PlanReport) -> Table:
    """Seed 000 §5.2: compute vs communication per card and step, 20% line flagged."""
    table = Table(title="communication vs computation per card and step "
                        "(seed 000 §5.2; over 20% efficiency collapses)")
    for col in ("#", "compute s", "comm issued s", "comm exposed s", "comm/compute", "share",
                "20% line", "by tier"):
        table.add_column(col, justify="right" if col != "by tier" else "left")
    for row in report.comm_compute_table():
        tiers = ", ".join(f"{t} {v['share']:.0%}" for t, v in row["by_tier"].items())
        line = "[bold red]over[/]" if row["over_threshold"] else "under"
        table.add_row(str(row["rank"]), f"{row['compute_s']:.4g}", f"{row['comm_issued_s']:.4g}",
                      f"{row['comm_exposed_s']:.4g}", f"{row['comm_to_compute']:.2f}",
                      f"{row['share']:.1%}", line, tiers)
    return table


def detail_tables(d: PlanDetail) -> list[Table]:
    """Breakdown and placement of one plan."""
    parts = Table(title="top plan: time per step")
    for col in ("part", "seconds", "share"):
        parts.add_column(col, justify="left" if col == "part" else "right")
    for key, seconds in d.breakdown_s.items():
        parts.add_row(key, f"{seconds:.4g}", f"{seconds / d.step_time_s:.1%}")
    where = Table(title="top plan: where each group runs")
    for col in ("group", "GPUs", "tier", "GB/s per GPU", "rail-aligned", "issued s"):
        where.add_column(col, justify="left" if col in ("group", "tier") else "right")
    for dim, p in d.placement.items():
        where.add_row(dim, str(p["group_size"]), p["tier"],
                      f"{p['bandwidth_bytes_per_s'] / GB:.0f}",
                      "yes" if p["rail_aligned"] else "no", f"{p['issued_s']:.4g}")
    return [parts, where]


def print_report(report: PlanReport) -> None:
    """Human-readable report: notes, plans, comm-compute table, top plan, reasons, stats."""
    d = report.to_dict()
    for note in d["notes"]:
        stdout.print(f"[bold]note:[/] {rich_safe(note, None)}", highlight=False)
    stdout.print(f"stack: {rich_safe(report.outcome.target.workload.software.describe(), None)}",
                 highlight=False)
    stdout.print(plans_table(report, title=f"{rich_safe(d['workload'])} on {d['gpus']:,} x "
                                           f"{rich_safe(d['accelerator'])}, global batch "
                                           f"{d['global_batch_sequences']:,}, objective "
                                           f"{d['objective']}"))
    stdout.print(comm_compute_table(report))
    if report.plans:
        for table in detail_tables(report.plans[0]):
            stdout.print(table)
    for line in report.explanation:
        stdout.print(f"- {line}", highlight=False, markup=False)
    ref = d["reference"]
    if ref:
        versus = "no searched plan fits, so there is none to compare with" \
            if ref["best_speedup"] is None else \
            f"rank {ref['rank']}; the best plan is {ref['best_speedup']:.2f}x faster"
        fits = "" if ref["fits_in_memory"] else " (does not fit in memory)"
        stdout.print(f"compared plan {ref['plan']}: {ref['step_time_s']:.4g} s/step{fits} "
                     f"(knobs {ref['chosen']}), {versus}", highlight=False, markup=False)
    stdout.print(f"searched {d['layouts_considered']:,} layouts, scored "
                 f"{d['candidates_evaluated']:,} candidate plans ({d['legal_candidates']:,} "
                 f"legal and fitting; {d['candidates_pruned_by_memory']:,} pruned by memory) "
                 f"in {d['search_wall_time_s']:.2f} s ({d['plans_per_s']:,.0f} plans/s"
                 f"{_on_processes(d['search_workers'])})",
                 highlight=False)


def _on_processes(workers: int) -> str:
    return f" on {workers} processes" if workers > 1 else ""


@app.command("plan")
@handles_input_errors
@calibrated
@plan_options(tuple(k for k in PLAN_FIELD_OPTIONS if k not in ("global_batch", "precision")))
def plan_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    workload: str = typer.Option(..., "--workload", help="Workload file or preset name."),
    # The target the search plans for, with defaults of its own (not plan knobs):
    gpus: int | None = typer.Option(None, "--gpus", help="GPUs the job uses (the cluster "
                                                         "grows by whole units if smaller)."),
    global_batch: int | None = typer.Option(None, "--global-batch", min=1, max=MAX_GLOBAL_BATCH,
                                            help="Sequences per step (default: 4 Mi tokens)."),
    top: int = typer.Option(5, "--top", min=1, help="Distinct layouts to report."),
    objective: str = typer.Option("time", "--objective",
                                  help=f"Rank by {'|'.join(OBJECTIVES)}."),
    allow_cross_domain_tp: bool = typer.Option(False, "--allow-cross-domain-tp",
                                               help="Allow TP groups across scale-up domains."),
    precision: str = typer.Option("bf16", "--precision", help="bf16|fp16|fp8."),
    straddle_margin: float = typer.Option(
        STRADDLE_MARGIN, "--straddle-margin",
        help="Share a plan whose TP/CP/EP groups straddle a scale-up domain must win by to "
             "rank above the plans inside (0.1 = 10 %)."),
    options: PlanOptions = PlanOptions(),
    price: float | None = typer.Option(None, "--price-per-gpu-hour",
                                       help="USD per GPU-hour (default: documented table)."),
    compare: Path | None = typer.Option(None, "--compare", help="A plan file (YAML/JSON) to "
                                        "estimate and rank among the results."),
    calibration: CalibrationFile = None,
    workers: SearchWorkers = None,
    framework: Framework = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Search tp x pp x dp x cp x ep x knobs x rank order; rank, explain, tabulate.

    Plan options (--tp ... --overlap-pp) fix what they name; the rest is searched.
    """
    fixed = options.fields
    plan_from_data({**fixed, "global_batch_sequences": 1})  # same checks as a plan file
    space = space_from_plan_fields(fixed)
    target, _ = build_target(cluster, with_framework(load_workload(workload), framework), gpus,
                             global_batch, precision, price)
    reference = None
    if compare is not None:
        data = read_document(compare)
        if isinstance(data, dict):
            data.setdefault("global_batch_sequences", target.global_batch_sequences)
        reference = plan_from_data(data, source=str(compare))
    report = plan_job(target, objective=objective, top=top,
                      allow_cross_domain_tp=allow_cross_domain_tp, space=space,
                      reference=reference, workers=workers,
                      straddle_margin=check_margin(straddle_margin))
    if json_output:
        print_json(report.to_dict())
    else:
        print_report(report)
