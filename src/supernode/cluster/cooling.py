"""The cooling topology: how many coolant distribution units (CDUs) a cluster installs, how
many are spare, and which racks each one serves.

One model, read by every part of the toolkit that speaks of CDUs: the facility sizes them
(:func:`supernode.facility.cooling.cooling_plan` calls :func:`cooling_topology` with the
liquid heat), the reliability model takes its blast radius and unit count from it (a CDU
failure, :mod:`supernode.reliability.domains`) and the monitoring pack labels each rack
with the CDU that serves it (:mod:`supernode.monitor.placement`).

The layout (an ASSUMPTION, stated in docs/facility.md): the CDUs feed one secondary loop
(a common header), ``needed`` of them carry the liquid heat and ``redundancy`` stand by
(N+R, seed 001 §3.2 "CDUs N+1"). Duty CDU ``i`` is the one nearest racks
``[i * racks_per_cdu, (i + 1) * racks_per_cdu)``; with a spare on the loop, one CDU's
failure stops no rack (the spare takes its share); with none, the racks it serves stop.
``racks_per_cdu`` is the cluster's ``reliability.racks_per_cdu`` when stated (then at least
``ceil(racks / racks_per_cdu)`` CDUs are needed whatever the heat), else the racks shared
evenly over the duty CDUs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CoolingTopology:
    """CDUs of a cluster (counts) and the racks each duty CDU serves."""

    cooled_racks: int
    capacity_w: float
    needed: int
    redundancy: int
    racks_per_cdu: int
    racks_per_cdu_source: str

    @property
    def installed(self) -> int:
        """CDUs installed: the duty ones plus the spares (0 when nothing is liquid-cooled)."""
        return self.needed + self.redundancy if self.needed else 0

    @property
    def failure_stops_racks(self) -> int:
        """Racks one CDU failure stops: 0 with a spare on the loop, else those it serves."""
        if not self.needed or self.redundancy > 0:
            return 0
        return min(self.racks_per_cdu, self.cooled_racks)

    def cdu_of_rack(self, rack: int) -> int:
        """Index of the duty CDU nearest ``rack`` (0-based; racks past the cooled ones map
        to the last duty CDU)."""
        if not self.needed:
            return 0
        return min(rack // max(self.racks_per_cdu, 1), self.needed - 1)

    def served(self) -> list[list[int]]:
        """Per duty CDU, the first and last rack (0-based, inclusive) it serves."""
        out = []
        for i in range(self.needed):
            first = i * self.racks_per_cdu
            last = min((i + 1) * self.racks_per_cdu, self.cooled_racks) - 1
            if first <= last:
                out.append([first, last])
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready counts (``results.json`` -> ``facility/cooling/cdu``)."""
        return {"capacity_w": self.capacity_w, "needed": self.needed,
                "redundancy": self.redundancy, "installed": self.installed,
                "cooled_racks": self.cooled_racks, "racks_per_cdu": self.racks_per_cdu,
                "racks_per_cdu_source": self.racks_per_cdu_source,
                "serves_racks": self.served(),
                "failure_stops_racks": self.failure_stops_racks}


def cooling_topology(cooled_racks: int, liquid_heat_w: float, capacity_w: float,
                     redundancy: int, racks_per_cdu: int | None = None) -> CoolingTopology:
    """The CDUs for ``liquid_heat_w`` of heat (W) over ``cooled_racks`` racks, CDUs of
    ``capacity_w`` each with ``redundancy`` spares; ``racks_per_cdu`` as stated by the
    cluster (None: the racks shared evenly over the duty CDUs)."""
    if cooled_racks <= 0 or liquid_heat_w <= 0:
        return CoolingTopology(0, capacity_w, 0, redundancy, 0, "no liquid-cooled racks")
    needed = math.ceil(liquid_heat_w / capacity_w)
    if racks_per_cdu:
        needed = max(needed, math.ceil(cooled_racks / racks_per_cdu))
        per, source = racks_per_cdu, "reliability.racks_per_cdu"
    else:
        per = math.ceil(cooled_racks / needed)
        source = "the racks shared evenly over the CDUs the heat needs"
    return CoolingTopology(cooled_racks, capacity_w, needed, redundancy, per, source)
