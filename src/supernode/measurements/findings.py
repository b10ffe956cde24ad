"""Findings from a comparison: what stands out, and the NCCL variables that bear on it.

Each rule reads a :class:`~supernode.measurements.compare.SetComparison` (and the NCCL
log of its set) and returns :class:`Finding` s; the variables come with their documented
meaning (``data/nccl/env.yaml``, from NCCL's environment documentation) and nothing is
recommended beyond what the documentation says a variable does (:mod:`.findings_base`,
shared with the log's rules in :mod:`.log_findings`). Thresholds are module constants,
stated in ``docs/measurements.md``.
"""

from __future__ import annotations

import statistics

from supernode.measurements.compare import RowComparison, SetComparison
from supernode.measurements.findings_base import Finding, Variable, size_label, variables
from supernode.spec.resolved import Cluster

#: Large messages: sizes whose predicted busbw is at least this share of the best one.
LARGE_SHARE = 0.9
#: A run below this share of the prediction (large messages) is a finding.
MODEL_SHORTFALL = 0.85
#: A run above this multiple of the prediction is a finding (the description understates).
MODEL_EXCESS = 1.15
#: Measured above the line-rate bound by more than this: the description is wrong.
BOUND_TOLERANCE = 1.02
#: Small messages taking more than this multiple of the predicted time.
LATENCY_EXCESS = 2.0
#: Still rising by more than this between the two largest sizes: not saturated.
STILL_RISING = 1.05
#: In-place and out-of-place differing by more than this at large sizes.
PLACEMENT_GAP = 0.10
#: Severities, most urgent first (findings are listed in this order).
SEVERITIES = ("critical", "warning", "info")


def large_rows(comparison: SetComparison) -> list[RowComparison]:
    """Rows in the bandwidth regime (predicted busbw ≥ LARGE_SHARE of the best)."""
    best = max(r.predicted_busbw_bytes_per_s for r in comparison.rows)
    return [r for r in comparison.rows if r.predicted_busbw_bytes_per_s >= LARGE_SHARE * best]


def _tier_noun(tier: str) -> str:
    return "the NICs" if tier.startswith("scale_out") else "the scale-up links"


def _job_words(comparison: SetComparison) -> str:
    job = comparison.job
    if job.domains > 1:
        return f"over {job.domains} scale-up domains ({job.ranks_per_domain} ranks each)"
    return f"inside one scale-up domain ({job.ranks} ranks)"


def _tier_variables(op: str, tier: str, comparison: SetComparison) -> tuple[Variable, ...]:
    if tier.startswith("scale_out"):
        names = ["NCCL_IB_HCA", "NCCL_CROSS_NIC", "NCCL_IB_QPS_PER_CONNECTION"]
        names += ["NCCL_COLLNET_ENABLE", "NCCL_ALGO"] if op == "all_reduce" else [
            "NCCL_PXN_DISABLE", "NCCL_NET_GDR_LEVEL"]
        return variables(*names)
    names = ["NCCL_NVLS_ENABLE", "NCCL_ALGO"] if op == "all_reduce" else ["NCCL_P2P_LEVEL"]
    if comparison.job.ranks_per_domain > comparison.job.ranks_per_host:
        names.append("NCCL_MNNVL_ENABLE")
    return variables(*names, "NCCL_MIN_NCHANNELS")


def below_model(comparison: SetComparison) -> list[Finding]:
    """Large messages well below the prediction: where, how far from the bound, and why."""
    rows = large_rows(comparison)
    ratio = statistics.median(r.ratio for r in rows)
    if ratio >= MODEL_SHORTFALL:
        return []
    binding = rows[-1].binding_line_rate
    share = statistics.median(r.binding_line_rate.share for r in rows)
    op = comparison.op.replace("_", "-")
    message = (f"{op} {_job_words(comparison)} reaches {ratio:.0%} of the model's prediction "
               f"and {share:.0%} of {_tier_noun(binding.tier)}' line rate from "
               f"{size_label(rows[0].message_bytes)} up ({binding.tier} binds): check the "
               "settings below, and that the cluster description matches the job")
    return [Finding("warning", "below_model", message,
                    _tier_variables(comparison.op, binding.tier, comparison))]


def above_model(comparison: SetComparison) -> list[Finding]:
    """Faster than the model, or past a line-rate bound: the description understates."""
    out = []
    rows = large_rows(comparison)
    over = [r for r in comparison.rows if r.binding.share > BOUND_TOLERANCE]
    if over:
        worst = max(over, key=lambda r: r.binding.share)
        out.append(Finding("warning", "above_bound", (
            f"{size_label(worst.message_bytes)} reaches {worst.binding.share:.0%} of the "
            f"idealised line-rate bound of {worst.binding.tier} (the best algorithm at line "
            "rate, in-switch reduction included): the job had more bandwidth than the "
            "cluster description gives it (NIC count or speed, in-network reduction, ranks "
            "per domain)"), variables("NCCL_IB_HCA", "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE")))
    ratio = statistics.median(r.ratio for r in rows)
    if ratio > MODEL_EXCESS and not over:
        out.append(Finding("info", "above_model", (
            f"large messages run at {ratio:.0%} of the prediction: the efficiency tables "
            "understate this cluster (a calibration on its own measurements would fix it)")))
    return out


def small_message_latency(comparison: SetComparison) -> list[Finding]:
    """Latency-bound sizes much slower than predicted."""
    small = [r for r in comparison.rows if r.message_bytes <= 64 * 2**10]
    slow = [r for r in small if r.measured_time_s > LATENCY_EXCESS * r.predicted_time_s]
    if not slow:
        return []
    r = slow[0]
    return [Finding("warning", "latency", (
        f"{size_label(r.message_bytes)} takes {r.measured_time_s * 1e6:.1f} us where the model "
        f"expects {r.predicted_time_s * 1e6:.1f} us ({len(slow)} of {len(small)} sizes up to "
        "64 KiB over twice the prediction): latency-bound sizes depend on the protocols and "
        "algorithms NCCL may use"), variables("NCCL_PROTO", "NCCL_ALGO", "NCCL_NET_GDR_LEVEL"))]


def sweep_shape(comparison: SetComparison) -> list[Finding]:
    """Bandwidth still rising at the largest size; in-place far from out-of-place."""
    out = []
    rows = comparison.rows
    rise = (rows[-1].measured_busbw_bytes_per_s / rows[-2].measured_busbw_bytes_per_s
            if len(rows) >= 2 and rows[-2].measured_busbw_bytes_per_s > 0 else 1.0)
    if rise > STILL_RISING:
        out.append(Finding("info", "not_saturated", (
            f"busbw still rises {rise - 1:.0%} at the largest size "
            f"({size_label(rows[-1].message_bytes)}): extend the sweep (nccl-tests -e) to see "
            "the plateau")))
    gaps = []
    for row in comparison.measurement.collectives:
        a, b = row.out_of_place, row.in_place
        if a and b and a.busbw_bytes_per_s > 0:
            gaps.append((abs(b.busbw_bytes_per_s / a.busbw_bytes_per_s - 1), row.message_bytes))
    if gaps and max(gaps)[0] > PLACEMENT_GAP:
        gap, size = max(gaps)
        out.append(Finding("info", "placement_gap", (
            f"in-place and out-of-place busbw differ by {gap:.0%} at {size_label(size)}: the "
            "comparison uses out-of-place (--placement to change)")))
    if comparison.op == "all_reduce" and comparison.job.domains == 2 and any(
            r.algorithm in ("tree", "nvls_tree") for r in large_rows(comparison)):
        out.append(Finding("info", "two_domain_tree", (
            "all-reduce over exactly two domains: NCCL's tree sends each byte once per "
            "member here, which no larger job can (NVIDIA/nccl#1031: rerun with "
            "NCCL_ALGO=Ring before extrapolating to more domains)"), variables("NCCL_ALGO")))
    return out


def corrupted(comparison: SetComparison) -> list[Finding]:
    """#wrong > 0 or out-of-bounds values: the numbers cannot be trusted."""
    wrong = [r for r in comparison.rows if r.wrong]
    bounds = (comparison.measurement.attributes or {}).get("out_of_bounds")
    if not wrong and not bounds:
        return []
    lines = ", ".join(str(r.line) for r in wrong[:6])
    return [Finding("critical", "wrong_results", (
        f"nccl-tests found wrong results (#wrong > 0 on line(s) {lines}): the run is invalid; "
        "check the hardware (Xid errors, NVLink and PCIe replay counters) before tuning"))]


def device_mismatch(comparison: SetComparison, cluster: Cluster) -> list[Finding]:
    """The output names GPUs of another family than the cluster description's."""
    from supernode.measurements.devices import catalog_accelerator, same_family

    for name in comparison.measurement.job.device_names:
        found = catalog_accelerator(name)
        if found is not None and not same_family(found, cluster.accelerator.name):
            return [Finding("warning", "device_mismatch", (
                f"the output ran on {name} (catalog {found}) but {cluster.name} describes "
                f"{cluster.accelerator.name}: the comparison is against other hardware"))]
    return []


RULES = (corrupted, below_model, above_model, small_message_latency, sweep_shape)


def comparison_findings(comparison: SetComparison, cluster: Cluster) -> list[Finding]:
    """Every rule's findings for one comparison, then the NCCL log's."""
    from supernode.measurements.log_findings import nccl_log_findings

    out: list[Finding] = device_mismatch(comparison, cluster)
    for rule in RULES:
        out.extend(rule(comparison))
    out.extend(nccl_log_findings(comparison.measurement, cluster, comparison))
    return sorted(out, key=lambda f: SEVERITIES.index(f.severity))
