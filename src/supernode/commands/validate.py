"""``supernode validate FILE``: predict published measurements and report the errors."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.textsafe import rich_safe
from supernode.validation.harness import validate_file


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
    if json_output:
        print_json({
            "cases": [r.to_dict() for r in results],
            "summary": {
                kind: {"n": s["n"], "mape": s["mape"] if s["n"] else None}
                for kind, s in summary.items()
            },
        })
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
