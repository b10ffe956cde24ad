"""``supernode catalog``: list and show the bundled accelerators, switches and cluster presets.

``list`` prints one table per kind with the key figures; ``show NAME`` prints one whole
entry with its sources. ``--json`` writes only JSON to stdout, with stable keys. An unknown
name is an input error (exit 2) that suggests the nearest names.
"""

from __future__ import annotations

import difflib
from typing import Any

import typer
from rich import box
from rich.measure import Measurement
from rich.table import Table

from supernode import catalog
from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.errors import InputError
from supernode.spec.hardware import AcceleratorSpec, SwitchSpec
from supernode.spec.resolved import Cluster, convert_accelerator
from supernode.units import BITS_PER_BYTE
from supernode.units import bytes_per_s_to_gbyte_per_s as to_gbyte_per_s

catalog_app = typer.Typer(
    name="catalog",
    help="Browse the bundled hardware catalog and cluster presets.",
    no_args_is_help=True,
)
app.add_typer(catalog_app, name="catalog")

JSON_HELP = "Print JSON only (stable keys) instead of tables."


def _bf16_tflops(spec: AcceleratorSpec) -> float | None:
    """Dense BF16 peak in TFLOP/s (the FP16 figure where only that is published)."""
    flops = spec.peak_dense_tflops
    return flops.get("bf16", flops.get("fp16"))


def accelerator_row(spec: AcceleratorSpec) -> dict[str, Any]:
    """Key figures of one accelerator (file units; scale-up bandwidth per direction)."""
    return {
        "name": spec.name,
        "vendor": spec.vendor,
        "kind": spec.kind,
        "bf16_dense_tflops": _bf16_tflops(spec),
        "memory_gbyte": spec.memory_gbyte,
        "memory_bandwidth_tbyte_per_s": spec.memory_bandwidth_tbyte_per_s,
        "scale_up_ports": spec.scale_up_ports,
        "scale_up_gbyte_per_s": spec.scale_up_ports * spec.scale_up_port_bandwidth_gbyte_per_s,
        "tdp_w": spec.tdp_w,
        "confidence": spec.confidence,
    }


def switch_row(spec: SwitchSpec) -> dict[str, Any]:
    """Key figures of one switch."""
    return {
        "name": spec.name,
        "vendor": spec.vendor,
        "radix_ports": spec.radix_ports,
        "port_speed_gbit_per_s": spec.port_speed_gbit_per_s,
        "in_network_reduction": spec.in_network_reduction,
        "confidence": spec.confidence,
    }


def cluster_row(name: str, cluster: Cluster) -> dict[str, Any]:
    """Key figures of one cluster preset (bandwidths per accelerator, per direction)."""
    out = cluster.scale_out
    return {
        "name": name,
        "accelerator": cluster.accelerator.name,
        "accelerators": cluster.accelerators,
        "hosts": cluster.hosts,
        "supernodes": cluster.supernodes,
        "scale_up_kind": cluster.scale_up.kind,
        "scale_up_size": cluster.scale_up.size,
        "scale_up_gbyte_per_s": to_gbyte_per_s(
            cluster.scale_up.bandwidth_per_accelerator_bytes_per_s),
        "scale_out_gbyte_per_s": to_gbyte_per_s(
            cluster.scale_out_bandwidth_per_accelerator_bytes_per_s),
        "scale_out_tiers": out.tiers if out else None,
        "description": cluster.spec.description,
    }


def catalog_summary() -> dict[str, list[dict[str, Any]]]:
    """Every catalog entry and preset as a row of key figures, sorted by name."""
    presets = catalog.cluster_presets()
    return {
        "accelerators": [accelerator_row(a) for a in _sorted(catalog.accelerators())],
        "switches": [switch_row(s) for s in _sorted(catalog.switches())],
        "clusters": [cluster_row(n, load_cluster(n)) for n in sorted(presets)],
    }


def _sorted(table: dict[str, Any]) -> list[Any]:
    return [table[key] for key in sorted(table)]


def find_entry(name: str) -> dict[str, Any]:
    """Return ``{kind, name, entry, derived}`` for any accelerator, switch or preset.

    Raises :class:`InputError` naming the nearest known names when ``name`` is unknown.
    """
    key = name.lower()
    accelerators, switches = catalog.accelerators(), catalog.switches()
    presets = {n.lower(): n for n in catalog.cluster_presets()}
    if key in accelerators:
        spec = accelerators[key]
        chip = convert_accelerator(spec)
        ports = chip.scale_up_ports
        per_direction = to_gbyte_per_s(ports * chip.scale_up_port_bandwidth_bytes_per_s)
        derived = {"scale_up_gbyte_per_s": per_direction,
                   "scale_up_bidirectional_gbyte_per_s": 2 * per_direction}
        return _entry("accelerator", spec.name, spec.model_dump(mode="json"), derived)
    if key in switches:
        switch = switches[key]
        derived = {"port_gbyte_per_s": switch.port_speed_gbit_per_s / BITS_PER_BYTE,
                   "capacity_tbit_per_s": switch.radix_ports * switch.port_speed_gbit_per_s
                   / 1e3}
        return _entry("switch", switch.name, switch.model_dump(mode="json"), derived)
    if key in presets:
        cluster = load_cluster(presets[key])
        derived = {k: v for k, v in cluster_row(presets[key], cluster).items()
                   if k not in ("name", "description")}
        return _entry("cluster", presets[key], cluster.spec.model_dump(mode="json"), derived)
    known = sorted({*accelerators, *switches, *presets})
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError("name", f"unknown catalog entry {name!r}{hint} "
                             "(see `supernode catalog list`)")


def _entry(kind: str, name: str, entry: dict[str, Any], derived: dict[str, Any]) -> dict[str, Any]:
    return {"kind": kind, "name": name, "entry": entry, "derived": derived}


@catalog_app.command("list")
@handles_input_errors
def list_command(
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """List accelerators, switches and cluster presets with their key figures."""
    summary = catalog_summary()
    if as_json:
        print_json(summary)
        return
    for table in _list_tables(summary):
        _print_table(table)


@catalog_app.command("show")
@handles_input_errors
def show_command(
    name: str = typer.Argument(..., help="An accelerator, switch or cluster preset name."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Show one catalog entry or cluster preset in full, with its sources."""
    found = find_entry(name)
    if as_json:
        print_json(found)
        return
    table = Table(title=f"{found['kind']} {found['name']}", show_header=False, box=box.SIMPLE)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for field, value in _flatten(found["entry"]):
        table.add_row(field, value)
    for field, value in _flatten(found["derived"], "derived."):
        table.add_row(field, value, style="cyan")
    stdout.print(table)


def _print_table(table: Table) -> None:
    """Fit a terminal; into a pipe or file, print at the table's natural width (no cropping)."""
    if stdout.is_terminal:
        stdout.print(table)
        return
    natural = Measurement.get(stdout, stdout.options.update(width=10_000), table).maximum
    stdout.print(table, width=max(stdout.width, natural))


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _flatten(data: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested dicts and lists as ``(dotted.path, text)`` rows; None-valued fields skipped."""
    rows: list[tuple[str, str]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            rows += _flatten(value, f"{prefix}{key}.")
    elif isinstance(data, list) and any(isinstance(v, dict | list) for v in data):
        for i, value in enumerate(data):
            rows += _flatten(value, f"{prefix.rstrip('.')}[{i}].")
    elif isinstance(data, list):
        if data:
            rows.append((prefix.rstrip("."), "\n".join(_fmt(v) for v in data)))
    elif data is not None:
        rows.append((prefix.rstrip("."), _fmt(data)))
    return rows


_COLUMNS = {
    "accelerators": [
        ("name", "name"), ("vendor", "vendor"), ("bf16_dense_tflops", "BF16 TFLOPS"),
        ("memory_gbyte", "HBM GB"), ("memory_bandwidth_tbyte_per_s", "HBM TB/s"),
        ("scale_up_gbyte_per_s", "scale-up GB/s/dir"), ("tdp_w", "TDP W"),
        ("confidence", "conf."),
    ],
    "switches": [
        ("name", "name"), ("vendor", "vendor"), ("radix_ports", "ports"),
        ("port_speed_gbit_per_s", "Gb/s per port"), ("in_network_reduction", "in-net reduce"),
        ("confidence", "conf."),
    ],
    "clusters": [
        ("name", "name"), ("accelerator", "accelerator"), ("accelerators", "accels"),
        ("hosts", "hosts"), ("scale_up_kind", "scale-up"), ("scale_up_size", "domain"),
        ("supernodes", "domains"), ("scale_up_gbyte_per_s", "up GB/s/dir"),
        ("scale_out_gbyte_per_s", "out GB/s/dir"), ("scale_out_tiers", "out tiers"),
    ],
}


def _list_tables(summary: dict[str, list[dict[str, Any]]]) -> list[Table]:
    tables = []
    for kind, columns in _COLUMNS.items():
        table = Table(title=kind.capitalize(), box=box.SIMPLE_HEAD)
        for key, header in columns:
            text = key in ("name", "vendor", "accelerator", "scale_up_kind", "confidence")
            table.add_column(header, justify="left" if text else "right", no_wrap=key == "name")
        for row in summary[kind]:
            table.add_row(*(_fmt(row[key]) for key, _ in columns))
        tables.append(table)
    return tables
