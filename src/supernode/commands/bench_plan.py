"""``supernode bench-plan --cluster C``: the nccl-tests runs that pin the model's parameters.

Prints (or writes with ``--out``, atomically) a bash script of nccl-tests commands — ops,
sizes and rank sets per tier (docs/measurements.md) — whose logs ``supernode compare``
reads. Run it after every change of the stack and gate on ``compare --fail-below 0.9``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from supernode.cluster.load import load_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands.collective import parse_size
from supernode.errors import InputError
from supernode.measurements.bench_plan import bench_plan
from supernode.measurements.bench_script import plan_dict, render_script
from supernode.outputs import atomic_path, check_output_file, output_errors
from supernode.textsafe import rich_safe


@app.command("bench-plan")
@handles_input_errors
def bench_plan_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset."),
    launcher: str = typer.Option("mpirun", "--launcher", help="mpirun or srun."),
    iters: int = typer.Option(20, "--iters", help="Timed iterations per size (nccl-tests -n)."),
    max_bytes: str = typer.Option(None, "--max-bytes",
                                  help="Largest size, e.g. 4G (default: from the model)."),
    out: Path = typer.Option(None, "--out", help="Write the script to this file (atomically)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Write the short list of nccl-tests commands that pin this cluster's model."""
    loaded = load_cluster(cluster)
    cap = None
    if max_bytes is not None:
        try:
            cap = parse_size(max_bytes)
        except InputError as exc:
            raise InputError("--max-bytes", exc.message.replace("--sizes", "--max-bytes")
                             ) from None
    runs = bench_plan(loaded, max_bytes=cap)
    script = render_script(runs, loaded.name, launcher=launcher, iters=iters)
    if out is not None:
        check_output_file(out, "--out")  # the path text, its folder, what is there
        with output_errors(out, "--out"), atomic_path(out) as tmp:
            tmp.write_text(script, encoding="utf-8")
            tmp.chmod(0o755)
    if json_output:
        print_json(plan_dict(runs, loaded.name, launcher, iters))
    elif out is not None:
        stdout.print(f"{len(runs)} runs; wrote {rich_safe(out)}", highlight=False)
    else:
        typer.echo(script, nl=False)
