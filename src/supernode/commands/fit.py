"""``supernode fit``: is the workload communication-bound, and would a supernode pay off?"""

from __future__ import annotations

import typer
from rich.table import Table

from supernode.cluster.load import load_cluster_spec
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._plan_options import GlobalBatch
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
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Plan the job on 8-GPU servers and on larger domains; answer the seeds' questions."""
    req = FitInput(load_workload(workload), load_cluster_spec(cluster), gpus, global_batch,
                   _sizes(sizes), price, premium)
    result = workload_fit(req)
    if json_output:
        print_json(result)
    else:
        print_fit(result)
