"""The files the design review writes beside its report: the cluster's topology for the
schedulers and NCCL (``exports/``: what ``supernode export`` writes, one sub-folder per
format) and its monitoring pack (``monitoring/``: what ``supernode monitor rules`` writes).

:func:`design_artefacts` returns the texts by their path inside the design folder and the
``results.json`` -> ``artefacts`` listing: per file its path, group, format, what loads it,
bytes and SHA-256; the export formats that do not apply to the cluster, with the reason;
the notes of both generators. Every format of :data:`~supernode.exports.EXPORT_FORMATS` is
exported alone with the default options (``slurm-tree`` and ``slurm-block`` both write
``topology.conf``), so each sub-folder holds the very bytes ``supernode export --cluster C
--format F`` writes; ``monitoring/`` those of ``supernode monitor rules --cluster C`` with
the same ``--prometheus-major``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from supernode.design.cache import cluster_key, memoised
from supernode.errors import InputError
from supernode.exports import EXPORT_FORMATS, export_files
from supernode.monitor.artefacts import render
from supernode.monitor.pack import RulePack
from supernode.monitor.storage import Semantics
from supernode.spec.resolved import Cluster

EXPORTS, MONITORING = "exports", "monitoring"
#: What loads each exported file: format -> file name (``*``: any) -> text (docs/exports.md).
EXPORT_LOADERS: dict[str, dict[str, str]] = {
    "slurm-tree": {"*": "Slurm slurmctld: topology.conf beside slurm.conf, with "
                        "TopologyPlugin=topology/tree"},
    "slurm-block": {"*": "Slurm slurmctld: topology.conf beside slurm.conf, with "
                         "TopologyPlugin=topology/block (jobs ask for whole blocks with "
                         "--segment)"},
    "slurm-yaml": {"*": "Slurm 25.05 or later: topology.yaml beside slurm.conf (partitions "
                        "pick a topology with Topology=)"},
    "k8s-labels": {"node-labels.yaml": "Kubernetes: the topology labels of every node (a "
                                       "List of Nodes with labels only)",
                   "label-nodes.sh": "sh with kubectl: kubectl label node ... --overwrite "
                                     "for every node"},
    "kueue": {"*": "kubectl apply: Kueue Topology and ResourceFlavor (topology-aware "
                   "scheduling)"},
    "volcano": {"*": "kubectl apply: Volcano HyperNodes (network-topology-aware "
                     "scheduling)"},
    "nccl-xml": {"*": "NCCL: NCCL_TOPO_FILE on every host of this type"},
}
#: What loads each monitoring file (docs/monitor.md).
MONITORING_LOADERS: dict[str, str] = {
    "rules.yaml": "Prometheus: rule_files (promtool check rules)",
    "rules-tests.yaml": "promtool test rules (1-minute evaluation steps)",
    "rules-tests-long.yaml": "promtool test rules (1-hour evaluation steps)",
    "dcgm-counters.csv": "dcgm-exporter -f",
    "grafana-dashboard.json": "Grafana: import dashboard",
    "topology.prom": "node-exporter textfile collector (--collector.textfile.directory)",
    "alertmanager-inhibit.yaml": "Alertmanager: merge into alertmanager.yml (inhibit_rules)",
    "manifest.json": "people and scripts: what was generated, the rules and the notes",
}


def export_loader(fmt: str, name: str) -> str:
    """What loads exported file ``name`` of format ``fmt``."""
    loaders = EXPORT_LOADERS.get(fmt, {})
    return loaders.get(name) or loaders.get("*") or "see docs/exports.md"


def _entry(path: str, group: str, fmt: str, loaded_by: str, text: str) -> dict[str, Any]:
    data = text.encode("utf-8")
    return {"path": path, "group": group, "format": fmt, "loaded_by": loaded_by,
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _exports(cluster: Cluster) -> tuple[dict[str, str], list[dict], list[dict], list[str]]:
    """Texts, listing rows, formats that do not apply and notes of every export format."""
    files: dict[str, str] = {}
    rows, skipped, notes = [], [], []
    for fmt in EXPORT_FORMATS.names():
        try:
            result = export_files(cluster, [fmt])
        except InputError as exc:
            skipped.append({"format": fmt, "reason": f"{exc.path}: {exc.message}"})
            continue
        notes += [n for n in result.notes if n not in notes]
        for name, text in result.files[fmt].items():
            path = f"{EXPORTS}/{fmt}/{name}"
            files[path] = text
            rows.append(_entry(path, EXPORTS, fmt, export_loader(fmt, name), text))
    return files, rows, skipped, notes


def design_artefacts(cluster: Cluster, pack: RulePack, semantics: Semantics, major: int
                     ) -> tuple[dict[str, str], dict[str, Any]]:
    """Texts by path inside the design folder, and ``results.json`` -> ``artefacts``
    (``pack``: the cluster's default monitoring pack). Memoised per process by (cluster,
    window rules, major) (:mod:`supernode.design.cache`)."""
    return memoised("artefacts", (cluster_key(cluster), semantics, major),
                    lambda: _artefacts(cluster, pack, semantics, major))


def _artefacts(cluster: Cluster, pack: RulePack, semantics: Semantics, major: int
               ) -> tuple[dict[str, str], dict[str, Any]]:
    files, rows, skipped, export_notes = _exports(cluster)
    monitoring = render(pack, semantics)
    for name, text in monitoring.files.items():
        path = f"{MONITORING}/{name}"
        files[path] = text
        rows.append(_entry(path, MONITORING, "monitor-rules",
                           MONITORING_LOADERS.get(name, "see docs/monitor.md"), text))
    formats = list(dict.fromkeys(r["format"] for r in rows if r["group"] == EXPORTS))
    listing = {"files": rows, "count": len(rows), "export_formats": formats,
               "not_applicable": skipped, "export_notes": export_notes,
               "monitoring_notes": list(monitoring.notes), "prometheus_major": major}
    return files, listing
