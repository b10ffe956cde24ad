"""The generated topology info metrics: one 1-valued series per GPU, host, NIC, switch, rack.

Written as a Prometheus text file (``topology.prom``, for node-exporter's textfile
collector or any static exporter), fed to the offline evaluator, and used as input series
in the generated promtool tests. The recording rules join these labels onto the exporters'
series (:meth:`~supernode.monitor.context.PackContext.on`).
"""

from __future__ import annotations

from supernode.monitor.config import MonitorConfig
from supernode.monitor.context import INFO_METRICS
from supernode.monitor.exposition import exposition_text
from supernode.monitor.placement import GpuPlace, HostPlace, MonitorTopology, NicPlace

HELP = {
    "gpu": "Topology of one GPU from the cluster description (supernode, rack, power shelf, "
           "CDU, leaf switch of its NIC rail).",
    "host": "Topology of one host or NVSwitch tray from the cluster description.",
    "nic": "Topology of one scale-out NIC port: the leaf switch it plugs into.",
    "switch": "A scale-out switch of the cluster description and its tier.",
    "rack": "A rack of the cluster description and the CDU that cools it.",
}


def _clean(labels: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if v != ""}


def host_labels(host: HostPlace, config: MonitorConfig, cluster: str) -> dict[str, str]:
    """Labels of a host's info series."""
    return _clean({config.labels.host: host.hostname, "cluster": cluster, "role": host.role,
                   "supernode": host.supernode, "rack": host.rack,
                   "power_shelf": host.power_shelf, "cdu": host.cdu})


def gpu_labels(gpu: GpuPlace, config: MonitorConfig, cluster: str) -> dict[str, str]:
    """Labels of a GPU's info series."""
    host = gpu.host
    return _clean({config.labels.host: host.hostname, config.labels.gpu: str(gpu.gpu),
                   "cluster": cluster, "supernode": gpu.supernode, "rack": host.rack,
                   "power_shelf": host.power_shelf, "cdu": host.cdu, "leaf": gpu.leaf,
                   "rail": gpu.rail})


def nic_labels(nic: NicPlace, config: MonitorConfig, cluster: str) -> dict[str, str]:
    """Labels of a NIC port's info series."""
    host = nic.host
    return _clean({config.labels.host: host.hostname, config.labels.nic_device: nic.device,
                   "cluster": cluster, "supernode": host.supernode, "rack": host.rack,
                   "power_shelf": host.power_shelf, "cdu": host.cdu, "leaf": nic.leaf,
                   "rail": str(nic.rail)})


def info_series(topology: MonitorTopology, config: MonitorConfig
                ) -> dict[str, list[dict[str, str]]]:
    """Label sets of every info series, by kind (``gpu``, ``host``, ``nic``, ...)."""
    name = topology.cluster
    return {
        "gpu": [gpu_labels(g, config, name) for g in topology.gpus],
        "host": [host_labels(h, config, name) for h in topology.hosts],
        "nic": [nic_labels(n, config, name) for n in topology.nics],
        "switch": [{config.labels.switch: s, "cluster": name, "tier": tier}
                   for s, tier in topology.switches],
        "rack": [{config.labels.rack: r, "cluster": name, "cdu": cdu}
                 for r, cdu in topology.racks],
    }


def topology_exposition(topology: MonitorTopology, config: MonitorConfig) -> str:
    """The topology info metrics as Prometheus text format."""
    series = info_series(topology, config)
    return exposition_text((INFO_METRICS[kind], HELP[kind], "gauge", series[kind])
                           for kind in INFO_METRICS if series[kind])
