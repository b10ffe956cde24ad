"""``supernode sweep SPEC``: plan every variant of a cluster/workload sweep; table + plots."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.commands._progress import progress
from supernode.errors import InputError
from supernode.outputs import check_output_folder
from supernode.planner.sweep_output import write_results
from supernode.planner.sweep_run import make_tasks, run_tasks
from supernode.planner.sweep_spec import load_sweep_spec
from supernode.textsafe import rich_safe


def _summary(rows: list[dict], keys: list[str]) -> Table:
    table = Table(title="sweep results (best plan of each variant)")
    for col in ("#", *keys, "status", "tp", "pp", "dp", "cp", "ep", "step s", "MFU", "comm"):
        table.add_column(col, overflow="fold")
    for r in rows:
        ok = r.get("status") == "ok"
        swept = ("-" if r.get(k) is None else rich_safe(r[k]) for k in keys)
        table.add_row(str(r["variant"]), *swept, r.get("status", ""),
                      *(str(r.get(k, "")) if ok else "-" for k in ("tp", "pp", "dp", "cp", "ep")),
                      f"{r['step_time_s']:.4g}" if ok else "-",
                      f"{r['mfu']:.1%}" if ok else "-",
                      f"{r['comm_share']:.0%}" if ok else rich_safe((r.get("error") or "")[:60]))
    return table


@app.command("sweep")
@handles_input_errors
def sweep_command(
    spec_file: Path = typer.Argument(..., metavar="SPEC", help="Sweep spec (YAML/JSON)."),
    address: str | None = typer.Argument(None, metavar="[ADDRESS]",
                                         help="Ray cluster address, after --ray."),
    ray: bool = typer.Option(False, "--ray", help="Run on Ray: `--ray` for a local "
                                                  "instance, `--ray ADDRESS` for a cluster."),
    workers: int | None = typer.Option(None, "--workers",
                                       help="Parallel workers (default: CPU count; at most "
                                            "one per variant)."),
    out: Path | None = typer.Option(None, "--out", help="Output folder "
                                                       "(default: sweep-<name>)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    json_output: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Plan each variant (Cartesian or listed) and write results.csv/json and plots."""
    if address is not None and not ray:
        raise InputError("ADDRESS", "an address is only taken after --ray")
    spec, variants = load_sweep_spec(spec_file)
    inputs: tuple[str | Path, ...] = (spec_file, *(
        v for v in spec.base.model_dump().values() if isinstance(v, str)))
    folder = check_output_folder(out or Path(f"sweep-{spec.name}"), "--out", inputs)
    keys = list(dict.fromkeys(k for v in variants for k in v))
    tasks = make_tasks(spec, variants)
    start = time.perf_counter()
    with progress("sweep", len(tasks), "variants", quiet or json_output) as bar:
        rows = run_tasks(tasks, workers=workers, ray_address=address, use_ray=ray,
                         on_done=lambda: bar.advance(spec.name))
    meta = {"name": spec.name, "description": spec.description, "base": spec.base.model_dump(),
            "mode": spec.mode, "keys": keys, "variants": len(rows),
            "executor": "ray" if ray else "local", "wall_time_s": time.perf_counter() - start}
    paths = write_results(rows, keys, meta, folder, "--out", inputs=inputs)
    if json_output:
        print_json({"meta": meta, "rows": rows, "files": [str(p) for p in paths]})
        return
    stdout.print(_summary(rows, keys))
    stdout.print(f"{len(rows)} variants in {meta['wall_time_s']:.1f} s; wrote "
                 + ", ".join(rich_safe(p) for p in paths), highlight=False)
