"""Findings from what NCCL's debug log says (``NCCL_DEBUG=INFO``): the network it fell back
to, NVLS it could not use, GPUDirect RDMA it did not use, algorithms forced or chosen
differently from the model, and NCCL's own warnings. See :mod:`.findings`."""

from __future__ import annotations

from supernode.measurements.compare import SetComparison
from supernode.measurements.findings_base import Finding, size_label, variables
from supernode.measurements.model import MeasurementSet
from supernode.measurements.nccl_debug import MODEL_ALGORITHMS
from supernode.spec.resolved import Cluster


def _network(log, cluster: Cluster, multi_host: bool) -> list[Finding]:
    if log.network == "Socket" and multi_host and cluster.scale_out is not None:
        return [Finding("critical", "socket_fallback", (
            "NCCL used IP sockets, not RDMA (NET/IB found no device or was disabled): "
            "inter-node traffic runs far below the NICs' rate"),
            variables("NCCL_IB_HCA", "NCCL_IB_DISABLE", "NCCL_SOCKET_IFNAME"))]
    return []


def _nvls(log, cluster: Cluster) -> list[Finding]:
    switch = cluster.scale_up.switch
    if log.nvls_available is False and switch is not None and switch.in_network_reduction:
        return [Finding("warning", "nvls_unavailable", (
            f"NCCL reports NVLS multicast not available, yet {switch.name} reduces in the "
            "switch: all-reduce inside the domain falls back to rings and trees"),
            variables("NCCL_NVLS_ENABLE"))]
    return []


def _gdr(log) -> list[Finding]:
    if log.gdr is False:
        return [Finding("warning", "no_gdrdma", (
            "no network connection in the log uses GPUDirect RDMA (no GDRDMA in 'via NET/...'): "
            "network data is staged through host memory"), variables("NCCL_NET_GDR_LEVEL"))]
    return []


def _forced(log) -> list[Finding]:
    forced = {k: v for k, v in dict(log.env).items() if k in ("NCCL_ALGO", "NCCL_PROTO")}
    if not forced:
        return []
    text = ", ".join(f"{k}={v}" for k, v in forced.items())
    return [Finding("info", "forced_algorithm", (
        f"the run set {text}: the results show that choice, not what NCCL picks by itself"),
        variables(*forced))]


def _choices(log, comparison: SetComparison | None) -> list[Finding]:
    if comparison is None or not log.tuning:
        return []
    by_size = {r.message_bytes: r for r in comparison.rows}
    differ = []
    for choice in log.tuning:
        row = by_size.get(choice.message_bytes)
        if row is None or choice.op not in (None, comparison.op):
            continue
        ours = MODEL_ALGORITHMS.get(choice.algorithm.replace("-", "_"))
        if ours != row.algorithm:
            differ.append((choice, row))
    if not differ:
        return []
    choice, row = differ[0]
    return [Finding("info", "algorithm_differs", (
        f"at {size_label(choice.message_bytes)} NCCL ran {choice.algorithm}/{choice.protocol} "
        f"where the model picks {row.algorithm} ({len(differ)} size(s) differ)"),
        variables("NCCL_ALGO", "NCCL_PROTO"))]


def nccl_log_findings(measurement: MeasurementSet, cluster: Cluster,
                      comparison: SetComparison | None = None) -> list[Finding]:
    """Findings from the NCCL log of ``measurement`` (none without a log)."""
    log = measurement.nccl
    if log.empty:
        return []
    hosts = measurement.job.host_count or (log.nodes or 1)
    out = _network(log, cluster, hosts > 1 or (log.nodes or 1) > 1)
    out += _nvls(log, cluster) + _gdr(log) + _forced(log) + _choices(log, comparison)
    if log.warnings:
        out.append(Finding("warning", "nccl_warnings", (
            f"NCCL printed {len(log.warnings)} warning(s); first: {log.warnings[0]}")))
    return out
