"""Point-to-point measurements against the cluster description: perftest and nvbandwidth.

* ``ib_*_bw``: the average bandwidth of the largest message against one NIC's line rate
  (``host.nics``) and against the link model's error-free goodput for that NIC's
  generation (:mod:`supernode.links`: InfiniBand, or Ethernet when perftest says
  ``Link type : Ethernet``), i.e. what is left after encoding, FEC and framing.
* ``ib_*_lat``: typical, p99 and p99.9 one-way latency as measured (no model to compare).
* nvbandwidth device-to-device copies: the mean over GPU pairs (matrix cells, or SUM over
  ``n(n-1)`` pairs) against one GPU's scale-up bandwidth per direction (twice that for the
  ``_total`` of a bidirectional case).
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.links import generation_for_rate
from supernode.measurements.model import MeasurementSet
from supernode.spec.resolved import Cluster


@dataclass(frozen=True)
class PointComparison:
    """One point-to-point figure: measured, what the description allows, and the share."""

    source: str
    test: str
    message_bytes: int | None
    measured: float
    unit: str
    reference: float | None
    reference_name: str
    share: float | None
    note: str = ""


def _perftest(s: MeasurementSet, cluster: Cluster) -> list[PointComparison]:
    out = []
    bw = [r for r in s.links if r.bw_average_bytes_per_s]
    if bw:
        row = max(bw, key=lambda r: r.message_bytes)
        average = row.bw_average_bytes_per_s
        assert average is not None  # bw keeps the rows with an average
        nic = cluster.host.nic_bandwidth_bytes_per_s
        if nic > 0:
            family = "ethernet" if str(s.attributes.get("link_type", "")).lower() == \
                "ethernet" else "infiniband"
            gen = generation_for_rate(family, nic)
            for ref, name in ((nic, "NIC line rate"), (gen.goodput_bytes_per_s,
                                                        f"{gen.name} goodput")):
                out.append(PointComparison(s.source, row.test, row.message_bytes,
                                           average, "bytes_per_s", ref, name, average / ref))
        else:
            out.append(PointComparison(s.source, row.test, row.message_bytes,
                                       average, "bytes_per_s", None,
                                       "no NIC in the cluster description", None))
    for row in s.links:
        if row.t_typical_s is not None:
            for value, name in ((row.t_typical_s, "typical"), (row.t_p99_s, "p99"),
                                (row.t_p999_s, "p99.9")):
                if value is not None:
                    out.append(PointComparison(s.source, f"{row.test} {name}", row.message_bytes,
                                               value, "s", None, "measured only", None))
    return out


def _nvbandwidth(s: MeasurementSet, cluster: Cluster) -> list[PointComparison]:
    out = []
    per_gpu = cluster.scale_up.bandwidth_per_accelerator_bytes_per_s
    devices = len(s.attributes.get("devices") or ()) or cluster.host.accelerators_per_host
    for case in s.copies:
        name = case.test
        if not name.startswith("device_to_device") or "latency" in name or case.unit != \
                "bytes_per_s" or per_gpu <= 0:
            continue
        if name.endswith(("_read1", "_read2", "_write1", "_write2")):
            continue
        cells = [v for i, row in enumerate(case.values) for j, v in enumerate(row)
                 if v is not None and i != j]
        n = len(case.values) or devices
        if cells:
            mean = sum(cells) / len(cells)
        elif case.sum_value is not None and n > 1:
            mean = case.sum_value / (n * (n - 1))
        else:
            continue
        reference = per_gpu * (2 if name.endswith("_total") else 1)
        note = "" if cells else f"SUM / {n * (n - 1)} GPU pairs ({n} GPUs)"
        out.append(PointComparison(s.source, name, None, mean, "bytes_per_s", reference,
                                   "scale-up bandwidth per GPU", mean / reference, note))
    return out


def point_comparisons(s: MeasurementSet, cluster: Cluster) -> list[PointComparison]:
    """Comparisons of a perftest or nvbandwidth set (empty for other tools)."""
    if s.tool == "perftest":
        return _perftest(s, cluster)
    if s.tool == "nvbandwidth":
        return _nvbandwidth(s, cluster)
    return []
