"""Design thresholds the topology report checks, each with the seed it comes from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from supernode.units import GBIT_PER_S

if TYPE_CHECKING:
    from supernode.topology.metrics import TopologyReport

#: Scale-up bandwidth per card (both directions, as vendors quote it) over HBM bandwidth:
#: "not below 30% of local memory bandwidth, the floor" (seed 001 §2.1; its example
#: compares 900 GB/s NVLink with 3 TB/s HBM, i.e. both directions).
SCALE_UP_TO_HBM_MIN = 0.30
#: Oversubscription between supernodes: "even 2:1 causes severe congestion; keep it
#: non-blocking" (seed 001 §2.2).
OVERSUBSCRIPTION_MAX = 1.0
#: Scale-out per supernode: "at least 4-6 x 400G links" for tens of TB/s inside
#: (seed 001 §2.2), as bandwidth per direction (bytes/s): 4 x 400 Gb/s.
SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S = 4 * 400 * GBIT_PER_S
#: Two-tier CLOS: at most 4 hops between any two servers (seed 000 §2.1).
SERVER_HOPS_MAX = 4


@dataclass(frozen=True)
class Check:
    """One threshold: the value, the limit, whether it holds, and where the limit comes from."""

    metric: str
    value: float
    threshold: float
    comparison: str
    ok: bool
    source: str


def threshold_checks(report: TopologyReport) -> list[Check]:
    """Evaluate the seed thresholds that apply to ``report``."""
    checks = [
        Check("scale_up_to_hbm_bandwidth_ratio", report.scale_up_to_hbm_bandwidth_ratio,
              SCALE_UP_TO_HBM_MIN, ">=",
              report.scale_up_to_hbm_bandwidth_ratio >= SCALE_UP_TO_HBM_MIN, "seed 001 §2.1"),
    ]
    if report.fabric_endpoints:
        worst = max(report.oversubscription.values(), default=1.0)
        checks.append(Check("oversubscription", worst, OVERSUBSCRIPTION_MAX, "<=",
                            worst <= OVERSUBSCRIPTION_MAX + 1e-9, "seed 001 §2.2"))
        per_sn = report.scale_out_bandwidth_per_supernode_bytes_per_s
        checks.append(Check("scale_out_bandwidth_per_supernode_bytes_per_s", per_sn,
                            SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S, ">=",
                            per_sn >= SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S, "seed 001 §2.2"))
        hops = report.diameter_hops["scale_out"] or 0
        checks.append(Check("diameter_hops.scale_out", hops, SERVER_HOPS_MAX, "<=",
                            hops <= SERVER_HOPS_MAX, "seed 000 §2.1 (two-tier CLOS)"))
    return checks
