"""``supernode validate FILE``: predict published measurements and report the errors."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.textsafe import rich_safe
from supernode.validation.harness import summarize_metrics, validate_file


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4g}"


@app.command("validate")
@handles_input_errors
def validate_command(
    file: Path = typer.Argument(..., help="A file in the supernode-validation/1 format."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Predict every case of a validation file; print measured, predicted, error, MAPE."""
    results, summary = validate_file(file)
    by_metric = summarize_metrics(results)
    if json_output:
        doc = {
            "cases": [r.to_dict() for r in results],
            "summary": {
                kind: {"n": s["n"], "mape": s["mape"] if s["n"] else None}
                for kind, s in summary.items()
            },
        }
        if by_metric:
            doc["summary_by_metric"] = by_metric
        print_json(doc)
        return
    table = Table(title=f"validation: {rich_safe(file, None)}")
    for column in ("id", "kind", "metric", "measured", "predicted", "error", "detail"):
        table.add_column(column, overflow="fold")
    for r in results:
        error = f"{100 * r.error_frac:+.1f}%" if r.error_frac is not None else r.status
        table.add_row(rich_safe(r.id), rich_safe(r.kind), rich_safe(r.metric), _fmt(r.measured),
                      _fmt(r.predicted), rich_safe(error), rich_safe(r.detail, None))
    stdout.print(table)
    summary_table = Table(title="MAPE per kind")
    summary_table.add_column("kind")
    summary_table.add_column("n", justify="right")
    summary_table.add_column("MAPE", justify="right")
    for kind, s in summary.items():
        mape = f"{100 * s['mape']:.2f}%" if s["n"] else "-"
        summary_table.add_row(rich_safe(kind), str(s["n"]), mape)
    stdout.print(summary_table)
    for r in results:
        for s in r.secondary or ():
            error = f"{100 * s['error_frac']:+.1f}%" if s["error_frac"] is not None else "-"
            stdout.print(f"  {rich_safe(r.id)} {rich_safe(s['metric'])}: measured "
                         f"{_fmt(s['measured'])}, predicted {_fmt(s['predicted'])} ({error})",
                         highlight=False)
    if by_metric:
        metric_table = Table(title="MAPE per metric (kinds with per-case metrics)")
        for column in ("kind", "metric", "n", "MAPE"):
            metric_table.add_column(column, justify="right" if column in ("n", "MAPE")
                                    else "left")
        for kind, metrics in by_metric.items():
            for metric, s in metrics.items():
                metric_table.add_row(rich_safe(kind), rich_safe(metric), str(s["n"]),
                                     f"{100 * s['mape']:.2f}%")
        stdout.print(metric_table)
