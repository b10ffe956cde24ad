"""Design thresholds the topology report checks, each with the seed it comes from.

The limits and the :class:`Check` record live here; the report evaluates them
(:func:`supernode.topology.metrics.threshold_checks`), and the rule pack takes the same
constants (one truth per limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.units import GBIT_PER_S

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
#: Two-tier CLOS: at most 4 hops between any two servers (seed 001 §2.3).
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
