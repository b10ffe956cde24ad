"""``supernode monitor rules|list``: Prometheus rules, tests, dashboard and topology file.

``rules --cluster C --out DIR`` writes the folder described in
:mod:`supernode.monitor.artefacts` (all files or none) and, with ``--check``, runs
``promtool check rules`` and ``promtool test rules`` on it. ``list`` prints the alerts
generated for a cluster (id, seed section, severity, ``for``). ``--json`` prints the
manifest / the rule list only.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stderr, stdout
from supernode.errors import InputError
from supernode.monitor import promtool
from supernode.monitor.artefacts import MANIFEST, RULES, TESTS, TESTS_LONG, render, write
from supernode.monitor.config import load_config
from supernode.monitor.pack import RulePack, build_pack, describe_for
from supernode.monitor.promtool import semantics_for  # noqa: F401  (health imports it here)
from supernode.textsafe import rich_safe

monitor_app = typer.Typer(
    name="monitor", no_args_is_help=True,
    help="Prometheus alerting and recording rules, promtool tests, a Grafana dashboard, a "
         "dcgm-exporter counters file and topology info metrics for a cluster.")
app.add_typer(monitor_app, name="monitor")

ClusterOption = typer.Option(..., "--cluster", help="Cluster file or preset name.")
ConfigOption = typer.Option(None, "--config", help="Monitoring configuration (YAML/JSON) "
                            "merged onto the defaults (docs/monitor.md).")


def _pack(cluster: str, config: Path | None) -> RulePack:
    return build_pack(load_cluster(cluster), load_config(config))


def interactive(quiet: bool) -> bool:
    """True when progress may be shown: not quiet, stdout and stderr both terminals."""
    return not quiet and sys.stdout.isatty() and sys.stderr.isatty()


def _status(quiet: bool, message: str):
    return stderr.status(message) if interactive(quiet) else nullcontext()


def rules_table(pack: RulePack) -> Table:
    """One row per generated alert."""
    table = Table(title=f"{len(pack.alerts())} alerts for {rich_safe(pack.ctx.topology.cluster)}",
                  box=box.SIMPLE_HEAD)
    for col in ("id", "seed", "severity", "for", "scope"):
        table.add_column(col)
    for rule in pack.alerts():
        table.add_row(rule.alert, rule.seed, rule.severity, describe_for(rule.for_s),
                      rule.scope)
    return table


def _promtool() -> str:
    """promtool on PATH (InputError at ``--check`` without one)."""
    binary = promtool.find_promtool()
    if binary is None:
        raise InputError("--check", "promtool is not on PATH (Debian: apt-get install "
                                    "prometheus)")
    return binary


def _check(directory: Path, binary: str) -> list[promtool.PromtoolResult]:
    return [promtool.check_rules(binary, directory / RULES),
            promtool.test_rules(binary, [directory / TESTS, directory / TESTS_LONG])]


@monitor_app.command("rules")
@handles_input_errors
def rules_command(
    cluster: str = ClusterOption,
    out: Path = typer.Option(..., "--out", help="Folder for the generated files (created; "
                             "files of the same names are replaced)."),
    config: Path | None = ConfigOption,
    prometheus_major: int | None = typer.Option(
        None, "--prometheus-major", help="Window rules the test values follow: 2 or 3 "
        "(default: with --check, the major of the promtool that checks them; otherwise 3, "
        "current Prometheus)."),
    check: bool = typer.Option(False, "--check", help="Run promtool check rules and "
                               "promtool test rules on the written files."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest as JSON only."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress display."),
) -> None:
    """Write the rule pack of a cluster: rules, promtool tests, dashboard, counters, topology."""
    from supernode.outputs import check_output_folder

    inputs = [p for p in (cluster, config) if p is not None]
    check_output_folder(out, "--out", inputs)
    binary = _promtool() if check else None
    if binary is not None and prometheus_major is None:
        prometheus_major = promtool.installed_major(binary)
    semantics, major = semantics_for(prometheus_major)
    if binary is not None:
        promtool.check_major(binary, major)
    with _status(quiet or as_json, "generating rules and verifying their tests"):
        pack = _pack(cluster, config)
        artefacts = render(pack, semantics)
        paths = write(artefacts, out, "--out", inputs)
    results = _check(out, binary) if binary is not None else []
    if as_json:
        import json

        manifest = json.loads(artefacts.files[MANIFEST])
        manifest["prometheus_major"] = major
        manifest["promtool"] = [{"command": " ".join(r.command), "ok": r.ok} for r in results]
        print_json(manifest)
    else:
        stdout.print(f"wrote {len(paths)} files to {rich_safe(out)}: {len(pack.alerts())} "
                     f"alerting and {len(pack.recordings())} recording rules for "
                     f"{rich_safe(pack.ctx.topology.cluster)} (test values: Prometheus "
                     f"{major}.x)", highlight=False)
        for path in paths:
            stdout.print(f"  {rich_safe(path.name)}", highlight=False)
        for note in artefacts.notes:
            stdout.print(f"note: {rich_safe(note)}", highlight=False)
        for result in results:
            verdict = "ok" if result.ok else "FAILED"
            stdout.print(f"{' '.join(result.command[1:])}: {verdict}", highlight=False)
            if not result.ok:
                stdout.print(rich_safe(result.output[-4000:]), highlight=False)
    if any(not r.ok for r in results):
        raise typer.Exit(code=1)


@monitor_app.command("list")
@handles_input_errors
def list_command(
    cluster: str = ClusterOption,
    config: Path | None = ConfigOption,
    as_json: bool = typer.Option(False, "--json", help="Print the rules as JSON only."),
) -> None:
    """List the alerts generated for a cluster: id, seed section, severity, for, scope."""
    pack = _pack(cluster, config)
    if as_json:
        print_json({"cluster": pack.ctx.topology.cluster,
                    "rules": [s.to_dict() for s in pack.summaries()],
                    "notes": list(pack.notes)})
        return
    stdout.print(rules_table(pack))
    for note in pack.notes:
        stdout.print(f"note: {rich_safe(note)}", highlight=False)
