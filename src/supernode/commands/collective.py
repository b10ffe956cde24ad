"""``supernode collective``: time, algorithm and bus bandwidth of one collective on a cluster.

Like one row of nccl-tests: for ``--ranks`` consecutive ranks of the cluster (tensor
order, so 8 ranks on an 8-GPU domain stay on NVLink; ranks that do not fill whole domains
straddle them, and the smallest part binds) and each message size, the cost model picks
the algorithm and protocol NCCL would run and reports time, algorithm bandwidth, bus
bandwidth (nccl-tests' definitions, docs/collectives.md), the tiers the group crosses and
the one that binds. A forced ``--algorithm`` that cannot run on the group is refused with
the reason (exit 2).
"""

from __future__ import annotations

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster
from supernode.collectives import busbw_bytes_per_s, choose, consecutive_view
from supernode.collectives.busbw import MAX_MESSAGE_BYTES, OPS
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.errors import InputError
from supernode.estimate.system import system_from_cluster
from supernode.textsafe import rich_safe

_SUFFIX = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}
#: Most message sizes in one call (nccl-tests sweeps are a few dozen).
MAX_SIZES = 1_000


def parse_size(text: str) -> int:
    """Parse a message size such as ``1048576``, ``64K``, ``16M`` or ``8G`` (binary units)."""
    raw = text.strip().upper().removesuffix("B")
    suffix = raw[-1:] if raw[-1:] in _SUFFIX else ""
    number = raw[: len(raw) - len(suffix)]
    try:
        value = float(number) * _SUFFIX[suffix]
    except ValueError:
        raise InputError("--sizes", f"not a message size: {text!r} (e.g. 1048576, 64K, 1G)"
                         ) from None
    if not 1 <= value <= MAX_MESSAGE_BYTES:
        raise InputError("--sizes", f"{text!r}: sizes must be between 1 byte and 1 TiB")
    return int(value)


@app.command("collective")
@handles_input_errors
def collective_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset name."),
    op: str = typer.Option("all_reduce", "--op", help=f"One of: {', '.join(OPS)}."),
    ranks: int | None = typer.Option(None, "--ranks", help="Ranks (default: all GPUs)."),
    sizes: str = typer.Option("1M,16M,256M,1G,8G", "--sizes", help="Comma-separated sizes."),
    algorithm: str | None = typer.Option(None, "--algorithm", help="Force an algorithm."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Time, algorithm, algbw and busbw of one collective on the cluster's fabric."""
    loaded = load_cluster(cluster)
    n = loaded.accelerators if ranks is None else ranks
    if not 1 < n <= loaded.accelerators:
        raise InputError("--ranks", f"must be 2..{loaded.accelerators} (the cluster's GPUs)")
    if op not in OPS:
        raise InputError("--op", f"unknown collective {op!r}; one of {', '.join(OPS)}")
    fabric = consecutive_view(system_from_cluster(loaded).fabric, n)
    parts = [s for s in sizes.split(",") if s.strip()]
    if len(parts) > MAX_SIZES:
        raise InputError("--sizes", f"{len(parts):,} sizes; at most {MAX_SIZES:,}")
    message_sizes = [parse_size(s) for s in parts]
    if not message_sizes:
        raise InputError("--sizes", "give at least one size, e.g. 1M,1G")
    rows = _rows(op, message_sizes, n, fabric, algorithm)
    if json_output:
        print_json({"cluster": loaded.name, "op": op, "ranks": n,
                    "tiers": [t.name for t in fabric.tiers], "results": rows})
        return
    table = Table(title=f"{op} over {n} ranks of {rich_safe(loaded.name)} "
                        f"({' + '.join(t.name for t in fabric.tiers)})")
    for col in ("size", "time", "algorithm", "protocol", "algbw GB/s", "busbw GB/s",
                "tiers crossed", "binds"):
        table.add_column(col, justify="left" if col in ("algorithm", "protocol",
                                                        "tiers crossed", "binds") else "right")
    for r in rows:
        table.add_row(f"{r['message_bytes']:,}", f"{r['time_s'] * 1e6:,.1f} us",
                      rich_safe(r["algorithm"]), r["protocol"],
                      f"{r['algbw_gigabytes_per_s']:.1f}", f"{r['busbw_gigabytes_per_s']:.1f}",
                      " + ".join(rich_safe(t) for t in r["tiers_crossed"]),
                      rich_safe(r["binding_tier"]))
    stdout.print(table)


def _rows(op: str, sizes: list[int], n: int, fabric, algorithm: str | None) -> list[dict]:
    """One result row per message size (JSON keys of the command)."""
    choice = choose(op, [float(s) for s in sizes], n, fabric, algorithm)
    rows = []
    for k, size in enumerate(sizes):
        t = float(choice.time_s[k])
        rows.append({"message_bytes": size, "time_s": t, "algorithm": str(choice.algorithm[k]),
                     "protocol": str(choice.protocol[k]),
                     "algbw_gigabytes_per_s": size / t / 1e9,
                     "busbw_gigabytes_per_s": float(busbw_bytes_per_s(op, size, n, t)) / 1e9,
                     "tiers_crossed": str(choice.crossed[k]).split("+"),
                     "binding_tier": str(choice.binding[k])})
    return rows
