"""``supernode schedule``: placement policies compared side by side on a job trace.

A thin shell over :func:`supernode.scheduler.schedule`: load (and grow) the cluster, read
or draw the trace, run each policy, print one table (or ``--json``) and write plots.
Limits: traces up to 64 MiB and 1,000,000 rows; synthetic traces up to 1,000,000 jobs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from supernode.bounds import check_workers
from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import scale_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stderr, stdout
from supernode.commands._progress import Steps, progress
from supernode.commands._seed import seed_option
from supernode.errors import InputError
from supernode.outputs import check_output_folder
from supernode.scheduler import (
    DEFAULT_POLICIES,
    POLICIES,
    EngineOptions,
    SyntheticSpec,
    TraceRules,
    load_trace,
    plot_schedule,
    schedule,
    synthetic_trace,
)
from supernode.scheduler.shapes import TP_CHOICES, check_shape_rule, model_index
from supernode.scheduler.slowdown import SlowdownModel
from supernode.spec.loader import validate_document
from supernode.textsafe import rich_safe

#: Bad rows listed one by one on stderr (the rest are counted).
SHOWN_BAD_ROWS = 20


def results_table(result) -> Table:
    """One row per policy: the metrics of ``docs/scheduler.md``."""
    c, t = result.cluster, result.trace
    table = Table(title=rich_safe(f"{c['name']}: {c['gpus']:,} GPUs in {c['supernodes']:,} x "
                                  f"{c['supernode_gpus']}-GPU supernodes, {c['port_groups']} "
                                  f"port groups; trace {t['name']}: {t['jobs']:,} jobs"),
                  box=box.SIMPLE_HEAD,
                  caption="util: GPUs held (goodput: at ideal speed); queue: mean wait; frag: "
                          "free GPUs no waiting job can use; TP-cross: TP>1 jobs with a TP "
                          "group across supernodes; spread: p95/p5-1 of co-located jobs' "
                          "slowdowns")
    for col in ("policy", "util", "goodput", "queue h", "p95 queue h", "frag", "TP-cross",
                "slowdown", "p95 slow", "spread", "preempt"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for p in result.policies:
        table.add_row(rich_safe(p["policy"]), f"{p['utilisation']:.1%}",
                      f"{p['goodput_utilisation']:.1%}", f"{p['mean_queue_s'] / 3600:,.2f}",
                      f"{p['p95_queue_s'] / 3600:,.2f}", f"{p['fragmentation']:.2%}",
                      f"{p['tp_crossing_share']:.1%}", f"{p['mean_slowdown']:.3f}",
                      f"{p['p95_slowdown']:.3f}", f"{p['slowdown_spread']:.1%}",
                      f"{p['preemptions']:,}")
    return table


def _tp_ok(domain_size: int):
    def check(gpus: int, tp: int) -> str | None:
        """What is wrong with TP ``tp`` for a job of ``gpus`` GPUs (None when legal)."""
        if tp not in TP_CHOICES or gpus % tp or domain_size % tp:
            return (f"tp {tp} must be one of {', '.join(map(str, TP_CHOICES))} and divide the "
                    f"job's GPUs ({gpus}) and the supernode ({domain_size})")
        return None
    return check


def _model(name: str) -> int | None:
    try:
        return model_index(name, "model")
    except InputError:
        return None


#: ``--trace`` value replaying what ``supernode design`` replays on the cluster.
DESIGN_REPLAY = "design-replay"


def _trace(source: str, cluster, jobs: int | None, skip: bool, synth: dict, seed: int,
           priority_min_gpus: int):
    if source == DESIGN_REPLAY:  # the review's own replay (supernode.design.scheduling)
        from supernode.design.scheduling import design_trace

        return design_trace(cluster, seed)[0]
    if source == "synthetic":
        given = {k: v for k, v in synth.items() if v is not None}
        if jobs is not None:
            given["jobs"] = jobs  # validated with the rest: --jobs within its limit
        spec = validate_document(given, SyntheticSpec, source="synthetic trace")
        return synthetic_trace(spec, cluster.accelerators, seed, priority_min_gpus)
    rules = TraceRules(cluster.accelerators, priority_min_gpus, _tp_ok(cluster.scale_up.size),
                       _model)
    trace = load_trace(source, rules, skip_bad_rows=skip)
    return trace.head(jobs) if jobs else trace


def _report_skipped(trace) -> None:
    for e in trace.skipped[:SHOWN_BAD_ROWS]:
        where = f"line {e.line}" + (f": {e.column}" if e.column else "")
        stderr.print(f"skipped {rich_safe(where)}: {rich_safe(e.message)}", highlight=False)
    if len(trace.skipped) > SHOWN_BAD_ROWS:
        stderr.print(f"... and {len(trace.skipped) - SHOWN_BAD_ROWS:,} more bad rows skipped",
                     highlight=False)


@app.command("schedule")
@handles_input_errors
def schedule_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset."),
    trace: str = typer.Option(..., "--trace", help="Trace CSV, a bundled trace (philly, "
                                                   "alibaba-openb), `synthetic`, or "
                                                   "`design-replay` (what `supernode design` "
                                                   "replays: Philly thinned, scaled to 80 % "
                                                   "load)."),
    policy: list[str] = typer.Option(None, "--policy", help="Policy to compare (repeat); "
                                     f"default all: {', '.join(DEFAULT_POLICIES)}."),
    seed: int = seed_option("Seed of every random draw."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only (stable keys)."),
    plot: Path = typer.Option(None, "--plot", help="Folder for the PNG plots."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    gpus: int = typer.Option(None, "--gpus", help="Grow the cluster by whole units to this "
                                                  "many GPUs."),
    jobs: int = typer.Option(None, "--jobs", help="First N jobs of the trace (synthetic: "
                                                  "how many to draw)."),
    skip_bad_rows: bool = typer.Option(False, "--skip-bad-rows", help="Leave bad rows out "
                                       "(listed on stderr) and run the rest."),
    arrival_rate_per_h: float = typer.Option(None, "--arrival-rate-per-h",
                                             help="Synthetic: Poisson arrivals per hour."),
    load: float = typer.Option(None, "--load", help="Synthetic: offered GPU-seconds over "
                                                    "capacity (default 0.8)."),
    size_law: str = typer.Option(None, "--size-law", help="Synthetic: philly or pow2."),
    max_gpus: int = typer.Option(None, "--max-gpus", help="Synthetic pow2: largest job."),
    median_duration_s: float = typer.Option(None, "--median-duration-s",
                                            help="Synthetic: median run time (s)."),
    duration_sigma: float = typer.Option(None, "--duration-sigma",
                                         help="Synthetic: std. dev. of ln(run time)."),
    backfill_depth: int = typer.Option(256, "--backfill-depth", help="Waiting jobs tried "
                                                                     "per pass."),
    stretch: bool = typer.Option(True, "--stretch/--no-stretch", help="Run slowed jobs "
                                 "longer (run time x slowdown)."),
    checkpoint_interval_s: float = typer.Option(1800.0, "--checkpoint-interval-s",
                                                help="Checkpoint period for pre-emption (s)."),
    preempt_after_s: float = typer.Option(600.0, "--preempt-after-s",
                                          help="Wait before a job may pre-empt (s)."),
    restart_s: float = typer.Option(300.0, "--restart-s", help="Restart cost of a "
                                                               "pre-empted job (s)."),
    priority_min_gpus: int = typer.Option(8, "--priority-min-gpus", help="Jobs of at least "
                                          "this many GPUs are high priority (Philly, "
                                          "synthetic)."),
    workers: int = typer.Option(1, "--workers", help="Processes running the policies "
                                                     "(same results)."),
    shapes: str = typer.Option("memory-tp", "--shapes", help="Job TP sizes: memory-tp (the "
                               "smallest TP the model's training state fits) or uniform-tp "
                               "(drawn uniformly among the legal sizes)."),
    pricing: str = typer.Option("per-group", "--pricing", help="A split placement's "
                                "slowdown: per-group (only the TP groups that straddle a "
                                "supernode) or all-split (every TP group)."),
) -> None:
    """Compare placement policies on a job trace: utilisation, queueing, fragmentation,
    TP crossings, slowdowns and their spread among co-located jobs."""
    names = list(policy) if policy else list(DEFAULT_POLICIES)
    for name in names:
        POLICIES.create(name)
    options = replace(_options(backfill_depth, stretch, checkpoint_interval_s,
                               preempt_after_s, restart_s, jobs, gpus, priority_min_gpus,
                               workers), shapes=check_shape_rule(shapes),
                      pricing=SlowdownModel.check_pricing(pricing))
    if plot is not None:
        check_output_folder(plot, "--plot", inputs=[cluster, trace])
    resolved = scale_cluster(load_cluster_spec(cluster), gpus).cluster
    synth = {"arrival_rate_per_h": arrival_rate_per_h, "load": load, "size_law": size_law,
             "max_gpus": max_gpus, "median_duration_s": median_duration_s,
             "duration_sigma": duration_sigma}
    if trace == DESIGN_REPLAY and jobs is not None:
        raise InputError("--jobs", "the design replay sets its own job count (4 per GPU, "
                                   "2,000 to 16,000); leave --jobs out")
    if trace != "synthetic" and any(v is not None for v in synth.values()):
        raise InputError("--trace", "the synthetic options (--load, --size-law, ...) need "
                                    "--trace synthetic")
    data = _trace(trace, resolved, jobs, skip_bad_rows, synth, seed, priority_min_gpus)
    if len(data) == 0 and data.skipped:
        first = data.skipped[0]
        raise InputError("--trace", f"no jobs to schedule: all {len(data.skipped):,} rows "
                                    f"were skipped (the first, line {first.line}: "
                                    f"{first.message})")
    with progress("schedule", len(names) * 2 * len(data), "events",
                  quiet or json_output) as bar:
        result = schedule(resolved, data, names, seed, options, _callback(bar), workers)
    _report_skipped(data)  # after the run: a refusal stays one line
    plots = ([str(p) for p in plot_schedule(result, plot, "--plot", [cluster, trace])]
             if plot is not None else [])
    if json_output:
        print_json({**result.to_dict(), "plots": plots})
        return
    stdout.print(results_table(result))
    for path in plots:
        stdout.print(f"plot: {rich_safe(path)}", highlight=False)


def _options(backfill_depth, stretch, checkpoint_s, preempt_s, restart_s, jobs, gpus,
             priority_min_gpus, workers) -> EngineOptions:
    checks = (("--backfill-depth", backfill_depth >= 1, "an integer ≥ 1"),
              ("--checkpoint-interval-s", checkpoint_s > 0, "> 0 seconds"),
              ("--preempt-after-s", preempt_s >= 0, "≥ 0 seconds"),
              ("--restart-s", restart_s >= 0, "≥ 0 seconds"),
              ("--jobs", jobs is None or jobs >= 1, "an integer ≥ 1"),
              ("--gpus", gpus is None or gpus >= 1, "an integer ≥ 1"),
              ("--priority-min-gpus", priority_min_gpus >= 1, "an integer ≥ 1"),
              )
    check_workers(workers)
    for option, ok, allowed in checks:
        if not ok:
            raise InputError(option, f"must be {allowed}")
    for option, value in (("--checkpoint-interval-s", checkpoint_s),
                          ("--preempt-after-s", preempt_s), ("--restart-s", restart_s)):
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError(option, "must be a finite number of seconds")
    return EngineOptions(backfill_depth=backfill_depth, stretch=stretch,
                         preempt_after_s=preempt_s, checkpoint_interval_s=checkpoint_s,
                         restart_s=restart_s)


def _callback(bar: Steps):
    """Progress hook: events handled so far by each policy, summed, on ``bar``."""
    done: dict[str, int] = {}

    def update(policy: str, events: int) -> None:
        """Show ``events`` handled so far by ``policy``."""
        done[policy] = events
        bar.update(policy, sum(done.values()))
    return update
