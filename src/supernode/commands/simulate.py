"""``supernode simulate``: one training iteration (or a traffic file) on the congested fabric."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, input_paths, print_json, stdout
from supernode.commands._plan_options import (
    CalibrationFile,
    PlanOptions,
    calibrated,
    plan_options,
)
from supernode.commands._progress import Steps, progress
from supernode.commands._seed import seed_option
from supernode.errors import InputError
from supernode.netsim.collectives import MODES
from supernode.netsim.inputs import job_inputs
from supernode.netsim.limits import check_simulated_size
from supernode.netsim.policies import ROUTING_POLICIES
from supernode.netsim.scenario import (
    SimOptions,
    SimResult,
    simulate_jobs,
    simulate_traffic,
)
from supernode.netsim.traffic import TrafficFile
from supernode.spec.loader import read_document, validate_document
from supernode.textsafe import rich_safe


def _print_tables(result: SimResult, plots: list[str]) -> None:
    summary = Table(title="step (simulated vs analytic estimate)")
    for col in ("job", "GPUs", "simulated s", "estimate s", "ratio"):
        summary.add_column(col, justify="left" if col == "job" else "right")
    for j in result.jobs:
        summary.add_row(rich_safe(j["name"]), str(j["gpus"]), f"{j['step_time_s']:.4g}",
                        f"{j['estimate_step_time_s']:.4g}", f"{j['slowdown_vs_estimate']:.3f}")
    if not result.jobs:
        summary.add_row("traffic", "-", f"{result.step_time_s:.4g}", "-", "-")
    stdout.print(summary)
    tiers = Table(title="link utilisation per tier (time-averaged; peak = instantaneous)")
    for col in ("tier", "links", "mean", "p50", "p99", "max", "peak", "hot"):
        tiers.add_column(col, justify="left" if col == "tier" else "right")
    for tier, stats in result.tables.link_utilization.items():
        tiers.add_row(tier, str(stats["links"]), *(f"{stats[k]:.1%}" for k in
                                                   ("mean", "p50", "p99", "max", "peak")),
                      str(result.tables.hot_counts.get(tier, 0)))
    stdout.print(tiers)
    hot = Table(title="hot links (>= 80% for >= 1% of the run), busiest first")
    for col in ("link", "tier", "time hot", "mean", "main flows"):
        hot.add_column(col)
    for row in result.tables.hot_links[:10]:
        flows = ", ".join(f"{rich_safe(f['label'])} {f['share']:.0%}" for f in row["flows"][:3])
        hot.add_row(rich_safe(row["link"]), row["tier"], f"{row['hot_share']:.1%}",
                    f"{row['utilization']:.1%}", flows)
    stdout.print(hot)
    coll = Table(title="collective completion times (ms)")
    for col in ("collective", "count", "p50", "p90", "p99", "max"):
        coll.add_column(col, justify="left" if col == "collective" else "right")
    for key, row in result.tables.collectives.items():
        coll.add_row(rich_safe(key), str(row["count"]), *(f"{row[k] * 1e3:.3f}" for k in
                                                ("p50_s", "p90_s", "p99_s", "max_s")))
    stdout.print(coll)
    stdout.print(f"{result.tables.events:,} events, {result.tables.classes:,} flow classes, "
                 f"{result.wall_time_s:.2f} s wall" + "".join(f"\nnote: {rich_safe(n, None)}"
                                                              for n in result.notes))
    for p in plots:
        stdout.print(f"plot: {rich_safe(p, None)}")


def _options(seed: int, routing: str | None, rail: bool, aggregate: bool, mode: str, ideal: bool,
             top: int, plot: Path | None) -> SimOptions:
    if routing is not None:
        ROUTING_POLICIES.get(routing, "routing")
    if mode not in MODES:
        raise InputError("mode", f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    return SimOptions(seed=seed, routing=routing, rail_aligned=rail, aggregate=aggregate,
                      mode=mode, efficiency=not ideal, top=top, bins=120 if plot else 0)


@app.command("simulate")
@handles_input_errors
@calibrated
@plan_options()
def simulate_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    workload: str | None = typer.Option(None, "--workload", help="Workload file or preset."),
    options: PlanOptions = PlanOptions(),
    placement: Path | None = typer.Option(None, "--placement", help="Placement file: jobs, "
                                          "rank -> accelerator (docs/netsim.md)."),
    traffic: Path | None = typer.Option(None, "--traffic", help="Traffic file of collectives "
                                        "instead of a training iteration."),
    fail: list[str] = typer.Option([], "--fail", help="Failure spec (repeatable), e.g. "
                                   "link:leaf/3-spine/1 or switch:scale_up_l1/0/5; slow "
                                   "links and YAML files: docs/netsim.md."),
    routing: str | None = typer.Option(None, "--routing", help="Fabric routing: ecmp|spray|"
                                       "adaptive (default: the cluster file's "
                                       "scale_out.routing)."),
    rail_aligned: bool = typer.Option(True, "--rail-aligned/--no-rail-aligned",
                                      help="PXN-style rail-aligned paths on rail fabrics."),
    aggregate: bool = typer.Option(True, "--aggregate/--per-flow", help="Coupled flow "
                                   "classes over identical groups, or every flow alone."),
    mode: str = typer.Option("pipelined", "--mode", help="Ring decomposition: pipelined|step."),
    ideal: bool = typer.Option(False, "--ideal", help="Links at line rate (no protocol "
                               "efficiency)."),
    seed: int = seed_option("Seed of the ECMP hash."),
    top: int = typer.Option(20, "--top", min=1, help="Hot links to list."),
    plot: Path | None = typer.Option(None, "--plot", help="Directory for PNG plots."),
    calibration: CalibrationFile = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Simulate one training step (or a traffic file) with flows on the real topology."""
    if plot is not None:
        from supernode.outputs import check_output_folder

        check_output_folder(plot, "--plot", input_paths(cluster, workload, options.plan,
                                                         placement, traffic, fail, calibration))
    plan, gpus, flags = options.plan, options.gpus, options.fields
    loaded, grown = _cluster(cluster, gpus, placement is not None or traffic is not None)
    check_simulated_size(loaded.accelerators, "--cluster")
    settings = _options(seed, routing, rail_aligned, aggregate, mode, ideal, top, plot)
    with _drawer(plot) as drawer:  # with --plot, matplotlib loads beside the simulation
        with progress("simulate", 1, "tasks", quiet or json_output) as bar:
            hook = _hook(bar)
            if traffic is not None:
                doc = validate_document(read_document(traffic), TrafficFile,
                                        source=str(traffic))
                result = simulate_traffic(loaded, doc, failures=tuple(fail), options=settings,
                                          progress=hook)
            else:
                from supernode.planner.default_plan import default_plan

                jobs, notes = job_inputs(loaded, workload, plan, flags, placement,
                                         default_plan, gpus)
                result = simulate_jobs(loaded, jobs, failures=tuple(fail), options=settings,
                                       progress=hook)
                result.notes[:0] = grown + notes
        inputs = input_paths(cluster, workload, options.plan, placement, traffic, fail,
                             calibration)
        _report(result, plot, json_output, inputs, drawer)


def _drawer(plot: Path | None) -> Any:
    """With ``--plot``: a child importing matplotlib to draw the plots later
    (:func:`supernode.netsim.plot_files.prepare_drawing`); else nothing."""
    if plot is None:
        return nullcontext(None)
    from supernode.netsim.plot_files import prepare_drawing

    return prepare_drawing()


def _cluster(cluster: str, gpus: int | None, fixed: bool) -> tuple[Any, list[str]]:
    """The cluster to simulate: as given, or grown by whole units for ``--gpus``."""
    if gpus is None:
        return load_cluster(cluster), []
    if fixed:
        raise InputError("gpus", "--gpus sizes the one training job; with --placement or "
                                 "--traffic the jobs' accelerators are given there")
    from supernode.cluster.load import load_cluster_spec
    from supernode.cluster.scaling import scale_cluster

    scaled = scale_cluster(load_cluster_spec(cluster), gpus)
    return scaled.cluster, list(scaled.notes)


def _hook(bar: Steps):
    """Progress callback: tasks done out of all tasks (the total grows as the DAG does)."""

    def hook(now: float, done: int, total: int) -> None:
        """Show tasks done out of all tasks."""
        bar.update("", done, total)
    return hook


def _report(result: SimResult, plot: Path | None, json_output: bool,
            inputs: list[Any], drawer: Any = None) -> None:
    """Write plots (all or none; never over an input; drawn by ``drawer`` when given),
    then JSON or tables."""
    plots = []
    if plot is not None:
        from supernode.netsim.plot_files import write_plots

        plots = [str(p) for p in write_plots(result.tables, plot, "--plot", tuple(inputs),
                                             drawer)]
    if json_output:
        data: dict[str, Any] = result.to_dict()
        data["plots"] = plots
        print_json(data)
    else:
        _print_tables(result, plots)
