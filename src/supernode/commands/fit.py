"""``supernode fit``: is the workload communication-bound, and would a supernode pay off?"""

from __future__ import annotations

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster_spec
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import CalibrationFile, GlobalBatch, calibrated
from supernode.errors import InputError
from supernode.planner.fit import (
    DEFAULT_SIZES,
    DEFAULT_SUPERNODE_PREMIUM,
    MAX_SIZES,
    FitInput,
    workload_fit,
)
from supernode.textsafe import rich_safe
from supernode.workload.presets import load_workload


def _sizes(text: str | None) -> tuple[int, ...]:
    if text is None:
        return DEFAULT_SIZES
    try:
        sizes = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise InputError("sizes", f"a comma-separated list of integers, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise InputError("sizes", f"sizes must be >= 1, got {text!r}")
    if len(set(sizes)) > MAX_SIZES:
        raise InputError("sizes", f"{len(set(sizes)):,} sizes; at most {MAX_SIZES} (each "
                                  "is a plan search)")
    return sizes


def _serving(serve: str, workload: str, cluster: str, gpus: int | None,
             sizes: tuple[int, ...], price: float | None, premium: float) -> dict:
    """:func:`~supernode.design.serving_fit.serving_fit` of the serve file on ``cluster``."""
    from supernode.design.serving_fit import serving_fit
    from supernode.serve.request import build_request, serve_spec

    spec = serve_spec(serve, {"gpus": gpus})
    if spec.model is None:
        spec = spec.model_copy(update={"model": workload})
    req = build_request(spec, cluster, 1, True, price)
    return serving_fit(req, load_cluster_spec(cluster), sizes, premium)


def print_serving_fit(r: dict) -> None:
    """The serving fit: one row per domain size, then the verdict."""
    table = Table(title=f"serving {rich_safe(r['model'])} on {r['gpus']:,} x "
                        f"{rich_safe(r['accelerator'])}: scale-up domain size")
    for col in ("domain", "mode", "tok/s/GPU", "gain vs 8", "TTFT ms", "TPOT ms",
                "decode comm", "20% line", "$/M tok", "layout (decode)"):
        table.add_column(col, justify="left" if col in ("mode", "layout (decode)") else
                         "right")
    for row in r["sizes"]:
        if not row["feasible"]:
            table.add_row(str(row["scale_up_size"]), "-", "-", "-", "-", "-", "-", "-", "-",
                          rich_safe(row.get("reason", ""), None))
            continue
        lay = row["layout"]
        table.add_row(str(row["scale_up_size"]), row["mode"],
                      f"{row['output_tokens_per_s_per_gpu']:,.1f}",
                      f"{row.get('speedup_vs_8', 1.0):.2f}x", f"{row['ttft_ms']:,.1f}",
                      f"{row['tpot_ms']:,.2f}", f"{row['decode_comm_share']:.0%}",
                      "over" if row["over_20pct"] else "under",
                      f"{row['usd_per_million_output_tokens']:,.3f}",
                      f"TP{lay['tp']} PP{lay['pp']} DP{lay['dp']} EP{lay['ep']}")
    stdout.print(table)
    stdout.print(f"verdict: {rich_safe(r['questions']['verdict'], None)}", highlight=False)


def print_fit(r: dict) -> None:
    """Sizes table and the three questions."""
    table = Table(title=f"{rich_safe(r['workload'])} on {r['gpus']:,} x "
                        f"{rich_safe(r['accelerator'])}, global batch "
                        f"{r['global_batch_sequences']:,}: scale-up domain size")
    for col in ("domain", "step s", "speedup vs 8", "MFU", "comm share", "20% line",
                "$/M tokens", "plan"):
        table.add_column(col, justify="left" if col == "plan" else "right")
    for row in r["sizes"]:
        if not row["feasible"]:
            table.add_row(str(row["scale_up_size"]), "-", "-", "-", "-", "-", "-",
                          rich_safe(row.get("reason", ""), None))
            continue
        p = row["plan"]
        table.add_row(str(row["scale_up_size"]), f"{row['step_time_s']:.4g}",
                      f"{row.get('speedup_vs_8', 1.0):.2f}x", f"{row['mfu']:.1%}",
                      f"{row['comm_share']:.0%}", "over" if row["over_20pct"] else "under",
                      f"{row['cost_per_million_tokens_usd']:.3f}",
                      f"TP={p['tp']} PP={p['pp']} DP={p['dp']} CP={p['cp']} EP={p['ep']}")
    stdout.print(table)
    q = r["questions"]
    q1, q2, q3 = q["communication_bound"], q["blast_radius"], q["cost"]
    share = q1["comm_share_on_8_gpu_servers"]
    if share is None:
        first = "1. Communication-bound? no plan fits on 8-GPU servers."
    else:
        side = "over" if q1["communication_bound"] else "under"
        first = (f"1. Communication-bound? communication is {share:.0%} of compute + "
                 f"communication on 8-GPU servers ({side} the 20% line; "
                 f"{q1['exposed_comm_share_on_8_gpu_servers']:.0%} of the step is left "
                 f"exposed); the best domain "
                 f"({q1['best_scale_up_size']} GPUs) is {(q1['best_speedup'] or 1.0):.2f}x "
                 f"faster.")
    lines = [
        first,
        f"2. Blast radius: one GPU or switch failure stalls {q2['blast_radius_gpus']} GPUs "
        f"({q2['blast_radius_vs_8']:.0f}x an 8-GPU server, "
        f"{q2['share_of_job_lost_per_failure_until_repair']:.1%} of the job until repaired); "
        f"the job expects {q2['job_interruptions_per_day']:.2f} interruptions per day either "
        f"way (Llama 3 fleet rate).",
    ]
    if "cost_per_million_tokens_best" in q3:
        lines.append(f"3. Cost: ${q3['cost_per_million_tokens_8']:.3f} per million tokens on "
                     f"8-GPU servers vs ${q3['cost_per_million_tokens_best']:.3f} "
                     f"(premium {r['supernode_premium']:.0%}); break-even premium "
                     f"{q3['break_even_premium']:.0%}.")
    lines.append(f"Verdict: {q['verdict']}.")
    for line in lines:
        stdout.print(line, highlight=False, markup=False)
    stdout.print(f"({rich_safe(r['price_note'], None)}; supernode premium is an assumption, "
                 f"--supernode-premium)", highlight=False)


@app.command("fit")
@handles_input_errors
@calibrated
def fit_command(
    workload: str = typer.Option(..., "--workload", help="Workload file or preset name."),
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset: its chips "
                                                       "and NICs are kept, domains resized."),
    gpus: int | None = typer.Option(None, "--gpus", min=1, help="GPUs of the job (default: "
                                                                "the cluster's)."),
    global_batch: GlobalBatch = None,
    sizes: str | None = typer.Option(None, "--sizes", help="Domain sizes to try, e.g. "
                                                           "8,36,72,144,576."),
    price: float | None = typer.Option(None, "--price-per-gpu-hour",
                                       help="USD per GPU-hour (default: documented table)."),
    premium: float = typer.Option(DEFAULT_SUPERNODE_PREMIUM, "--supernode-premium",
                                  help="Extra price per GPU-hour in domains > 8 (assumed)."),
    serve: str | None = typer.Option(None, "--serve", help="A serve block or file (docs/"
                                     "serving.md): answer for serving it instead of "
                                     "training (its model defaults to --workload)."),
    calibration: CalibrationFile = None,
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Plan the job on 8-GPU servers and on larger domains; answer the seeds' questions."""
    if serve is not None:
        result = _serving(serve, workload, cluster, gpus, _sizes(sizes), price, premium)
        if json_output:
            print_json(result)
        else:
            print_serving_fit(result)
        return
    req = FitInput(load_workload(workload), load_cluster_spec(cluster), gpus, global_batch,
                   _sizes(sizes), price, premium)
    result = workload_fit(req)
    if json_output:
        print_json(result)
    else:
        print_fit(result)
