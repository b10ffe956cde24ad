"""``supernode topology CLUSTER``: switch, link and cable counts, hops, bisection, ratios.

Closed forms only, so it is instant even at 100,000 accelerators. Tables by default
(bandwidths in GB/s per direction); ``--json`` writes the :class:`TopologyReport` dict with
stable keys (SI units).
"""

from __future__ import annotations

import typer
from rich import box
from rich.table import Table

from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.errors import InputError
from supernode.textsafe import rich_safe
from supernode.topology.graph import LINK_TIERS
from supernode.topology.metrics import TopologyReport, topology_report
from supernode.topology.sizing import RadixError
from supernode.units import GBYTE_PER_S, NS

#: Short row names for the threshold checks.
LABELS = {
    "scale_up_to_hbm_bandwidth_ratio": "scale-up / HBM (bidir)",
    "oversubscription": "oversubscription (max)",
    "scale_out_bandwidth_per_supernode_bytes_per_s": "scale-out GB/s per supernode",
    "diameter_hops.scale_out": "server-to-server hops",
}


def _gb(value: float | None) -> str:
    return "-" if value is None else f"{value / GBYTE_PER_S:,.1f}"


def _num(value: float | int | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.{digits}f}"


def counts_table(report: TopologyReport) -> Table:
    """Switches, links, cables and optical transceivers per tier."""
    table = Table(title=f"{rich_safe(report.name)}: counts per tier", box=box.SIMPLE_HEAD,
                  caption="used/sw: most ports used on one switch; free: unused ports of "
                          "the tier; optics: link ends (2 per optical cable); modules: "
                          "transceivers (a twin-port OSFP cage serves 2 ends)")
    for col in ("tier", "switches", "radix", "used/sw", "free", "links", "cables", "optics",
                "modules"):
        table.add_column(col, justify="left" if col == "tier" else "right")
    for tier in LINK_TIERS:
        if tier not in report.links and tier not in report.switches:
            continue
        table.add_row(
            tier, _num(report.switches.get(tier)), _num(report.radix.get(tier)),
            _num(report.ports_used_per_switch.get(tier)), _num(report.free_ports.get(tier)),
            _num(report.links.get(tier)), _num(report.cables.get(tier, 0)),
            _num(report.optical_transceivers.get(tier, 0)),
            _num(report.optical_modules.get(tier, 0)),
        )
    table.add_row("total", _num(sum(report.switches.values())), "", "", "",
                  _num(sum(report.links.values())), _num(sum(report.cables.values())),
                  _num(sum(report.optical_transceivers.values())),
                  _num(sum(report.optical_modules.values())), style="bold")
    return table


def layers_table(report: TopologyReport) -> Table:
    """Per layer: injection and bisection bandwidth, hops and zero-load latency."""
    table = Table(title="layers (bandwidth per direction)", box=box.SIMPLE_HEAD,
                  caption="inject: per accelerator; scale_up bisection: one domain; hops: links on "
                          "the longest shortest path (scale_out: NIC to NIC); sw: switches crossed")
    for col in ("layer", "inject GB/s", "bisection GB/s", "hops", "sw", "mean hops",
                "latency ns"):
        table.add_column(col, justify="left" if col == "layer" else "right")
    bis = report.bisection_bandwidth_bytes_per_s
    for layer, bis_key in (("scale_up", "scale_up_domain"), ("scale_out", "scale_out")):
        latency = report.zero_load_latency_s[layer]
        table.add_row(
            layer,
            _gb(report.injection_bandwidth_bytes_per_s[layer]), _gb(bis[bis_key]),
            _num(report.diameter_hops[layer]), _num(report.diameter_switch_hops[layer]),
            _num(report.mean_hops[layer]), _num(None if latency is None else latency / NS, 0),
        )
    table.add_row("cluster", "", _gb(bis["cluster"]), "", "", "", "")
    return table


def checks_table(report: TopologyReport) -> Table:
    """Ratios and their seed thresholds."""
    table = Table(title="ratios vs thresholds", box=box.SIMPLE_HEAD,
                  caption="scale-up / HBM uses both directions, as the seed's example does")
    for col in ("metric", "value", "threshold", "verdict", "source"):
        table.add_column(col, justify="right" if col in ("value", "threshold") else "left")
    for check in report.checks:
        scale = GBYTE_PER_S if check.metric.endswith("bytes_per_s") else 1
        name = LABELS.get(check.metric, check.metric)
        value = check.value / scale if scale != 1 else check.value
        threshold = check.threshold / scale if scale != 1 else check.threshold
        table.add_row(name, _num(value), f"{check.comparison} {_num(threshold)}",
                      "[green]ok[/]" if check.ok else "[red]fails[/]", check.source)
    ratio = report.scale_up_to_scale_out_ratio
    table.add_row("scale-up / scale-out", _num(ratio), "", "", "per accelerator")
    for tier, value in report.oversubscription.items():
        average = report.oversubscription_average.get(tier)
        note = "down:up, fullest switch" + (f" (tier average {average:.2f})"
                                            if average is not None else "")
        if tier == "leaf" and report.leaf_fill:
            note += f"; {fill_text(report.leaf_fill)}"
        table.add_row(f"oversubscription {tier}", _num(value), "", "", note)
    return table


def fill_text(fill: list[int]) -> str:
    """How the NIC ports spread over one rail's leaves: ``2 leaves x 32`` or, when
    they cannot balance, ``1 leaf x 33 + 1 leaf x 32``."""
    groups: list[tuple[int, int]] = []
    for value in fill:
        if groups and groups[-1][1] == value:
            groups[-1] = (groups[-1][0] + 1, value)
        else:
            groups.append((1, value))
    parts = [f"{n} {'leaf' if n == 1 else 'leaves'} x {v:,}" for n, v in groups]
    return "NIC ports per leaf of a rail: " + " + ".join(parts)


def summary_line(report: TopologyReport) -> str:
    """One line: accelerators, hosts, domains and fabric endpoints."""
    fabric = (f"; fabric {report.fabric_endpoints:,} of {report.fabric_max_endpoints:,} "
              "endpoints" if report.fabric_endpoints else "; no scale-out fabric")
    return (f"{report.accelerators:,} accelerators in {report.hosts:,} hosts, "
            f"{report.supernodes:,} x {report.scale_up_domain_size:,}-accelerator "
            f"{report.scale_up_kind} domains; {report.scale_out_links_per_supernode:,} "
            f"scale-out links per supernode{fabric}")


@app.command("topology")
@handles_input_errors
def topology_command(
    cluster: str = typer.Argument(help="Cluster file (YAML/JSON) or preset name."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only (stable keys)."),
) -> None:
    """Counts, hops, bisection bandwidth and ratios of a cluster's topology."""
    try:
        report = topology_report(load_cluster(cluster))
    except RadixError as exc:
        raise InputError("scale_up.switch", str(exc), source=cluster) from None
    if as_json:
        print_json(report.to_dict())
        return
    stdout.print(summary_line(report), highlight=False, markup=False)
    for table in (counts_table(report), layers_table(report), checks_table(report)):
        stdout.print(table)
