"""``supernode reliability``: failure domains, degraded modes, checkpoints and goodput of a job."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._job import job_plan
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
from supernode.facility import cluster_cooling
from supernode.reliability.assess import ReliabilityOptions, assess_reliability
from supernode.reliability.result import ReliabilityResult
from supernode.textsafe import rich_safe
from supernode.topology.metrics import topology_report
from supernode.workload.presets import load_workload


def _rates(values: list[str]) -> dict[str, float]:
    out = {}
    for value in values:
        name, sep, number = value.partition("=")
        try:
            out[name.strip()] = float(number)
        except ValueError:
            raise InputError("rate", f"{value!r}: give COMPONENT=FAILURES_PER_UNIT_YEAR, "
                                     "e.g. gpu=0.05") from None
        if not sep or not name.strip():
            raise InputError("rate", f"{value!r}: give COMPONENT=FAILURES_PER_UNIT_YEAR")
    return out


#: The plan options reliability takes (the knobs its model reads).
RELIABILITY_PLAN_OPTIONS = ("plan", "gpus", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch",
                            "global_batch", "recompute", "sequence_parallel", "zero_stage",
                            "distributed_optimizer", "precision")


def _job_cluster(cluster: str, gpus: int | None):
    """The cluster, grown by whole units to hold ``gpus`` (``--gpus``: as ``plan`` and
    ``estimate`` grow it, :func:`supernode.cluster.scaling.scale_cluster`)."""
    if gpus is None:
        return load_cluster(cluster)
    from supernode.cluster.load import load_cluster_spec
    from supernode.cluster.scaling import scale_cluster

    return scale_cluster(load_cluster_spec(cluster), gpus).cluster


def _runs_hook(bar: Steps):
    """Progress hook: ``n`` more Monte Carlo runs done, on ``bar``."""
    done = [0]

    def hook(n: int) -> None:
        """``n`` more runs are done."""
        done[0] += n
        bar.update("Monte Carlo", done[0])
    return hook


@app.command("reliability")
@handles_input_errors
@calibrated
@plan_options(RELIABILITY_PLAN_OPTIONS)
def reliability_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    workload: str = typer.Option(..., "--workload", help="Workload file or preset name."),
    options: PlanOptions = PlanOptions(),
    calibration: CalibrationFile = None,
    days: float = typer.Option(30.0, "--days", help="Horizon of each simulated run (days)."),
    runs: int = typer.Option(200, "--runs", help="Monte Carlo runs."),
    seed: int = seed_option("Seed (same inputs + seed = same output)."),
    weibull: float = typer.Option(1.0, "--weibull-shape", help="Failure inter-arrival "
                                  "shape: 1 = exponential, <1 = bursty (Weibull)."),
    spares: int | None = typer.Option(None, "--spares", help="Hot-spare hosts (default: 2%)."),
    hot_standby: float | None = typer.Option(None, "--hot-standby", help="Share of scale-up "
                                             "bandwidth held as hot standby, 0-1."),
    write_bw: float | None = typer.Option(None, "--checkpoint-write-gbyte-per-s",
                                          help="Aggregate checkpoint write bandwidth (GB/s)."),
    mode: str | None = typer.Option(None, "--checkpoint-mode", help="sync|async."),
    interval: float | None = typer.Option(None, "--interval-s", help="Checkpoint interval "
                                          "(s of work; default: Daly's optimum)."),
    recovery: str | None = typer.Option(None, "--recovery", help="restart|shrink."),
    rate: list[str] = typer.Option([], "--rate", help="COMPONENT=FAILURES_PER_UNIT_YEAR "
                                   "override (repeatable)."),
    netsim: bool = typer.Option(False, "--netsim", help="Price fabric degradations with the "
                                "flow simulator too (slower)."),
    use_ray: bool = typer.Option(False, "--ray", help="Run the Monte Carlo on Ray."),
    workers: int | None = typer.Option(None, "--workers", help="Processes/Ray CPUs "
                                       "(at most 256; no more processes than CPU cores)."),
    plot: Path | None = typer.Option(None, "--plot", help="Directory for PNG plots."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Interruptions by component, blast radius, degraded modes, checkpoint interval, RTO,
    goodput (analytic and Monte Carlo) and what-ifs for one job."""
    if plot is not None:
        from supernode.outputs import check_output_folder

        check_output_folder(plot, "--plot", input_paths(cluster, workload, options.plan))
    loaded = _job_cluster(cluster, options.gpus)
    spec = load_workload(workload)
    chosen, note = job_plan(loaded, spec, options.plan, options.fields, options.gpus)
    settings = ReliabilityOptions(
        days=days, runs=runs, seed=seed, weibull_shape=weibull, spare_hosts=spares,
        hot_standby_share=hot_standby, checkpoint_write_gbyte_per_s=write_bw,
        checkpoint_mode=mode, interval_s=interval, recovery=recovery,
        failures_per_unit_year=_rates(rate), workers=workers, use_ray=use_ray,
        netsim=netsim, cooling=cluster_cooling(loaded, topology_report(loaded)))
    with progress("reliability", runs, "runs", quiet or json_output) as bar:
        result = assess_reliability(loaded, spec, chosen, settings,
                                    progress=_runs_hook(bar))
    plots = []
    if plot is not None:
        from supernode.reliability.plots import write_plots

        plots = [str(p) for p in write_plots(result, plot, "--plot",
                                             input_paths(cluster, workload, options.plan))]
    if json_output:
        print_json({**result.to_dict(), "plots": plots, "notes": [note] if note else []})
    else:
        _print(result, plots, note)


def _print(result: ReliabilityResult, plots: list[str], note: str | None) -> None:
    d = result.to_dict()
    if note:
        stdout.print(f"note: {note}", highlight=False)
    inter = d["interruptions"]
    stdout.print(f"{rich_safe(d['cluster'])}: {d['job']['gpus']:,} GPUs, "
                 f"{inter['failures_per_day']:.3g} failures/day, "
                 f"{inter['interruptions_per_day']:.3g} job interruptions/day "
                 f"(MTBF {inter['job_mtbf_s'] / 3600:.3g} h)", highlight=False)
    lv = d["level"]
    at = {row["name"]: row for row in lv["at"]}
    sources = [row for row in lv["at"] if row["name"] != "default"]
    low, high = (min(sources, key=lambda r: r["failures_per_1000_node_days"]),
                 max(sources, key=lambda r: r["failures_per_1000_node_days"]))
    stdout.print(f"failure level {lv['failures_per_1000_node_days']:.3g} per 1,000 node-days "
                 f"({lv['combined']} of "
                 + " and ".join(f"{r['name']} {r['failures_per_1000_node_days']:.3g}"
                                for r in sources)
                 + f"): interruptions/day {at['default']['interruptions_per_day']:.3g} "
                 f"({low['name']} {low['interruptions_per_day']:.3g} .. {high['name']} "
                 f"{high['interruptions_per_day']:.3g}), analytic goodput "
                 f"{at['default']['analytic_goodput']:.4f} ({low['name']} "
                 f"{low['analytic_goodput']:.4f} .. {high['name']} "
                 f"{high['analytic_goodput']:.4f})", highlight=False)
    assumed = inter["assumed_rates"]
    if assumed["components"]:
        stdout.print(f"assumed rates (no public fleet statistic): "
                     f"{', '.join(assumed['components'])}: {assumed['share']:.0%} of the "
                     f"interruptions; override with --rate COMPONENT=PER_YEAR",
                     highlight=False)
    stdout.print(_blast_table(d))
    c = d["checkpoint"]
    stdout.print(f"checkpoint {c['size_bytes'] / 1e12:.3g} TB ({c['mode']}): stops training "
                 f"{c['blocking_s']:.3g} s, write {c['write_s']:.3g} s; interval Young "
                 f"{c['young_interval_s'] / 60:.3g} min, Daly {c['daly_interval_s'] / 60:.3g} "
                 f"min, simulated best {c['simulated_best_interval_s'] / 60:.3g} min",
                 highlight=False)
    r = d["recovery"]
    verdict = "meets" if r["meets_objective"] else "[bold red]misses[/]"
    stdout.print(f"recovery ({r['policy']}): RTO {r['rto_s'] / 60:.3g} min {verdict} the "
                 f"{r['objective_s'] / 60:.0f}-min objective; spare wait "
                 f"{r['mean_spare_wait_s_per_run'] / 3600:.3g} h per run")
    g = d["goodput"]["monte_carlo"]["goodput"]
    stdout.print(f"goodput: analytic {d['goodput']['analytic']:.4f}; Monte Carlo mean "
                 f"{g['mean']:.4f} ± {g['standard_error']:.4f} (p5 {g['p5']:.4f}, p50 "
                 f"{g['p50']:.4f}, p95 {g['p95']:.4f}) over {d['goodput']['monte_carlo']['runs']}"
                 f" runs", highlight=False)
    h = d["hot_standby"]
    stdout.print(f"hot standby {h['share']:.0%} vs {h['objective']:.0%} objective; largest "
                 f"single scale-up loss {h['largest_single_failure_loss']:.1%}", highlight=False)
    stdout.print(_what_if_table(d))
    for p in plots:
        stdout.print(f"plot: {p}")


def _blast_table(d: dict) -> Table:
    table = Table(title="blast radius (per failure) and degraded modes")
    for col in ("component", "where", "per day", "detect", "takes down", "effect",
                "step s"):
        table.add_column(col, justify="right" if col in ("per day", "step s") else "left")
    step = d["job"]["step_time_s"]
    for row in d["blast_radius"]:
        speed = row["speed"]
        # an interruption's step time is that of its restart when it runs degraded
        degraded = row["effect"] != "interrupt" or speed < 1
        shown = f"{step / speed:.4g}" if degraded and speed > 0 else "-"
        table.add_row(row["component"], row["location"], f"{row['failures_per_day']:.3g}",
                      row["detection"], rich_safe(row["takes_down"]), row["effect"], shown)
    return table


def _what_if_table(d: dict) -> Table:
    table = Table(title="what if (Monte Carlo on common draws)")
    for col in ("knob", "now", "what if", "analytic", "Monte Carlo", "vs now"):
        table.add_column(col, justify="left" if col == "knob" else "right")
    for w in d["what_if"]:
        table.add_row(w["knob"], f"{w['current']:,.4g}", f"{w['value']:,.4g}",
                      f"{w['analytic_goodput']:.4f}", f"{w['monte_carlo_goodput']:.4f}",
                      _change(w["delta_vs_base"]))
    return table


def _change(delta: float) -> str:
    """A goodput difference at four decimals; "no change" where it rounds to zero (not
    "+0.0000" or "-0.0000")."""
    return "no change" if round(delta, 4) == 0 else f"{delta:+.4f}"
