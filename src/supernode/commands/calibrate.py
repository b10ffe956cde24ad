"""``supernode calibrate --cluster C RESULTS... --out cal.yaml``: this cluster's collective
efficiencies, fitted from its own benchmark outputs.

Reads the results files as ``compare`` does (nccl-tests/rccl-tests outputs or saved
measurement sets; docs/measurements.md), places every job on the cluster, fits the
efficiency parameters of the tables its tiers use with the shipped tables' procedure
(:mod:`supernode.measurements.calibration`), refuses the parameters the data cannot
identify, and writes a ``supernode-calibration/1`` file (atomically) that ``--calibration``
applies on ``estimate``, ``plan``, ``simulate``, ``design`` and ``compare``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._progress import progress
from supernode.commands._results_options import (
    RanksPerDomain,
    RunsCluster,
    TimingPlacement,
    UnsaidOp,
    UnsaidRanks,
)
from supernode.errors import InputError
from supernode.textsafe import rich_safe


def read_sources(paths: list[Path], op: str | None, ranks: int | None,
                 ranks_per_domain: int | None, progress=None) -> tuple[list, list[dict]]:
    """Every measurement set of ``paths`` and, per file, its provenance (path as given,
    SHA-256 of its bytes, sets read)."""
    from supernode.inputs import read_text_file
    from supernode.measurements.benchtext import MAX_RESULTS_BYTES
    from supernode.measurements.reader import check_results_files, results_from_text

    check_results_files(paths)  # the same limits as compare and import results
    sets, sources = [], []
    for path in paths:
        text = read_text_file(path, "RESULTS", MAX_RESULTS_BYTES)
        found = results_from_text(text, str(path), op=op, ranks=ranks,
                                  ranks_per_domain=ranks_per_domain)
        sets += found
        sources.append({"path": str(path),
                        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                        "sets": len(found), "rows": 0})
        if progress is not None:
            progress()
    return sets, sources


def _check_date(date: str | None) -> str | None:
    import datetime as dt

    if date is None:
        return None
    try:
        return dt.date.fromisoformat(date).isoformat()
    except ValueError:
        raise InputError("--date", f"{date!r}: an ISO date, YYYY-MM-DD") from None


def _print_summary(doc: dict[str, Any]) -> None:
    fit = doc["fit"]
    stdout.print(f"{rich_safe(doc['cluster'])}: {fit['rows']} rows in {fit['groups']} "
                 f"group(s) from {len(doc['sources'])} file(s); rms log error "
                 f"{fit['rms_log_error_packaged']:.3f} (packaged) -> "
                 f"{fit['rms_log_error_calibrated']:.3f} (calibrated)", highlight=False)
    if fit["held_out"]:
        worst = max(fit["held_out"], key=lambda r: abs(r["error"]))
        stdout.print(f"held-out check: a fit without the largest size(s) of each test "
                     f"predicts those {len(fit['held_out'])} row(s) within "
                     f"{fit['held_out_max_abs_error']:.1%} (worst: "
                     f"{rich_safe(Path(worst['source']).name)} {worst['op']} "
                     f"{worst['message_bytes']:,} B, {worst['error']:+.1%})", highlight=False)
    else:
        stdout.print("held-out check: none (no test has more sizes than --hold-out + 2)",
                     highlight=False)
    from supernode.measurements.identify import SENSITIVITY_MIN

    shown = [p for p in doc["parameters"] if p["status"] != "not_identified"
             or p["sensitivity"] >= SENSITIVITY_MIN]
    table = Table(title="parameters the rows bear on", title_justify="left")
    for col in ("parameter", "status", "packaged", "value", "95% interval", "why not fitted"):
        table.add_column(col, justify="right" if col in ("packaged", "value") else "left")
    for p in sorted(shown, key=lambda p: p["status"] != "fitted"):
        ci = f"{p['ci95'][0]:.4g} .. {p['ci95'][1]:.4g}" if p["ci95"] else "-"
        table.add_row(rich_safe(f"{p['table']}.{p['parameter']}"), p["status"],
                      f"{p['packaged']:.4g}", f"{p['value']:.4g}", ci,
                      rich_safe(p["reason"]) or "-")
    stdout.print(table)
    unseen = [f"{p['table']}.{p['parameter']}" for p in doc["parameters"] if p not in shown]
    if unseen:
        stdout.print(f"not identified, no measured row depends on them (sensitivity < "
                     f"{SENSITIVITY_MIN:g}; packaged values kept): "
                     f"{rich_safe(', '.join(unseen))}", highlight=False)
    groups = Table(title="busbw GB/s per group: measured | packaged | calibrated",
                   title_justify="left")
    for col in ("source", "op", "ranks", "tiers", "size", "measured", "packaged", "calibrated"):
        groups.add_column(col, justify="left" if col in ("source", "op", "tiers") else "right")
    for g in doc["groups"]:
        for i, size in enumerate(g["message_bytes"]):
            groups.add_row(rich_safe(Path(g["source"]).name), g["op"], str(g["ranks"]),
                           "+".join(g["tiers"]), f"{size:,}",
                           f"{g['measured_busbw_gbyte_per_s'][i]:.1f}",
                           f"{g['packaged_busbw_gbyte_per_s'][i]:.1f}",
                           f"{g['calibrated_busbw_gbyte_per_s'][i]:.1f}")
    stdout.print(groups)


@app.command("calibrate")
@handles_input_errors
def calibrate_command(
    cluster: RunsCluster,
    results: list[Path] = typer.Argument(..., help="Results files (nccl-tests, rccl-tests "
                                                   "outputs, measurement sets)."),
    out: Path | None = typer.Option(None, "--out", help="Write the calibration file here "
                                    "(atomically); without it nothing is written."),
    date: str | None = typer.Option(None, "--date", help="When the runs were made "
                                    "(YYYY-MM-DD), recorded in the file."),
    op: UnsaidOp = None,
    ranks: UnsaidRanks = None,
    ranks_per_domain: RanksPerDomain = None,
    placement: TimingPlacement = "out_of_place",
    hold_out: int = typer.Option(1, "--hold-out", metavar="N",
                                 help="Check the fit on the N largest sizes of each test, "
                                      "held back from a second fit (0: no check)."),
    json_output: bool = typer.Option(False, "--json", help="Print the calibration as JSON."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
) -> None:
    """Fit this cluster's collective efficiencies from its benchmark outputs."""
    from supernode.cluster.load import load_cluster
    from supernode.measurements.calfile import calibration_document, render_yaml
    from supernode.measurements.calibration import calibrate_cluster
    from supernode.measurements.compare import PLACEMENTS
    from supernode.outputs import check_output_file, write_text

    if placement not in PLACEMENTS:
        raise InputError("--placement", f"one of {', '.join(PLACEMENTS)}")
    when = _check_date(date)
    if out is not None:
        check_output_file(out, "--out", inputs=[cluster, *results])
    loaded = load_cluster(cluster)
    with progress("calibrate", len(results), "files", quiet or json_output) as bar:
        sets, sources = read_sources(results, op, ranks, ranks_per_domain,
                                     lambda: bar.advance("reading"))
    cal = calibrate_cluster(loaded, sets, placement=placement,
                            ranks_per_domain=ranks_per_domain, hold_out=hold_out)
    for entry in sources:
        entry["rows"] = sum(len(g.message_bytes) for g in cal.groups
                            if g.source == entry["path"])
    doc = calibration_document(cal, sources, when)
    if out is not None:
        write_text(out, render_yaml(doc), "--out", inputs=[cluster, *results])
    if json_output:
        print_json({**doc, "output": str(out) if out is not None else None})
        return
    _print_summary(doc)
    stdout.print(f"wrote {rich_safe(str(out))}" if out is not None else
                 "nothing written (--out FILE to save the calibration)", highlight=False)
