"""``supernode health SNAPSHOT... [--cluster C]``: the rule pack evaluated offline.

Reads Prometheus text-format snapshots (one, or several for trends), runs the same rules
``supernode monitor rules`` generates at each snapshot's time, and prints the alerts firing
or pending at the last one, grouped by topology: grouped parent alerts, then supernode /
rack / host. ``--json`` prints the report only. ``--fail-on`` makes firing alerts an exit
status of 1 for scripts. Limits: docs/monitor.md.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.tree import Tree

from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._progress import progress
from supernode.commands.monitor import ConfigOption, _status, semantics_for
from supernode.errors import InputError
from supernode.monitor.config import load_config
from supernode.monitor.health import SEVERITY_ORDER, AlertView, HealthReport, evaluate
from supernode.monitor.pack import build_pack
from supernode.monitor.snapshots import load_snapshots
from supernode.textsafe import rich_safe

FAIL_ON = ("never", "warning", "critical")
STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def _line(view: AlertView) -> str:
    state = "" if view.state == "firing" else f" (pending, fires at {view.fires_at_s:g} s)"
    summary = rich_safe(view.annotations.get("summary", ""))
    style = STYLE.get(view.severity, "")
    return f"[{style}]{view.severity}[/] {view.alertname}{state}: {summary}"


def tree(report: HealthReport) -> Tree:
    """Alerts grouped: parents, then supernode / rack / host; unplaced ones last."""
    root = Tree(f"{len(report.firing())} firing, {len(report.alerts) - len(report.firing())} "
                f"pending at {report.evaluated_at_s:g} s ({len(report.snapshots)} snapshot(s) "
                f"over {report.span_s:g} s, {report.rules} rules)")
    parents = [a for a in report.alerts if a.scope == "parent"]
    if parents:
        branch = root.add("grouped: several faults under one parent")
        for view in parents:
            branch.add(_line(view))
    nodes: dict[str | tuple[str, str], Tree] = {}  # outer branches, (outer, inner) ones
    for view in report.alerts:
        if view.scope == "parent":
            continue
        outer, inner = _branches(view, report)
        if outer not in nodes:
            nodes[outer] = root.add(outer)
        if (outer, inner) not in nodes:
            nodes[(outer, inner)] = nodes[outer].add(inner) if inner else nodes[outer]
        nodes[(outer, inner)].add(_line(view))
    return root


def _branches(view: AlertView, report: HealthReport) -> tuple[str, str]:
    """(outer, inner) branch titles: supernode/rack then host; a switch; a CDU; unplaced."""
    supernode, rack, host = view.place(report.host_label)
    if supernode or rack:
        outer = " / ".join(f"{k} {rich_safe(v)}" for k, v in (("supernode", supernode),
                                                               ("rack", rack)) if v)
        return outer, f"host {rich_safe(host)}" if host else ""
    for kind, label in (("switch", report.switch_label), ("CDU", report.cdu_label)):
        if view.labels.get(label):
            return f"{kind} {rich_safe(view.labels[label])}", ""
    return "not in the cluster description", f"host {rich_safe(host)}" if host else ""


def _print(report: HealthReport) -> None:
    stdout.print(tree(report))
    if report.not_judged:
        items = ", ".join(f"{n['rule']} ({n['needs_s']:g} s)" for n in report.not_judged)
        stdout.print(f"history too short to judge: {rich_safe(items)}", highlight=False)
    if report.no_data:
        stdout.print(f"no data for {len(report.no_data)} rule(s): "
                     + rich_safe(", ".join(n["rule"] for n in report.no_data)), highlight=False)
    for error in report.errors[:5]:
        stdout.print(f"rule error: {rich_safe(error['rule'])}: {rich_safe(error['message'])}",
                     highlight=False)
    skipped = report.skipped
    if skipped["samples"]:
        stdout.print(f"skipped {skipped['samples']:,} samples of {skipped['metrics']:,} metrics "
                     "the rules do not read", highlight=False)
    for note in report.notes:
        stdout.print(f"note: {rich_safe(note)}", highlight=False)


@app.command("health")
@handles_input_errors
def health_command(
    snapshots: list[Path] = typer.Argument(..., help="Prometheus text-format snapshot files, "
                                           "oldest first."),
    cluster: str | None = typer.Option(None, "--cluster", help="Cluster file or preset: "
                                       "adds its topology labels and line rates."),
    config: Path | None = ConfigOption,
    interval: int = typer.Option(60, "--interval", help="Seconds between snapshots that "
                                 "carry no timestamps."),
    prometheus_major: int | None = typer.Option(None, "--prometheus-major", help="Window "
                                                "rules to mirror: 2 or 3 (default 3)."),
    fail_on: str = typer.Option("never", "--fail-on", help="Exit 1 when an alert of this "
                                "severity or worse fires: never|warning|critical."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress display."),
) -> None:
    """Evaluate the monitoring rules on snapshots and print the alerts, grouped by topology."""
    if fail_on not in FAIL_ON:
        raise InputError("--fail-on", f"one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    semantics, _ = semantics_for(prometheus_major)
    with _status(quiet or as_json, "reading snapshots"):
        pack = build_pack(load_cluster(cluster) if cluster else None, load_config(config))
        loaded = load_snapshots([str(s) for s in snapshots], pack, interval)
    with progress("health", len(loaded.times_ms), "evaluation times",
                  quiet or as_json) as bar:
        report = evaluate(pack, loaded, semantics,
                          lambda done: bar.update("evaluating rules", done))
    if as_json:
        print_json(report.to_dict())
    else:
        _print(report)
    if fail_on != "never":
        worst = SEVERITY_ORDER[fail_on]
        if any(SEVERITY_ORDER.get(a.severity, 9) <= worst for a in report.firing()):
            raise typer.Exit(code=1)
