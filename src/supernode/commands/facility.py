"""``supernode facility``: power, cooling, floor and cabling of a cluster, for a job.

Sizes the power chain (host, rack, supernode, cluster at TDP and at the job's
utilisation; feeds with N+X redundancy and headroom; PDUs), the cooling loop (liquid and
air heat per rack, coolant flow, CDUs), the floor (rack weight against the rating, rows,
area) and the cabling (fibre cores, transceivers, cables). With ``--workload`` (and a
plan, or the planner's best) it prices the job's energy per step and per million tokens
and the power-cap trade (a ladder of board power caps against fewer supernodes); with
``--simulate`` the energy is priced at the flow simulator's step, as ``design`` does when
it simulates. The figures come from :func:`supernode.design.facility.facility_results`,
the function the review's facility stage calls, and the tables are the report's facility
tables (:func:`supernode.report.sections_run.facility_blocks`): run on the review's inputs
and reviewed plan, the command gives the report's facility figures exactly.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._job import job_plan
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import (
    PLAN_OPTIONS,
    CalibrationFile,
    PlanOptions,
    calibrated,
    plan_options,
)
from supernode.commands._seed import seed_option
from supernode.errors import InputError
from supernode.textsafe import rich_safe

#: The plan options the command takes: every plan field and ``--plan``; not ``--gpus``
#: (the facility is the whole cluster's, and so is the job).
FACILITY_PLAN_OPTIONS = tuple(k for k in PLAN_OPTIONS if k != "gpus")


def _job(loaded: Any, workload: str, options: PlanOptions, simulate: bool, seed: int
         ) -> tuple[Any, dict[str, Any]]:
    """The job the facility is sized for, and its JSON summary (plan, step, source)."""
    from supernode.design.facility import FacilityJob
    from supernode.estimate.model import estimate_plan
    from supernode.estimate.system import job_system
    from supernode.workload.presets import load_workload

    spec = load_workload(workload)
    plan, note = job_plan(loaded, spec, options.plan, options.fields)
    system = job_system(loaded.spec, None, plan.precision)
    est = estimate_plan(spec, plan, system)
    step, source = est.step_time_s, "estimate"
    if simulate:
        from supernode.design.simulation import run_simulation
        from supernode.netsim.limits import check_simulated_size

        check_simulated_size(loaded.accelerators, "--cluster")
        step, source = run_simulation(loaded, spec, plan, plan.order, seed).step_time_s, \
            "simulation"
    job = FacilityJob(spec, plan, system, est.breakdown_s, step)
    use = job.use()
    summary = {"workload": spec.name,
               "plan": {k: getattr(plan, k) for k in ("tp", "pp", "dp", "cp", "ep",
                                                      "global_batch_sequences",
                                                      "precision")},
               "step_time_s": step, "step_source": source,
               "busy_share": use.busy_share, "tokens_per_step": use.tokens_per_step,
               "note": note}
    return job, summary


def _cell(cell: Any, results: dict[str, Any]) -> str:
    """One report cell (or run of cells) as terminal text: the Markdown report's text
    (:func:`supernode.report.render.cell_text`), labels and values escaped for rich."""
    from supernode.report.render import cell_text

    return cell_text(cell, results, rich_safe, lambda text: rich_safe(text, None))


def _print(data: dict[str, Any]) -> None:
    """The report's facility tables and notes, then the job they are sized for."""
    from supernode.report.blocks import Paragraph
    from supernode.report.blocks import Table as Block
    from supernode.report.sections_run import facility_blocks

    results = {"facility": data}
    job = data["job"]
    what = ("at TDP (no --workload: no job, no energy per step or power-cap table)"
            if job is None else
            f"for {rich_safe(job['workload'])} at tp={job['plan']['tp']}, "
            f"pp={job['plan']['pp']}, dp={job['plan']['dp']}, cp={job['plan']['cp']}, "
            f"ep={job['plan']['ep']}: step {job['step_time_s']:.4g} s ({job['step_source']})"
            f", accelerators busy {job['busy_share']:.1%} of it")
    stdout.print(f"{rich_safe(data['cluster'])}: facility {what}", highlight=False)
    if job is not None and job["note"]:
        stdout.print(f"note: {rich_safe(job['note'])}", highlight=False)
    for block in facility_blocks(results):
        if isinstance(block, Block):
            table = Table(title=block.title, title_justify="left")
            for col in block.columns:
                table.add_column(col)
            for row in block.rows:
                table.add_row(*(_cell(c, results) for c in row))
            stdout.print(table)
        elif isinstance(block, Paragraph):
            stdout.print(_cell(block.cells, results), highlight=False)


@app.command("facility")
@handles_input_errors
@calibrated
@plan_options(FACILITY_PLAN_OPTIONS)
def facility_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    workload: str | None = typer.Option(
        None, "--workload", help="Workload file or preset name: size the power at the "
        "job's utilisation and price its energy and power caps (default: TDP only)."),
    options: PlanOptions = PlanOptions(),
    calibration: CalibrationFile = None,
    simulate: bool = typer.Option(False, "--simulate/--no-simulate", help="Price the "
                                  "energy at the flow simulator's step (as design does) "
                                  "instead of the estimate's."),
    seed: int = seed_option("Seed of the ECMP hash (with --simulate)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Power, feeds, cooling, floor and cabling of a cluster; with --workload, the job's
    energy per step and token and the power-cap trade (the review's facility figures)."""
    from supernode.cluster.load import load_cluster
    from supernode.design.facility import facility_results
    from supernode.topology.metrics import topology_report

    if workload is None and (options.plan is not None or options.fields or simulate):
        raise InputError("--workload", "a plan or --simulate needs the workload the job "
                                       "runs: give --workload, e.g. --workload llama3-8b")
    loaded = load_cluster(cluster)
    job, summary = (_job(loaded, workload, options, simulate, seed)
                    if workload is not None else (None, None))
    data = {"cluster": loaded.name, "job": summary,
            **facility_results(loaded, topology_report(loaded), job)}
    if json_output:
        print_json(data)
    else:
        _print(data)
