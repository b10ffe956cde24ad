"""The scheduling rule (seed 000 §4.1, seed 001 §4.2): what a topology-blind scheduler costs
on this design, and the exported topology files as the fix.

It reads the review's scheduling result (``Facts.scheduling``:
:func:`supernode.design.scheduling.run_scheduling`): the topology-blind policy (first-fit:
what a scheduler without the topology does) against the topology-aware one (best-fit:
what the exported topology lets Slurm, Kueue or Volcano do), on the same jobs and seed.
The fix names the exported files the review wrote (``Facts.artefacts``); its predicted
effect is the topology-aware policy's figures from the same run.
"""

from __future__ import annotations

from typing import Any

from supernode.rules._fmt import pct
from supernode.rules.facts import Facts
from supernode.rules.registry import Outcome, Threshold, check, number, rule

#: Export formats each scheduler reads, in the order the fix names them.
SCHEDULER_FORMATS = {"Slurm": ("slurm-block", "slurm-tree", "slurm-yaml"),
                     "Kubernetes": ("k8s-labels", "kueue", "volcano")}


def _policies(sch: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The topology-blind and topology-aware policies' metrics."""
    c, policies = sch["comparison"], sch["schedule"]["policies"]
    return policies[c["blind_index"]], policies[c["aware_index"]]


def exported_files(artefacts: dict[str, Any] | None) -> dict[str, list[str]]:
    """Per scheduler, the paths (in the design folder) of the exported files it reads."""
    out: dict[str, list[str]] = {}
    for scheduler, formats in SCHEDULER_FORMATS.items():
        rows = [r for r in (artefacts or {}).get("files", []) if r["format"] in formats
                and r["path"].endswith((".conf", ".yaml"))]
        rows.sort(key=lambda r: formats.index(r["format"]))
        if rows:
            out[scheduler] = [r["path"] for r in rows]
    return out


def _where(files: dict[str, list[str]]) -> str:
    """Slurm: one of its files; Kubernetes: the node labels with Kueue's or Volcano's."""
    parts = []
    for scheduler, paths in files.items():
        labels = [p for p in paths if "/k8s-labels/" in p]
        others = " or ".join(p for p in paths if p not in labels)
        parts.append(f"{scheduler}: " + (f"{labels[0]} with {others}" if labels and others
                                         else others or labels[0]))
    return "; ".join(parts) or "supernode export --format all"


def _figures(p: dict[str, Any]) -> str:
    return (f"TP groups of {pct(p['tp_crossing_share'])} of the TP jobs across supernodes, "
            f"mean slowdown {p['mean_slowdown']:.3f}x, spread {pct(p['slowdown_spread'])}, "
            f"useful GPU share {pct(p['goodput_utilisation'])} (GPUs held / slowdown)")


@rule("topology_blind_scheduling",
      "A topology-blind scheduler keeps the slowdown spread of co-located jobs <= 5 %",
      "seed 001 §4.2", "share", "<=", "scheduling", """
      Supernode hardware without a topology-aware scheduler is wasted: a job's tensor-parallel
      group lands across racks and its throughput drops to about 70 % or less (seed 000
      §4.1). Mapping each job onto one port group cut the performance variation between
      tenants from more than 20 % to less than 5 % (seed 001 §4.2). Measured by replaying
      the review's trace on the cluster under first-fit, what a scheduler that is not
      told the topology does: the spread (p95/p5 - 1) of the slowdowns of the multi-GPU
      jobs running at the same time, each job's slowdown predicted by the step-time model
      from its placement. The fix is to give the scheduler the exported topology files.""")
def topology_blind_scheduling(facts: Facts, threshold: Threshold) -> Outcome:
    """The topology-blind policy's slowdown spread; the fix predicted by the aware one's."""
    sch = facts.scheduling
    if sch is None:
        return Outcome("not_evaluated", None, "no scheduling replay (see the notes)")
    if facts.cluster.supernodes == 1:
        return Outcome("not_applicable", None, "one supernode: no tensor-parallel group can "
                                               "cross supernodes")
    blind, aware = _policies(sch)
    src, limit = sch["trace_source"], number(threshold)
    detail = (f"{blind['policy']} (topology-blind) on {src['jobs']:,} {src['kind']} jobs at "
              f"{pct(src['load'])} load: {_figures(blind)}")
    files = exported_files(facts.artefacts)
    fix = (f"give the scheduler the exported topology ({_where(files)}) so that jobs are "
           f"placed as {aware['policy']} places them")
    predicted = (f"{aware['policy']}: {_figures(aware)}; "
                 f"{blind['tp_crossing_jobs'] - aware['tp_crossing_jobs']:,} fewer TP jobs "
                 f"across supernodes, useful GPU share "
                 f"{100 * (aware['goodput_utilisation'] - blind['goodput_utilisation']):+.1f} "
                 "points")
    return check(blind["slowdown_spread"] <= limit, blind["slowdown_spread"], detail, fix,
                 predicted, aware["slowdown_spread"])
