"""``supernode import``: turn what real machines report into cluster-file blocks.

``supernode import nvidia-smi-topo FILE --accelerator NAME`` reads a saved ``nvidia-smi
topo -m`` and prints a ``host:`` block (YAML, or JSON with ``--json``) to paste into a
cluster file. ``--output PATH`` writes it atomically (:func:`supernode.outputs.write_text`):
a temporary file in the same folder renamed over PATH, so an error never leaves a
half-written file; PATH must be a new name or a regular file (never a symlink, FIFO or
device), and not the input itself.
"""

from __future__ import annotations

import math
from pathlib import Path

import typer

from supernode.commands import app
from supernode.commands._output import handles_input_errors
from supernode.commands._results_options import UnsaidOp, UnsaidRanks
from supernode.errors import InputError
from supernode.importers.nvidia_smi import read_topo
from supernode.importers.nvidia_smi_host import import_host, render_yaml, summary_lines
from supernode.jsontext import json_text
from supernode.outputs import check_output_file, write_text

import_app = typer.Typer(
    help="Import what real machines report (nvidia-smi) as cluster-file blocks.",
    no_args_is_help=True,
)
app.add_typer(import_app, name="import")


@import_app.command("nvidia-smi-topo")
@handles_input_errors
def nvidia_smi_topo_command(
    file: Path = typer.Argument(..., help="Saved output of `nvidia-smi topo -m`."),
    accelerator: str = typer.Option(
        None, "--accelerator", help="Accelerator catalog name (nvidia-smi does not show it)."
    ),
    nic_speed: str = typer.Option(
        None, "--nic-speed-gbit-per-s", metavar="GBIT_PER_S",
        help="Line rate of one compute NIC in Gb/s (1e9 bit/s); default 400, assumed.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: host, summary, notes."),
    output: str | None = typer.Option(None, "--output", help="Write to this file "
                                      "(atomically; a new name or a regular file)."),
) -> None:
    """Print a cluster file `host:` block built from `nvidia-smi topo -m` output."""
    if output is not None:
        check_output_file(output, "--output", inputs=[file])
    if accelerator is None:
        raise InputError("--accelerator", "required: name the accelerator, e.g. --accelerator "
                                          "h100-sxm-80gb (nvidia-smi topo -m does not show the "
                                          "GPU model; see `supernode catalog list`)")
    result = import_host(read_topo(file), accelerator, _speed(nic_speed))
    text = json_text(result.as_json()) + "\n" if as_json else \
        render_yaml(result, source=file.name)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_text(output, text, "--output", inputs=[file])
    if as_json:  # stdout stays machine-readable: what was written, and the summary
        typer.echo(json_text({"output": output, "summary": result.summary,
                              "notes": list(result.notes)}))
        return
    for line in summary_lines(result.summary):
        typer.echo(line)
    typer.echo(f"wrote {output}")


def _speed(text: str | None) -> float | None:
    """Parse ``--nic-speed-gbit-per-s`` (Gb/s) so a bad value is one clear error line."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError("--nic-speed-gbit-per-s", f"must be a positive line rate in Gb/s "
                                                   f"(e.g. 400), got {text!r}")
    return value


def _emit(text: str, output: str | None, inputs: list[Path], as_json: bool,
          summary: dict | None = None, what: str = "") -> None:
    """Print ``text``, or write it to ``output`` atomically and say so (JSON when asked;
    ``what`` names what was written, e.g. ``3 measurement set(s)``)."""
    if output is None:
        typer.echo(text, nl=False)
        return
    write_text(output, text, "--output", inputs=inputs)
    if as_json:
        typer.echo(json_text({"output": output, **(summary or {})}))
        return
    typer.echo(f"{what}; wrote {output}" if what else f"wrote {output}")


@import_app.command("results")
@handles_input_errors
def results_command(
    files: list[Path] = typer.Argument(..., help="nccl-tests/rccl-tests, perftest, "
                                                 "nvbandwidth outputs or NCCL_DEBUG logs."),
    op: UnsaidOp = None,
    ranks: UnsaidRanks = None,
    ranks_per_domain: int = typer.Option(None, "--ranks-per-domain",
                                         help="Job ranks per scale-up domain, if known."),
    as_json: bool = typer.Option(False, "--json", help="Print the sets as JSON."),
    output: str | None = typer.Option(None, "--output", help="Write to this file "
                                      "(atomically; a new name or a regular file)."),
) -> None:
    """Read benchmark outputs into a supernode-measurements/1 file (docs/measurements.md)."""
    from supernode.measurements.reader import check_results_files, read_results
    from supernode.measurements.setfile import measurement_document, render_yaml

    check_results_files(files)

    if output is not None:
        check_output_file(output, "--output", inputs=files)
    sets = [s for f in files for s in read_results(f, op=op, ranks=ranks,
                                                   ranks_per_domain=ranks_per_domain)]
    text = json_text(measurement_document(sets)) + "\n" if as_json else render_yaml(sets)
    _emit(text, output, files, as_json, {"measurement_sets": len(sets)},
          f"{len(sets)} measurement set(s)")


@import_app.command("nccl-xml")
@handles_input_errors
def nccl_xml_command(
    file: Path = typer.Argument(..., help="NCCL topology XML (NCCL_TOPO_FILE or a dump)."),
    accelerator: str = typer.Option(
        None, "--accelerator", help="Accelerator catalog name (default: the one catalog "
                                    "part with the file's compute capability)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: host, summary, notes."),
    output: str | None = typer.Option(None, "--output", help="Write to this file "
                                      "(atomically; a new name or a regular file)."),
) -> None:
    """Print a cluster file `host:` block read from an NCCL topology XML."""
    from supernode.importers.nccl_xml import read_nccl_xml, render_host_yaml

    if output is not None:
        check_output_file(output, "--output", inputs=[file])
    result = read_nccl_xml(file, accelerator)
    if as_json:
        text = json_text(result.as_json()) + "\n"
    else:
        text = render_host_yaml(result, source=file.name)
    _emit(text, output, [file], as_json)


@import_app.command("litmus")
@handles_input_errors
def litmus_command(
    file: Path = typer.Argument(..., help="Results JSON of the `supernode memory litmus` "
                                          "program."),
    as_json: bool = typer.Option(False, "--json", help="Print the verdicts as JSON."),
) -> None:
    """Read litmus-test results (MP, SB, IRIW) and say which outcomes SC forbids were seen."""
    from supernode.importers.litmus import import_litmus

    result = import_litmus(file)
    if as_json:
        typer.echo(json_text(result))
        return
    typer.echo(f"{result['machine']} {result['system']} ({result['variant']})")
    for row in result["tests"]:
        typer.echo(f"{row['test']}: {row['seen']} of {row['iterations']} runs showed "
                   f"{row['sc_forbidden']} (forbidden under SC; allowed by "
                   f"{row['allowed_by']})")
    if result["note"]:
        typer.echo(f"note: {result['note']}")
