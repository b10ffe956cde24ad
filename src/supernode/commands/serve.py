"""``supernode serve``: the best serving deployments of a model on a cluster under targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import CalibrationFile, calibrated
from supernode.serve.request import build_request, serve_spec
from supernode.textsafe import rich_safe

#: Frontier points the table shows (the JSON has all of them).
FRONTIER_ROWS = 12


def _usd(value: float | None) -> str:
    return "-" if value is None else f"{value:,.3f}"


def _layout(r: dict[str, Any]) -> str:
    return f"TP{r['tp']} PP{r['pp']} DP{r['dp']} EP{r['ep']}"


def print_plan(r: dict[str, Any]) -> None:
    """The ranked deployments, the chosen mode and the frontier, as tables."""
    t = r["traffic"]
    load = (f"concurrency {t['concurrency']:,.0f}" if t["concurrency"] else
            f"{t['request_rate']:,.4g} requests/s" if t["request_rate"] else "offline")
    targets = ", ".join(f"{k.split('_')[0].upper()} <= {t[k]:,.4g} ms"
                        for k in ("ttft_ms", "tpot_ms") if t[k]) or "no latency targets"
    stdout.print(f"{rich_safe(r['model'])} on {r['gpus']:,} x {rich_safe(r['accelerator'])} "
                 f"({r['scale_up_gpus']}-GPU scale-up domains): {t['input_tokens']:,.0f} in / "
                 f"{t['output_tokens']:,.0f} out tokens, {load}, {targets}; "
                 f"{r['candidates']:,} deployments tried", highlight=False)
    agg = r["aggregated"]
    table = Table(title="aggregated deployments, by output tokens/s per GPU")
    for col in ("rank", "layout", "batch", "inst.", "tok/s/GPU", "tok/s/user", "TTFT ms",
                "TPOT ms", "$/M tok", "why it lost"):
        table.add_column(col, justify="left" if col in ("layout", "why it lost") else "right")
    rows = ([agg["best"]] if agg["best"] else []) + agg["runners_up"]
    for i, d in enumerate(rows, start=1):
        table.add_row(str(i), _layout(d), f"{d['batch_per_dp_rank']:,}", str(d["instances"]),
                      f"{d['output_tokens_per_s_per_gpu']:,.1f}",
                      f"{d['tokens_per_s_per_user']:,.1f}", f"{d['ttft_ms']:,.1f}",
                      f"{d['tpot_ms']:,.2f}", _usd(d.get("usd_per_million_output_tokens")),
                      rich_safe(d.get("why", "best"), None))
    stdout.print(table)
    dis = r["disaggregated"]
    if dis:
        stdout.print(f"disaggregated: prefill {_layout(dis['prefill'])} on "
                     f"{dis['prefill_gpus']:,} GPUs, decode {_layout(dis['decode'])} batch "
                     f"{dis['decode']['batch_per_dp_rank']:,} on {dis['decode_gpus']:,} GPUs: "
                     f"{dis['output_tokens_per_s_per_gpu']:,.1f} tok/s/GPU, TTFT "
                     f"{dis['ttft_ms']:,.1f} ms (KV transfer {dis['kv_transfer_ms']:,.2f} ms), "
                     f"TPOT {dis['tpot_ms']:,.2f} ms", highlight=False)
    stdout.print(f"mode: {r['mode']} ({rich_safe(r['mode_reason'], None)})", highlight=False)
    price = r["price"]
    stdout.print(f"prices at ${price['usd_per_gpu_hour']:,.2f} per GPU-hour ("
                 f"{'listed' if price['listed'] else 'given or the fallback'}: "
                 f"{rich_safe(price['source'], None)})", highlight=False)
    points = r["pareto"]
    if len(points) > FRONTIER_ROWS:  # evenly spaced along the frontier, both ends kept
        step = (len(points) - 1) / (FRONTIER_ROWS - 1)
        points = [points[round(i * step)] for i in range(FRONTIER_ROWS)]
    front = Table(title=f"Pareto frontier: tokens/s per GPU vs tokens/s per user "
                        f"({len(points)} of {len(r['pareto'])} points; --json: all)")
    for col in ("tok/s/user", "tok/s/GPU", "layout", "batch"):
        front.add_column(col, justify="left" if col == "layout" else "right")
    for d in points:
        front.add_row(f"{d['tokens_per_s_per_user']:,.1f}",
                      f"{d['output_tokens_per_s_per_gpu']:,.1f}", _layout(d),
                      f"{d['batch_per_dp_rank']:,}")
    stdout.print(front)


def plot_frontier(r: dict[str, Any], path: Path) -> Path:
    """The Pareto frontier (and the chosen deployment) as a PNG."""
    from supernode.plotting import agg_figure, colour, save_png

    fig = agg_figure(7.0, 4.5)
    ax = fig.add_subplot(1, 1, 1)
    xs = [d["tokens_per_s_per_user"] for d in r["pareto"]]
    ys = [d["output_tokens_per_s_per_gpu"] for d in r["pareto"]]
    ax.plot(xs, ys, marker="o", color=colour("compute"), label="Pareto frontier")
    best = r["aggregated"]["best"]
    if best:
        ax.scatter([best["tokens_per_s_per_user"]], [best["output_tokens_per_s_per_gpu"]],
                   marker="*", s=160, zorder=3, label="chosen (aggregated)")
        ax.legend()
    ax.set_xlabel("output tokens/s per user (1 / TPOT)")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_title(f"{r['model']} on {r['gpus']} x {r['accelerator']}")
    ax.grid(True, alpha=0.3)
    return save_png(fig, path)


@app.command("serve")
@handles_input_errors
@calibrated
def serve_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset."),
    model: str | None = typer.Option(None, "--model", help="Workload file or preset name."),
    serve_file: str | None = typer.Option(None, "--serve", help="A serve block or file "
                                                                "(flags override it)."),
    isl: float | None = typer.Option(None, "--isl", help="Mean input tokens per request."),
    osl: float | None = typer.Option(None, "--osl", help="Mean output tokens per request."),
    trace: str | None = typer.Option(None, "--trace", help="CSV of request lengths "
                                                           "(input_tokens, output_tokens)."),
    concurrency: float | None = typer.Option(None, "--concurrency",
                                             help="Requests in flight in the system."),
    rate: float | None = typer.Option(None, "--rate", help="Arrivals, requests per second."),
    ttft_ms: float | None = typer.Option(None, "--ttft-ms", help="TTFT target (ms)."),
    tpot_ms: float | None = typer.Option(None, "--tpot-ms", help="TPOT target (ms)."),
    precision: str | None = typer.Option(None, "--precision", help="bf16, fp8 or fp4."),
    kv_precision: str | None = typer.Option(None, "--kv-precision", help="bf16 or fp8."),
    gpus: int | None = typer.Option(None, "--gpus", min=1, help="GPUs that serve "
                                                                "(default: the cluster's)."),
    top: int = typer.Option(5, "--top", min=1, max=100, help="Deployments listed."),
    price: float | None = typer.Option(None, "--price-per-gpu-hour",
                                       help="USD per GPU-hour (default: documented table)."),
    no_disagg: bool = typer.Option(False, "--no-disagg", help="Skip disaggregated pools."),
    plot: Path | None = typer.Option(None, "--plot", help="Write the frontier to this PNG."),
    calibration: CalibrationFile = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Rank serving deployments by tokens/s per GPU under TTFT/TPOT targets."""
    from supernode.outputs import check_output_file
    from supernode.serve.plan import plan_serving

    flags = {"model": model, "input_tokens": isl, "output_tokens": osl, "trace_file": trace,
             "concurrency": concurrency, "request_rate_per_s": rate, "ttft_ms": ttft_ms,
             "tpot_ms": tpot_ms, "precision": precision, "kv_cache_precision": kv_precision,
             "gpus": gpus}
    spec = serve_spec(serve_file, flags)
    inputs = [p for p in (serve_file, trace, cluster, model) if p]
    target = check_output_file(plot, "--plot", inputs) if plot is not None else None
    result = plan_serving(build_request(spec, cluster, top, not no_disagg, price))
    if target is not None:
        result["plot"] = str(plot_frontier(result, target))
    if json_output:
        print_json(result)
    else:
        print_plan(result)
        if target is not None:
            stdout.print(f"plot: {rich_safe(result['plot'], None)}", highlight=False)
