"""``supernode import``: turn what real machines report into cluster-file blocks.

``supernode import nvidia-smi-topo FILE --accelerator NAME`` reads a saved ``nvidia-smi
topo -m`` and prints a ``host:`` block (YAML, or JSON with ``--json``) to paste into a
cluster file. ``--output PATH`` writes it atomically: a temporary file in the same folder
renamed over PATH, so an error never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from pathlib import Path

import typer

from supernode.commands import app
from supernode.commands._output import handles_input_errors
from supernode.errors import InputError
from supernode.importers.nvidia_smi import read_topo
from supernode.importers.nvidia_smi_host import import_host, render_yaml, summary_lines

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
    output: Path = typer.Option(None, "--output", help="Write to this file (atomically)."),
) -> None:
    """Print a cluster file `host:` block built from `nvidia-smi topo -m` output."""
    if accelerator is None:
        raise InputError("--accelerator", "required: name the accelerator, e.g. --accelerator "
                                          "h100-sxm-80gb (nvidia-smi topo -m does not show the "
                                          "GPU model; see `supernode catalog list`)")
    result = import_host(read_topo(file), accelerator, _speed(nic_speed))
    if as_json:
        text = json.dumps(result.as_json(), indent=2, allow_nan=False) + "\n"
    else:
        text = render_yaml(result, source=file.name)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_atomically(output, text)
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


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and a rename.

    Either the whole new file is in place or the old one (if any) is untouched.
    """
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError("--output", f"folder {str(folder)!r} does not exist")
    if path.is_dir():
        raise InputError("--output", f"{str(path)!r} is a folder; give a file name")
    try:
        handle, temp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise InputError("--output", f"cannot write in {str(folder)!r}: {exc.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, _file_mode(path))
        os.replace(temp, path)
    except OSError as exc:
        raise InputError("--output", f"cannot write {str(path)!r}: {exc.strerror}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def _file_mode(path: Path) -> int:
    """Permissions for the new file: the old file's, else 0o666 less the umask."""
    with contextlib.suppress(OSError):
        return path.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@import_app.command("results")
@handles_input_errors
def results_command(
    files: list[Path] = typer.Argument(..., help="nccl-tests/rccl-tests, perftest, "
                                                 "nvbandwidth outputs or NCCL_DEBUG logs."),
    op: str = typer.Option(None, "--op", help="Collective, for outputs that do not say."),
    ranks: int = typer.Option(None, "--ranks", help="Ranks, for outputs that do not say."),
    ranks_per_domain: int = typer.Option(None, "--ranks-per-domain",
                                         help="Job ranks per scale-up domain, if known."),
    as_json: bool = typer.Option(False, "--json", help="Print the sets as JSON."),
    output: Path = typer.Option(None, "--output", help="Write to this file (atomically)."),
) -> None:
    """Read benchmark outputs into a supernode-measurements/1 file (docs/measurements.md)."""
    from supernode.measurements.reader import read_results
    from supernode.measurements.setfile import measurement_document, render_yaml

    sets = [s for f in files for s in read_results(f, op=op, ranks=ranks,
                                                   ranks_per_domain=ranks_per_domain)]
    if as_json:
        text = json.dumps(measurement_document(sets), indent=2, allow_nan=False) + "\n"
    else:
        text = render_yaml(sets)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_atomically(output, text)
    typer.echo(f"{len(sets)} measurement set(s); wrote {output}")


@import_app.command("nccl-xml")
@handles_input_errors
def nccl_xml_command(
    file: Path = typer.Argument(..., help="NCCL topology XML (NCCL_TOPO_FILE or a dump)."),
    accelerator: str = typer.Option(
        None, "--accelerator", help="Accelerator catalog name (default: the one catalog "
                                    "part with the file's compute capability)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON: host, summary, notes."),
    output: Path = typer.Option(None, "--output", help="Write to this file (atomically)."),
) -> None:
    """Print a cluster file `host:` block read from an NCCL topology XML."""
    from supernode.importers.nccl_xml import read_nccl_xml, render_host_yaml

    result = read_nccl_xml(file, accelerator)
    if as_json:
        text = json.dumps(result.as_json(), indent=2, allow_nan=False) + "\n"
    else:
        text = render_host_yaml(result, source=file.name)
    if output is None:
        typer.echo(text, nl=False)
        return
    write_atomically(output, text)
    typer.echo(f"wrote {output}")
