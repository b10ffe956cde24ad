"""``supernode design``: the whole review of a cluster for a workload, as a report folder.

validate -> topology -> plan -> simulate -> reliability -> facility -> monitoring ->
scheduling -> artefacts -> rules -> report, with a progress display. Writes
``report.html`` (self-contained), ``report.md``, ``results.json``, ``decisions.md``, and
the exported files (``exports/``, ``monitoring/``) into ``--out`` atomically; ``--json``
prints ``results.json``. With no arguments it runs the bundled flagship example.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import (
    CalibrationFile,
    PlanFile,
    SearchWorkers,
    calibrated,
    recorded_calibration,
    with_help,
)
from supernode.commands._progress import Steps, progress
from supernode.commands._seed import seed_option
from supernode.design import FLAGSHIP, STAGES, DesignInput, example, run_design
from supernode.errors import InputError
from supernode.textsafe import rich_safe


def design_input(cluster: str | None, workload: str | None, plan: Path | None,
                 rules: Path | None, name: str | None, simulate: bool, seed: int,
                 global_batch: int | None, prometheus_major: int | None = None,
                 workers: int | None = None, serve: str | None = None,
                 schedule: bool = True) -> DesignInput:
    """The inputs: an example (``--example`` or none given: the flagship), or the files."""
    if cluster is None and workload is None:
        e = example(name or FLAGSHIP)
        return DesignInput(e.cluster, e.workload, plan or e.plan, rules, simulate, 5, seed,
                           global_batch, e.name, prometheus_major=prometheus_major,
                           workers=workers, serve=serve, schedule=schedule)
    if name is not None:
        raise InputError("--example", "give either --example or --cluster/--workload")
    if cluster is None or workload is None:
        raise InputError("--cluster" if cluster is None else "--workload",
                         "give both --cluster and --workload (or neither: the flagship "
                         "example)")
    return DesignInput(cluster, workload, plan, rules, simulate, 5, seed, global_batch,
                       prometheus_major=prometheus_major, workers=workers, serve=serve,
                       schedule=schedule)


def progress_display(quiet: bool, label: str = "design"):
    """The stages' progress on stderr (:func:`supernode.commands._progress.progress`): a
    bar on a terminal, one line per stage when piped, nothing when ``quiet``."""
    return progress(label, len(STAGES) + 1, "stages", quiet)


def stage_hook(bar: Steps):
    """Progress callback moving ``bar`` to the stage being run."""

    def hook(stage: str, index: int, total: int) -> None:
        """Show the stage now running."""
        bar.update(stage, index)
    return hook


ReviewedPlan = Annotated[Path | None,
                         with_help(PlanFile, "The plan to review (YAML/JSON); default: the "
                                             "planner's best.")]


@app.command("design")
@handles_input_errors
@calibrated
def design_command(
    clusters: list[str] | None = typer.Argument(
        None, metavar="[CLUSTER]...", show_default=False,
        help="Cluster files or presets: one to review (as --cluster), 2 or 3 to review each "
             "and compare side by side in one folder (needs --workload)."),
    cluster: str | None = typer.Option(None, "--cluster", help="Cluster file or preset."),
    workload: str | None = typer.Option(None, "--workload", help="Workload file or preset."),
    plan: ReviewedPlan = None,
    rules: Path | None = typer.Option(None, "--rules", help="Rule pack overriding the "
                                      "default thresholds and severities (docs/rules.md)."),
    name: str | None = typer.Option(None, "--example", help="A bundled example: flagship, "
                                    "h100-servers, deepseek-v3-nvl72, flawed."),
    out: Path = typer.Option(Path("design-report"), "--out", help="Folder for the report "
                             "files (written all at once, or not at all)."),
    simulate: bool = typer.Option(True, "--simulate/--no-simulate", help="Simulate the "
                                  "plan's iteration on the fabric."),
    schedule: bool = typer.Option(True, "--schedule/--no-schedule", help="Replay the "
                                  "scheduling trace (topology-blind vs aware placement)."),
    seed: int = seed_option("Seed of the ECMP hash, "
                             "the reliability Monte Carlo and the scheduling replay."),
    global_batch: int | None = typer.Option(None, "--global-batch", min=1,
                                            help="Sequences per step (default: the planner's)."),
    prometheus_major: int | None = typer.Option(
        None, "--prometheus-major", help="Window rules the monitoring/ test values follow: "
        "2 or 3 (default: 3, current Prometheus)."),
    calibration: CalibrationFile = None,
    workers: SearchWorkers = None,
    serve: str | None = typer.Option(None, "--serve", help="A serve file (docs/serving.md): "
                                     "the review also answers whether serving it needs the "
                                     "supernode (its model defaults to the workload)."),
    json_output: bool = typer.Option(False, "--json", help="Print results.json only."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress on stderr (bar or lines)."),
) -> None:
    """Review a design: topology, plans, simulation, reliability, facility, monitoring,
    scheduling, rules -> report folder with the exported topology and monitoring files.
    With 2 or 3 clusters: each reviewed so, and compared side by side."""
    from supernode.commands._design_compare import ARGUMENT, check_clusters, run_compare
    from supernode.outputs import check_output_folder

    clusters = list(clusters or [])
    if clusters and cluster is not None:
        raise InputError(ARGUMENT, "give the clusters either as arguments or with --cluster, "
                                   "not both")
    if len(clusters) > 1:
        check_clusters(clusters, workload, name)
    elif clusters:
        cluster = clusters[0]
    files_in = [p for p in (cluster, workload, plan, rules, calibration, serve, *clusters)
                if p is not None]
    check_output_folder(out, "--out", files_in)
    inputs = design_input(clusters[0] if len(clusters) > 1 else cluster, workload, plan, rules,
                          name, simulate, seed, global_batch, prometheus_major, workers, serve,
                          schedule)

    def review(design: DesignInput, label: str) -> tuple[dict, dict[str, str]]:
        """One review (progress labelled ``label``): the results and the artefact texts."""
        with progress_display(quiet or json_output, label) as bar:
            return _reviewed(design, calibration, bar)

    if len(clusters) > 1:
        run_compare(clusters, inputs, out, files_in, review, json_output)
        return
    from supernode.report import write_report

    data, texts = review(inputs, "design")
    files = write_report(data, out, "--out", texts, files_in, workers)
    if json_output:
        print_json(data)
        return
    v = data["verdict"]
    stdout.print(f"{rich_safe(data['cluster']['name'])} x {rich_safe(data['workload']['name'])}"
                 f": verdict {v['verdict']} ({v['failed_by_severity']['error']} errors, "
                 f"{v['failed_by_severity']['warning']} warnings, "
                 f"{v['failed_by_severity']['info']} info of {v['rules_evaluated']} rules)",
                 highlight=False)
    for f in data["findings"]:
        if f["failed"]:
            stdout.print(f"  {f['severity']:<7} {f['id']}: {rich_safe(f['detail'])}",
                         highlight=False)
    for line in operations_lines(data):
        stdout.print(line, highlight=False)
    if data.get("serving"):
        stdout.print(f"serving: {rich_safe(data['serving']['questions']['verdict'])}",
                     highlight=False)
    folders = sorted({p.split("/")[0] for p in texts})
    stdout.print(f"report: {rich_safe(files[0])} (and report.md, results.json, decisions.md, "
                 f"bom.csv{''.join(f', {f}/' for f in folders)})", highlight=False)


def _reviewed(inputs: DesignInput, calibration: Path | None, bar: Steps
              ) -> tuple[dict, dict[str, str]]:
    """``results.json`` of one review with its calibration record, checked, and the texts
    of its exported files."""
    from supernode.design.reproduce import with_calibration
    from supernode.design.results import check_results

    result = run_design(inputs, stage_hook(bar))
    data = result.to_dict()
    data["inputs"]["calibration"] = recorded_calibration(calibration)
    if calibration is not None:  # the printed commands run with the same file
        data["reproduce"] = with_calibration(data["reproduce"], calibration)
    check_results(data)  # the calibration record too
    return data, result.files


def operations_lines(data: dict) -> list[str]:
    """One line on recovery and goodput (reliability), one on the alert rules (monitoring),
    one on placement (scheduling), one on the exported files (artefacts)."""
    out = []
    rel = data.get("reliability")
    if rel is not None:
        mc = rel["goodput"]["monte_carlo"]
        out.append(f"reliability: recovery {rel['recovery']['policy']}, RTO "
                   f"{rel['recovery']['rto_s'] / 60:.1f} min, checkpoint every "
                   f"{rel['checkpoint']['chosen_interval_s'] / 60:.3g} min, goodput "
                   f"{mc['goodput']['mean']:.4f} (Monte Carlo, {mc['runs']:,} runs of "
                   f"{mc['horizon_s'] / 86_400:g} days), hot standby "
                   f"{rel['hot_standby']['share']:.1%} ({rel['hot_standby']['source']})")
    mon = data.get("monitoring")
    if mon is not None:
        out.append(f"monitoring: {mon['count']} alert rules ({mon['by_severity']['critical']} "
                   f"critical, {mon['by_severity']['warning']} warning)")
    sch = data.get("scheduling")
    if sch is not None:
        src, c = sch["trace_source"], sch["comparison"]
        b, a = (sch["schedule"]["policies"][c[k]] for k in ("blind_index", "aware_index"))
        out.append(f"scheduling: {src['jobs']:,} {src['kind']} jobs at {src['load']:.0%} load: "
                   f"TP across supernodes {b['tp_crossing_share']:.1%} ({b['policy']}) vs "
                   f"{a['tp_crossing_share']:.1%} ({a['policy']}), slowdown spread "
                   f"{b['slowdown_spread']:.1%} vs {a['slowdown_spread']:.1%}")
    art = data.get("artefacts")
    if art is not None:
        groups = {g: sum(1 for f in art["files"] if f["group"] == g)
                  for g in dict.fromkeys(f["group"] for f in art["files"])}
        out.append("artefacts: " + ", ".join(f"{g}/ ({n} files)" for g, n in groups.items())
                   + f"; export formats: {', '.join(art['export_formats'])}")
    return out
