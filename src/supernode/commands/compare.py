"""``supernode compare --cluster C RESULTS...``: measured against the model, with findings.

Reads nccl-tests/rccl-tests, perftest and nvbandwidth outputs, NCCL_DEBUG=INFO logs and
saved measurement sets (docs/measurements.md); per collective and size prints measured
and predicted busbw and time, the share of each tier's line-rate bound, and findings with
the NCCL variables that bear on them. ``--fail-below 0.9`` exits 1 when any row runs under
90 % of the prediction: the communication regression gate for CI, best run against the
cluster's own calibration (``--calibration``, from ``supernode calibrate``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stderr, stdout
from supernode.commands._plan_options import CalibrationFile, calibrated, recorded_calibration
from supernode.commands._progress import progress
from supernode.commands._results_options import (
    RanksPerDomain,
    RunsCluster,
    TimingPlacement,
    UnsaidOp,
    UnsaidRanks,
)
from supernode.errors import InputError
from supernode.measurements.findings import size_label
from supernode.measurements.gate import Gate
from supernode.measurements.report import report_dict
from supernode.measurements.run import compare_results
from supernode.outputs import output_folder
from supernode.textsafe import rich_safe
from supernode.units import parse_size_bytes

_MARK = {"critical": "[bold red]critical[/]", "warning": "[yellow]warning[/]",
         "info": "[cyan]info[/]"}


def _collective_table(entry: dict[str, Any]) -> Table:
    job = entry["job"]
    tiers = [t["name"] for t in job["tiers"]]
    version = f", {entry['library_version']}" if entry["library_version"] else ""
    title = (f"{rich_safe(Path(entry['source']).name)}: {entry['op']} ({entry['op_source']}), "
             f"{job['ranks']} ranks ({rich_safe(job['ranks_source'])}) on {job['domains']} "
             f"domain(s) of {job['ranks_per_domain']}, {entry['tool']}{rich_safe(version)}")
    table = Table(title=title, title_justify="left")
    lines = [b["tier"] for b in entry["rows"][0]["line_rates"]] if entry["rows"] else tiers
    for col in ("size", "busbw GB/s", "model GB/s", "share of model", "time us", "model us",
                "algorithm", f"share of line rate ({' | '.join(lines)})"):
        table.add_column(col, justify="left" if col in ("algorithm", "size") else "right")
    for r in entry["rows"]:
        shares = " | ".join(f"{b['share']:.0%}" for b in r["line_rates"])
        ratio = f"{r['measured_over_predicted']:.0%}"
        table.add_row(size_label(r["message_bytes"]), f"{r['measured_busbw_gbyte_per_s']:.1f}",
                      f"{r['predicted_busbw_gbyte_per_s']:.1f}",
                      f"[red]{ratio}[/]" if r["below_gate"] else ratio,
                      f"{r['measured_time_s'] * 1e6:,.1f}", f"{r['predicted_time_s'] * 1e6:,.1f}",
                      r["algorithm"], shares)
    effects = dict.fromkeys((r["path"], "; ".join(r["effects"])) for r in entry["rows"])
    caption = [f"model path: {rich_safe(path)}; effect: {rich_safe(effect)}"
               for path, effect in effects]
    rates = ", ".join(f"{b['tier']} {b['line_rate_busbw_gbyte_per_s']:,.1f} GB/s"
                      for b in entry["rows"][-1]["line_rates"]) if entry["rows"] else ""
    if rates:
        caption.append(f"line rate in busbw at {size_label(entry['rows'][-1]['message_bytes'])}"
                       f": {rates} (each tier alone at line rate; share = measured busbw / it)")
    table.caption = "\n".join(caption)
    table.caption_justify = "left"
    return table


def _print_findings(findings: list[dict[str, Any]], indent: str = "  ") -> None:
    for f in findings:
        stdout.print(f"{indent}{_MARK[f['severity']]}: {rich_safe(f['message'])}", highlight=False)
        for v in f["variables"]:
            stdout.print(f"{indent}    {v['name']}: {rich_safe(v['meaning'])}", highlight=False)


def _print_report(data: dict[str, Any], plots: list[str]) -> None:
    cal = data["calibration"]
    if cal is not None:
        fitted = ", ".join(f"{f['table']}.{f['parameter']} {f['value']:g}"
                           for f in cal["fitted"]) or "nothing fitted"
        stale = ("; fitted against other packaged tables than today's (rerun supernode "
                 "calibrate)") if cal["packaged_tables_changed"] else ""
        stdout.print(f"predictions calibrated on {rich_safe(cal['cluster'])} "
                     f"({rich_safe(Path(cal['path']).name)}): {rich_safe(fitted)}{stale}",
                     highlight=False)
    for entry in data["collectives"]:
        stdout.print(_collective_table(entry))
        for note in entry["job"]["notes"] + entry["notes"]:
            stdout.print(f"  note: {rich_safe(note)}", highlight=False)
        _print_findings(entry["findings"])
    if data["point_to_point"]:
        table = Table(title="point-to-point measurements against the description",
                      title_justify="left")
        for col in ("source", "test", "size", "measured", "reference", "share"):
            table.add_column(col, justify="right" if col in ("measured", "share") else "left")
        for p in data["point_to_point"]:
            if p["unit"] == "s":
                value = f"{p['measured'] * 1e6:.2f} us"
            elif p["test"].startswith("ib_"):
                value = f"{p['measured'] * 8 / 1e9:.1f} Gb/s"
            else:
                value = f"{p['measured'] / 1e9:.1f} GB/s"
            share = "-" if p["share"] is None else f"{p['share']:.0%}"
            size = "-" if p["message_bytes"] is None else size_label(p["message_bytes"])
            table.add_row(rich_safe(Path(p["source"]).name), rich_safe(p["test"]), size, value,
                          rich_safe(p["reference_name"]), share)
        stdout.print(table)
    for log in data["logs"]:
        stdout.print(f"{rich_safe(Path(log['source']).name)} ({log['tool']}):", highlight=False)
        _print_findings(log["findings"]) if log["findings"] else stdout.print("  no finding")
    for path in plots:
        stdout.print(f"wrote {rich_safe(path)}", highlight=False)
    gate = data["gate"]
    if gate is not None:
        for failure in gate["failures"]:
            stdout.print(f"  gate fails {rich_safe(Path(failure['source']).name)}: "
                         f"{rich_safe(failure['reason'], None)}", highlight=False)
        verdict = "passed" if gate["passed"] else "FAILED"
        unjudged = (f"; {gate['rows_not_judged']} row(s) outside it not judged"
                    if gate["rows_not_judged"] else "")
        stdout.print(f"gate {verdict}: {gate['failed_rows']} of {gate['rows']} rows "
                     f"({rich_safe(gate['scope'])}) under {gate['threshold']:.0%} of the "
                     f"prediction{unjudged}", highlight=False)


def _gate(fail_below: float | None, min_bytes: str | None, max_bytes: str | None,
          ops: list[str] | None) -> Gate | None:
    """The gate of the command line (None without ``--fail-below``; a range without it is
    refused: it would judge nothing)."""
    if fail_below is None:
        for name, value in (("--min-bytes", min_bytes), ("--max-bytes", max_bytes),
                            ("--gate-op", ops)):
            if value:
                raise InputError(name, "selects the rows the gate judges; give --fail-below")
        return None
    return Gate(fail_below, _size(min_bytes, "--min-bytes") or 0,
                _size(max_bytes, "--max-bytes"), tuple(ops or ()))


def _size(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    try:
        return parse_size_bytes(text)
    except ValueError as exc:
        raise InputError(option, str(exc)) from None


@app.command("compare")
@handles_input_errors
@calibrated
def compare_command(
    cluster: RunsCluster,
    results: list[Path] = typer.Argument(..., help="Results files (nccl-tests, rccl-tests, "
                                                   "perftest, nvbandwidth, NCCL logs, sets)."),
    op: UnsaidOp = None,
    ranks: UnsaidRanks = None,
    ranks_per_domain: RanksPerDomain = None,
    placement: TimingPlacement = "out_of_place",
    fail_below: float = typer.Option(None, "--fail-below", metavar="SHARE",
                                     help="Exit 1 when a row is under SHARE x the prediction."),
    min_bytes: str = typer.Option(None, "--min-bytes", metavar="SIZE",
                                  help="The gate judges sizes from SIZE up (e.g. 64MiB)."),
    max_bytes: str = typer.Option(None, "--max-bytes", metavar="SIZE",
                                  help="The gate judges sizes up to SIZE (e.g. 8GiB)."),
    gate_op: list[str] = typer.Option(None, "--gate-op", metavar="OP",
                                      help="The gate judges only this collective "
                                           "(repeatable; default: all)."),
    plot: Path = typer.Option(None, "--plot", help="Write busbw plots into this folder."),
    calibration: CalibrationFile = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress on stderr (bar or lines)."),
) -> None:
    """Measured vs predicted collectives, share of each tier's bound, and findings."""
    gate = _gate(fail_below, min_bytes, max_bytes, gate_op)
    loaded = load_cluster(cluster)
    with progress("compare", len(results), "files",
                  quiet or json_output or len(results) < 2) as bar:
        report = compare_results(loaded, results, op=op, ranks=ranks,
                                 ranks_per_domain=ranks_per_domain, placement=placement,
                                 gate=gate, progress=lambda name: bar.advance(Path(name).name))
    data = report_dict(report)
    data["calibration"] = recorded_calibration(calibration)
    plots: list[str] = []
    if plot is not None and data["collectives"]:
        from supernode.measurements.plots import plot_collective

        with output_folder(plot, "--plot", [cluster, *results]) as staging:
            names = [plot_collective(i, e, staging).name
                     for i, e in enumerate(data["collectives"], start=1)]
        plots = [str(plot / name) for name in names]
    if json_output:
        print_json({**data, "plots": plots})
    else:
        _print_report(data, plots)
    if data["gate"] is not None and not data["gate"]["passed"]:
        if not json_output:
            stderr.print(f"gate: {data['gate']['failed_rows']} row(s) under "
                         f"{fail_below:.0%} of the prediction", highlight=False)
        raise typer.Exit(code=1)
