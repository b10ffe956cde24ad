"""``supernode collective``: time, algorithm and bus bandwidth of one collective on a cluster.

Like one row of nccl-tests: for ``--ranks`` consecutive ranks of the cluster (tensor
order, so 8 ranks on an 8-GPU domain stay on NVLink; ranks that do not fill whole domains
straddle them, and the smallest part binds) and each message size, the cost model picks
the algorithm and protocol NCCL would run and reports time, algorithm bandwidth, bus
bandwidth (nccl-tests' definitions, docs/collectives.md), the tiers the group crosses and
the one that binds, the collective path and the fabric effects that drove it
(:mod:`supernode.collectives.explain`). ``--racks 2,4,8,20`` prints the curve over that
many whole scale-up domains instead (the cluster grown by whole units to hold the
largest). A forced ``--algorithm`` that cannot run on the group is refused with the
reason (exit 2).
"""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster
from supernode.collectives import busbw_bytes_per_s, choose, consecutive_view
from supernode.collectives.busbw import MAX_MESSAGE_BYTES, OPS
from supernode.collectives.explain import explain
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.errors import InputError
from supernode.estimate.system import system_from_cluster
from supernode.spec.resolved import MAX_ACCELERATORS
from supernode.textsafe import rich_safe
from supernode.units import parse_size_bytes

#: Most message sizes in one call (nccl-tests sweeps are a few dozen).
MAX_SIZES = 1_000
#: Most rack counts in one ``--racks`` curve.
MAX_RACK_COUNTS = 64


def parse_size(text: str, option: str = "--sizes") -> int:
    """Parse a message size such as ``1048576``, ``64K``, ``16M``, ``64MiB`` or ``8G``
    (binary units, :func:`supernode.units.parse_size_bytes`) of 1 byte to 1 TiB."""
    try:
        value = parse_size_bytes(text)
    except ValueError:
        raise InputError(option, f"not a message size: {text!r} (e.g. 1048576, 64K, 64MiB, "
                                 "1G)") from None
    if not 1 <= value <= MAX_MESSAGE_BYTES:
        raise InputError(option, f"{text!r}: sizes must be between 1 byte and 1 TiB")
    return value


@app.command("collective")
@handles_input_errors
def collective_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    op: str = typer.Option("all_reduce", "--op", help=f"One of: {', '.join(OPS)}."),
    ranks: int | None = typer.Option(None, "--ranks", help="Ranks (default: all GPUs)."),
    sizes: str = typer.Option("1M,16M,256M,1G,8G", "--sizes", help="Comma-separated sizes."),
    algorithm: str | None = typer.Option(None, "--algorithm", help="Force an algorithm."),
    racks: str | None = typer.Option(None, "--racks", help="Comma-separated counts of whole "
                                     "scale-up domains (racks): the curve, e.g. 2,4,8,20."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Time, algorithm, algbw and busbw of one collective on the cluster's fabric."""
    if op not in OPS:
        raise InputError("--op", f"unknown collective {op!r}; one of {', '.join(OPS)}")
    message_sizes = _sizes(sizes)
    if racks is not None:
        if ranks is not None:
            raise InputError("--racks", "give --ranks or --racks, not both")
        _curve(cluster, op, message_sizes, _rack_counts(racks), algorithm, json_output)
        return
    loaded = load_cluster(cluster)
    n = loaded.accelerators if ranks is None else ranks
    if not 1 < n <= loaded.accelerators:
        raise InputError("--ranks", f"must be 2..{loaded.accelerators} (the cluster's GPUs)")
    fabric = consecutive_view(system_from_cluster(loaded).fabric, n)
    rows = _rows(op, message_sizes, n, fabric, algorithm)
    if json_output:
        print_json({"cluster": loaded.name, "op": op, "ranks": n,
                    "tiers": [t.name for t in fabric.tiers], "results": rows})
        return
    table = Table(title=f"{op} over {n} ranks of {rich_safe(loaded.name)} "
                        f"({' + '.join(t.name for t in fabric.tiers)})")
    for col in ("size", "time", "algorithm", "protocol", "algbw GB/s", "busbw GB/s",
                "tiers crossed", "binds", "effect"):
        table.add_column(col, justify="left" if col in ("algorithm", "protocol",
                                                        "tiers crossed", "binds",
                                                        "effect") else "right")
    for r in rows:
        table.add_row(f"{r['message_bytes']:,}", f"{r['time_s'] * 1e6:,.1f} us",
                      rich_safe(r["algorithm"]), r["protocol"],
                      f"{r['algbw_gigabytes_per_s']:.1f}", f"{r['busbw_gigabytes_per_s']:.1f}",
                      " + ".join(rich_safe(t) for t in r["tiers_crossed"]),
                      rich_safe(r["binding_tier"]), rich_safe("; ".join(r["effects"])))
    stdout.print(table)


def _sizes(sizes: str) -> list[int]:
    """The ``--sizes`` list, checked."""
    parts = [s for s in sizes.split(",") if s.strip()]
    if len(parts) > MAX_SIZES:
        raise InputError("--sizes", f"{len(parts):,} sizes; at most {MAX_SIZES:,}")
    message_sizes = [parse_size(s) for s in parts]
    if not message_sizes:
        raise InputError("--sizes", "give at least one size, e.g. 1M,1G")
    return message_sizes


def _rack_counts(text: str) -> list[int]:
    """The ``--racks`` list: distinct whole numbers ≥ 1, in the order given."""
    counts = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit() or int(part) < 1 or len(part) > 7:
            raise InputError("--racks", f"not a rack count: {part!r} (e.g. 2,4,8,20)")
        counts.append(int(part))
    if not counts:
        raise InputError("--racks", "give at least one rack count, e.g. 2,4,8,20")
    if len(counts) > MAX_RACK_COUNTS:
        raise InputError("--racks", f"{len(counts):,} rack counts; at most {MAX_RACK_COUNTS}")
    return list(dict.fromkeys(counts))


def _curve(cluster: str, op: str, sizes: list[int], counts: list[int],
           algorithm: str | None, json_output: bool) -> None:
    """The collective over ``counts`` whole scale-up domains (a row per count and size),
    on the cluster grown by whole units to hold the largest."""
    from supernode.cluster.load import load_cluster_spec
    from supernode.cluster.scaling import scale_cluster

    spec = load_cluster_spec(cluster)
    domain = max(1, spec.scale_up.size)
    gpus = max(counts) * domain
    if gpus > MAX_ACCELERATORS:
        raise InputError("--racks", f"{max(counts):,} domains of {domain} are {gpus:,} GPUs; "
                         f"at most {MAX_ACCELERATORS:,}")
    scaled = scale_cluster(spec, gpus)
    base = system_from_cluster(scaled.cluster).fabric
    curve: list[dict[str, Any]] = []
    for count in counts:
        n = count * domain
        if n < 2:
            raise InputError("--racks", f"{count} domain(s) of {domain} is one rank: nothing "
                             "to move")
        fabric = consecutive_view(base, n)
        curve.append({"racks": count, "ranks": n,
                      "results": _rows(op, sizes, n, fabric, algorithm)})
    if json_output:
        print_json({"cluster": spec.name, "op": op, "domain_ranks": domain,
                    "notes": scaled.notes, "curve": curve})
        return
    table = Table(title=f"{op} over whole domains of {domain} ranks of "
                        f"{rich_safe(spec.name)}")
    for col in ("racks", "ranks", "size", "time", "algorithm", "busbw GB/s", "binds",
                "effect"):
        table.add_column(col, justify="left" if col in ("algorithm", "binds", "effect")
                         else "right")
    for point in curve:
        for r in point["results"]:
            table.add_row(str(point["racks"]), f"{point['ranks']:,}",
                          f"{r['message_bytes']:,}", f"{r['time_s'] * 1e6:,.1f} us",
                          f"{rich_safe(r['algorithm'])}/{r['protocol']}",
                          f"{r['busbw_gigabytes_per_s']:.1f}", rich_safe(r["binding_tier"]),
                          rich_safe("; ".join(r["effects"])))
    stdout.print(table)


def _rows(op: str, sizes: list[int], n: int, fabric, algorithm: str | None) -> list[dict]:
    """One result row per message size (JSON keys of the command)."""
    choice = choose(op, [float(s) for s in sizes], n, fabric, algorithm)
    rows = []
    for k, size in enumerate(sizes):
        t = float(choice.time_s[k])
        path, found = explain(op, n, fabric, str(choice.algorithm[k]), str(choice.protocol[k]))
        rows.append({"message_bytes": size, "time_s": t, "algorithm": str(choice.algorithm[k]),
                     "protocol": str(choice.protocol[k]),
                     "algbw_gigabytes_per_s": size / t / 1e9,
                     "busbw_gigabytes_per_s": float(busbw_bytes_per_s(op, size, n, t)) / 1e9,
                     "tiers_crossed": str(choice.crossed[k]).split("+"),
                     "binding_tier": str(choice.binding[k]), "path": path,
                     "effects": list(found)})
    return rows
