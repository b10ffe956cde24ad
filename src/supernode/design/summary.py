"""Short summaries of the cluster and workload for the report's header and tables."""

from __future__ import annotations

from typing import Any

from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec
from supernode.topology.metrics import TopologyReport
from supernode.workload.params import total_params


def cluster_summary(cluster: Cluster, topo: TopologyReport) -> dict[str, Any]:
    """Name, parts and sizes of the cluster (SI units)."""
    up, out = cluster.scale_up, cluster.scale_out
    return {
        "name": cluster.name, "description": cluster.spec.description,
        "source": list(cluster.spec.source),
        "accelerator": cluster.accelerator.name, "accelerators": cluster.accelerators,
        "hosts": cluster.hosts, "accelerators_per_host": cluster.host.accelerators_per_host,
        "host": cluster.host.name, "supernodes": cluster.supernodes,
        "memory_bytes": cluster.accelerator.memory_bytes,
        "memory_bandwidth_bytes_per_s": cluster.accelerator.memory_bandwidth_bytes_per_s,
        "tdp_w": cluster.accelerator.tdp_w,
        "scale_up": {"kind": up.kind, "size": up.size,
                     "switch": up.switch.name if up.switch else None,
                     "switch_chips": up.switch_chips, "switch_tiers": up.switch_tiers,
                     "links_per_accelerator": up.links_per_accelerator,
                     "link_bandwidth_bytes_per_s": up.link_bandwidth_bytes_per_s,
                     "bandwidth_per_accelerator_bytes_per_s":
                         up.bandwidth_per_accelerator_bytes_per_s,
                     "medium": up.medium, "dims": list(up.dims)},
        "scale_out": None if out is None else {
            "tiers": out.tiers, "switch": out.switch.name, "radix": out.switch.radix,
            "port_bandwidth_bytes_per_s": out.switch.port_bandwidth_bytes_per_s,
            "oversubscription": list(out.oversubscription),
            "rail_optimized": out.rail_optimized, "medium": out.medium,
            "nics_per_host": cluster.host.nic_count,
            "nic_bandwidth_bytes_per_s": cluster.host.nic_bandwidth_bytes_per_s,
            "switches": {t: n for t, n in topo.switches.items()
                         if t in ("leaf", "spine", "core")}},
    }


def workload_summary(w: WorkloadSpec) -> dict[str, Any]:
    """Name and sizes of the workload."""
    return {"name": w.name, "source": w.source, "params": float(total_params(w)),
            "layers": w.layers, "hidden": w.hidden, "heads": w.heads,
            "seq_len": w.seq_len, "moe": w.moe is not None,
            "experts": w.moe.experts if w.moe else None,
            "top_k": w.moe.top_k if w.moe else None}
