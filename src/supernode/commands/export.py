"""``supernode export``: the cluster's topology for Slurm, Kubernetes, Kueue, Volcano, NCCL.

A thin shell over :func:`supernode.exports.export_files`; the files of every format asked
for are written as one set into ``--out`` (all or none: :func:`supernode.outputs.
output_folder`).
"""

from __future__ import annotations

from pathlib import Path

import typer

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import scale_cluster
from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.errors import InputError
from supernode.exports import ALL_FORMATS, EXPORT_FORMATS, ExportOptions, export_files
from supernode.outputs import check_output_folder, output_folder
from supernode.textsafe import rich_safe


@app.command("export")
@handles_input_errors
def export_command(
    cluster: str = typer.Option(..., "--cluster", help="Cluster file or preset."),
    formats: list[str] = typer.Option(..., "--format", help="Format (repeat): "
                                      f"{', '.join(EXPORT_FORMATS.names())}, or all "
                                      f"({', '.join(ALL_FORMATS)})."),
    out: Path = typer.Option(..., "--out", help="Folder for the files."),
    gpus: int = typer.Option(None, "--gpus", help="Grow the cluster by whole units to this "
                                                  "many GPUs first."),
    node_prefix: str = typer.Option(None, "--node-prefix", help="Node names are "
                                    "<prefix>-001, ... (default: the host model name)."),
    labels: str = typer.Option("topograph", "--labels", help="Label names: topograph (v1.0) "
                                                             "or nvidia-legacy."),
    fabric_label: list[str] = typer.Option(None, "--fabric-label", help="Custom fabric "
                                           "label key, nearest tier first (repeat)."),
    accelerator_label: str = typer.Option(None, "--accelerator-label",
                                          help="Custom accelerator-domain label key."),
    flavor_label: str = typer.Option(None, "--flavor-label", help="KEY=VALUE every node "
                                     "gets and the Kueue ResourceFlavor selects (default "
                                     "supernode-cluster=<cluster>)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only (stable keys)."),
) -> None:
    """Write Slurm topology.conf/topology.yaml, Kubernetes node labels, Kueue and Volcano
    objects and NCCL topology XML for a cluster."""
    check_output_folder(out, "--out", inputs=[cluster])
    if gpus is not None and gpus < 1:
        raise InputError("--gpus", f"must be an integer ≥ 1, got {gpus}")
    resolved = scale_cluster(load_cluster_spec(cluster), gpus).cluster
    options = ExportOptions(node_prefix, labels, tuple(fabric_label or ()), accelerator_label,
                            flavor_label)
    result = export_files(resolved, list(formats), options)
    written: dict[str, str] = {}
    with output_folder(out, "--out", inputs=[cluster]) as staging:
        for files in result.files.values():
            for name, text in files.items():
                (staging / name).write_text(text, encoding="utf-8")
                written[name] = str(out / name)
    if json_output:
        print_json(result.to_dict(written))
        return
    model = result.model
    stdout.print(rich_safe(f"{model.cluster.name}: {len(model.nodes):,} nodes, "
                           f"{model.hierarchy.domains:,} supernodes, "
                           f"{model.hierarchy.groups:,} port groups, "
                           f"{len(model.tree()):,} Slurm switches"), highlight=False)
    for fmt, files in result.files.items():
        for name in files:
            stdout.print(f"  {fmt:<12} {rich_safe(written[name])}", highlight=False)
    for note in result.notes:
        stdout.print(f"note: {rich_safe(note)}", highlight=False)
