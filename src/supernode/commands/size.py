"""``supernode size``: from a token budget and a deadline to cards, supernodes and links."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster_spec
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import GlobalBatch
from supernode.errors import InputError
from supernode.outputs import check_output_file, write_text
from supernode.planner.sized_cluster import cluster_file_text, sized_cluster
from supernode.planner.sizing import DEFAULT_HEADROOM, SizingInput, size, template_for
from supernode.textsafe import rich_safe
from supernode.workload.presets import load_workload

GB, TB = 1e9, 1e12


def _utilization(text: str) -> float | None:
    if text == "plan":
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError("utilization", f"a number in (0, 1] or 'plan', got {text!r}") from None
    return value


def _rows(r: dict) -> list[tuple[str, str]]:
    mem = r["memory"]
    rows = [
        ("total compute", f"{r['total_flops']:.3g} FLOPs ({r['tokens']:.3g} tokens)"),
        ("utilisation", f"{r['utilization']:.0%} ({r['utilization_source']})"),
        ("cards (seed 003 §3.1)", f"{r['cards']:,.0f} (range {r['cards_range'][0]:,.0f}-"
                                  f"{r['cards_range'][1]:,.0f} at 60%-40%)"),
        ("weights", f"{mem['weights_bytes'] / TB:.2f} TB; x4-6 = "
                    f"{mem['seed_range_bytes'][0] / TB:.1f}-{mem['seed_range_bytes'][1] / TB:.1f}"
                    f" TB; exact model states {mem['model_states_bytes'] / TB:.1f} TB "
                    f"({mem['bytes_per_param']:.0f} B/param) >= {mem['min_cards_for_states']:,}"
                    f" cards"),
        ("gradient sync", f"{r['gradient_bytes_per_sync'] / GB:.0f} GB per step"),
    ]
    if "sync_bandwidth_bytes_per_s" in r:
        peak = r["sync_peak_bandwidth_bytes_per_s"]
        rows.append(("sync bandwidth", f"{r['sync_bandwidth_bytes_per_s'] / GB:,.0f} GB/s "
                                       f"every {r['sync_interval_s']:.3g} s (peak "
                                       f"{peak[0] / GB:,.0f}-{peak[1] / GB:,.0f} GB/s)"))
        multiple = "a multiple" if r["supernode_multiple_of_tp"] else "NOT a multiple"
        rows.append(("supernode size", f"{r['supernode_size']} GPUs, TP={r['tp']} "
                                       f"({multiple} of TP)"))
    rows.append(("supernodes needed", f"{r['supernodes_needed']:,}"))
    for phase, name in ((1, "phase 1"), (2, f"phase 2 (+{r['headroom']:.0%})")):
        rows.append((name, f"{r[f'phase{phase}_gpus']:,} GPUs = "
                           f"{r[f'phase{phase}_supernodes']:,} supernodes = "
                           f"{r[f'phase{phase}_units']:.3g} x {r['unit_gpus']:,}-GPU units"))
    links = r.get("scale_out_links_per_supernode")
    if links:
        rows.append(("links out per supernode",
                     f"{links['recommended']} (traffic {links['needed_by_traffic']}, seed "
                     f"minimum {links['seed_minimum']}, template has "
                     f"{links['configured_in_template']}) of {links['link_bytes_per_s'] / GB:.0f}"
                     f" GB/s; inside {links['scale_up_aggregate_bytes_per_s'] / TB:.1f} TB/s"))
    return rows


def print_sizing(r: dict) -> None:
    """Human-readable sizing and its cross-check."""
    table = Table(title=f"sizing {rich_safe(r['workload'])}: {r['tokens']:.3g} tokens in "
                        f"{r['days']:g} days on {rich_safe(r['template'])}", show_header=False)
    for name, value in _rows(r):
        table.add_row(name, rich_safe(value, None))
    stdout.print(table)
    check = r["cross_check"]
    if check["feasible"]:
        b = check["best_plan"]
        verdict = "meets" if check["meets_deadline"] else "MISSES"
        stdout.print(f"cross-check: plan on {check['gpus']:,} GPUs -> TP={b['tp']} PP={b['pp']} "
                     f"DP={b['dp']} CP={b['cp']} EP={b['ep']}, MFU {check['mfu']:.1%}, "
                     f"{check['days_predicted']:.1f} days ({verdict} the {r['days']:g}-day "
                     f"deadline; {check['cards_at_plan_mfu']:,.0f} cards at that MFU)",
                     highlight=False)
    else:
        stdout.print(f"cross-check: no plan on {check['gpus']:,} GPUs: "
                     f"{check['advice']['reason']}", highlight=False, markup=False)


@app.command("size")
@handles_input_errors
def size_command(
    workload: str = typer.Option(..., "--workload", help="Workload file or preset name."),
    tokens: float = typer.Option(..., "--tokens", help="Training tokens (e.g. 15e12)."),
    days: float = typer.Option(..., "--days", help="Wall-clock days to train."),
    accelerator: str | None = typer.Option(None, "--accelerator",
                                           help="Catalog accelerator (default H100)."),
    cluster: str | None = typer.Option(None, "--cluster", help="Template cluster (preset or "
                                       "file) whose unit is repeated; default by accelerator."),
    utilization: str = typer.Option("0.5", "--utilization",
                                    help="0.4-0.6 per seed 003, or 'plan' for the best "
                                         "plan's MFU."),
    headroom: float = typer.Option(DEFAULT_HEADROOM, "--headroom",
                                   help="Growth headroom of phase 2 (seed: 0.2-0.3)."),
    global_batch: GlobalBatch = None,
    out: Path | None = typer.Option(None, "--out", help="Write the sized cluster (phase 1) "
                                    "as a cluster file here (atomically)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Cards, memory, sync bandwidth, supernodes and links for a training requirement."""
    inputs = [p for p in (cluster, workload) if p]
    if out is not None:
        check_output_file(out, "--out", inputs=inputs)
    template = load_cluster_spec(cluster) if cluster else template_for(accelerator)
    req = SizingInput(load_workload(workload), tokens, days, template,
                      _utilization(utilization), headroom, global_batch)
    result = size(req)
    gpus = result["phase1_gpus"]
    spec, fabric = sized_cluster(template, gpus, f"{template.name}-sized-{gpus}")
    result["sized_cluster"] = {**fabric, "file": str(out) if out is not None else None}
    if out is not None:
        write_text(out, cluster_file_text(spec, (
            f"supernode size --workload {workload} --tokens {tokens:g} --days {days:g}: "
            f"phase 1, {gpus:,} GPUs\n{fabric['check']}")), "--out", inputs=inputs)
    if json_output:
        print_json(result)
    else:
        print_sizing(result)
        stdout.print(f"fabric check: {rich_safe(fabric['check'])}", highlight=False)
        if out is not None:
            stdout.print(f"wrote {rich_safe(str(out))} (cluster {rich_safe(fabric['name'])}: "
                         f"supernode plan --cluster {rich_safe(str(out))} ...)",
                         highlight=False)
