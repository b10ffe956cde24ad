"""``supernode design A B [C] --workload W``: each cluster reviewed by the one review
pipeline (:func:`supernode.design.run_design`), then compared side by side
(:func:`supernode.design.compare.compare_designs`) into one folder: ``a/``, ``b/``, ``c/``
(each design's full report folder) and the compare ``report.html``, ``compare.md`` and
``compare.json``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from string import ascii_lowercase

from supernode.commands._output import print_json, stdout
from supernode.design import DesignInput
from supernode.errors import InputError
from supernode.textsafe import rich_safe

#: The positional argument's name in error lines.
ARGUMENT = "CLUSTER"


def check_clusters(clusters: list[str], workload: str | None, example: str | None) -> None:
    """InputError unless 2 to :data:`~supernode.design.compare.MAX_DESIGNS` distinct
    clusters are given with a workload and no ``--example``."""
    from supernode.design.compare import MAX_DESIGNS

    if len(clusters) > MAX_DESIGNS:
        raise InputError(ARGUMENT, f"compare 2 or {MAX_DESIGNS} designs; "
                                   f"{len(clusters)} given")
    seen: set[str] = set()
    for c in clusters:
        key = str(Path(c).resolve()) if Path(c).exists() else c
        if key in seen:
            raise InputError(ARGUMENT, f"{c!r} is given twice; compare distinct designs")
        seen.add(key)
    if example is not None:
        raise InputError("--example", "give either --example or the clusters to compare")
    if workload is None:
        raise InputError("--workload", "give --workload with the clusters to compare")


def _preload(clusters: list[str]) -> None:
    """Every cluster loaded once before any review runs (bad input fails first)."""
    from supernode.cluster.load import load_cluster_spec

    for c in clusters:
        load_cluster_spec(c)


def run_compare(clusters: list[str], base: DesignInput, out: Path, files_in: list,
                review: Callable[[DesignInput, str], tuple[dict, dict[str, str]]],
                json_output: bool) -> None:
    """Review each cluster (``review``: input, label -> results dict with the artefact
    texts under ``files``), compare, write one folder and print the comparison."""
    from dataclasses import replace

    from supernode.design.compare import compare_designs
    from supernode.report import write_compare

    _preload(clusters)
    labels = list(ascii_lowercase[:len(clusters)])
    reviewed = []
    for label, cluster in zip(labels, clusters, strict=True):
        data, files = review(replace(base, cluster=cluster), label)
        reviewed.append((label, data, files))
    compare = compare_designs([d for _, d, _ in reviewed], labels, clusters)
    paths = write_compare(compare, reviewed, out, "--out", files_in)
    if json_output:
        print_json(compare)
        return
    for d in compare["designs"]:
        stdout.print(f"{d['label']}: {rich_safe(d['cluster'])} x {rich_safe(d['workload'])}",
                     highlight=False)
    for f in compare["figures"]:
        values = ", ".join(f"{lab} {_shown(v, f['kind'])}"
                           for lab, v in zip(labels, f["values"], strict=True))
        won = ", ".join(f["winners"]) or "tie"
        stdout.print(f"  {f['label']} ({f['direction']} wins): {values}; winner {won}",
                     highlight=False)
    changed = sum(1 for r in compare["bom"] if any(r["deltas"]))
    stdout.print(f"  bill of materials: {changed} of {len(compare['bom'])} components differ",
                 highlight=False)
    stdout.print(f"report: {rich_safe(paths[0])} (and compare.md, compare.json, "
                 f"{', '.join(f'{lab}/' for lab in labels)})", highlight=False)


def _shown(value: object, kind: str) -> str:
    from supernode.report.format import format_value

    return rich_safe(format_value(value, kind))
