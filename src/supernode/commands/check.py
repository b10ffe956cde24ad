"""``supernode check``: the design rules as a CI gate.

Runs the design review's stages (validate -> topology -> plan -> (simulate) -> ... ->
rules) and prints every finding; ``--json`` prints the verdict and the findings exactly as
``results.json`` holds them (the review's "Reproduce these figures" section names this
command for its findings). Exit code 1 when an error-severity rule fails, 0 otherwise, 2
on bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import (
    CalibrationFile,
    PlanFile,
    calibrated,
    recorded_calibration,
    with_help,
)
from supernode.commands._seed import seed_option
from supernode.commands.design import design_input, progress_display, stage_hook
from supernode.design import run_design
from supernode.textsafe import rich_safe

STATUS_STYLE = {"fail": "bold red", "pass": "green", "not_applicable": "dim",
                "not_evaluated": "yellow"}


def findings_table(data: dict) -> Table:
    """Every rule: id, severity, status, measured, threshold, detail."""
    table = Table(title=f"design rules: {rich_safe(data['cluster']['name'])} x "
                        f"{rich_safe(data['workload']['name'])}")
    for col in ("rule", "seed", "severity", "status", "measured", "threshold", "detail"):
        table.add_column(col)
    for f in data["findings"]:
        measured = "-" if f["measured"] is None else f"{f['measured']:.4g}"
        thr = f["threshold"]
        threshold = "-" if thr is None else (f"{thr[0]:g}-{thr[1]:g}" if isinstance(thr, list)
                                             else f"{f['comparison']} {thr:.4g}")
        status = f"[{STATUS_STYLE[f['status']]}]{f['status']}[/]"
        table.add_row(f["id"], f["seed"], f["severity"], status, f"{measured} {f['unit']}",
                      threshold, rich_safe(f["detail"]))
    return table


CheckedPlan = Annotated[Path | None,
                        with_help(PlanFile, "The plan to check (default: the planner's best).")]


@app.command("check")
@handles_input_errors
@calibrated
def check_command(
    cluster: str | None = typer.Option(None, "--cluster", help="Cluster file or preset."),
    workload: str | None = typer.Option(None, "--workload", help="Workload file or preset."),
    plan: CheckedPlan = None,
    rules: Path | None = typer.Option(None, "--rules", help="Rule pack (docs/rules.md)."),
    name: str | None = typer.Option(None, "--example", help="A bundled example."),
    simulate: bool = typer.Option(True, "--simulate/--no-simulate", help="Simulate the "
                                  "iteration (the link-utilisation rule needs it)."),
    schedule: bool = typer.Option(True, "--schedule/--no-schedule", help="Replay the "
                                  "scheduling trace (the placement rules need it)."),
    seed: int = seed_option("Seed of the ECMP hash."),
    global_batch: int | None = typer.Option(None, "--global-batch", min=1,
                                            help="Sequences per step (default: the planner's)."),
    calibration: CalibrationFile = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress on stderr (bar or lines)."),
) -> None:
    """Check a design against the rules; exit 1 when an error-severity rule fails."""
    inputs = design_input(cluster, workload, plan, rules, name, simulate, seed, global_batch,
                          schedule=schedule)
    with progress_display(quiet or json_output, "check") as bar:
        data = run_design(inputs, stage_hook(bar)).to_dict()
    data["inputs"]["calibration"] = recorded_calibration(calibration)
    if json_output:
        print_json({"verdict": data["verdict"], "findings": data["findings"],
                    "inputs": data["inputs"]})
    else:
        stdout.print(findings_table(data))
        v = data["verdict"]
        stdout.print(f"verdict: {v['verdict']}; errors: {', '.join(v['errors']) or 'none'}",
                     highlight=False)
    if data["verdict"]["errors"]:
        raise typer.Exit(code=1)
