"""The hot-standby share of a scale-up domain: one definition for the rule and the model.

Seed 001 §4.1 asks for at least 10 % hot-standby bandwidth inside the NVSwitch fabric, "so
that one failed link does not drop the bandwidth below the level at which training stops".
The share is **measured from the topology**: on each scale-up switch tier, the switch ports
left free over the ports in use (whole planes of spare switch chips count in full, as their
ports are free), and the worst tier is the domain's share. The free ports of switch chips on
a GPU baseboard (HGX) lead off the board, not to the GPUs: they count as none. A cluster's
``reliability`` block may **state** it instead (``hot_standby_share``: bandwidth held idle
by policy, or spare capacity the closed-form topology cannot see); the stated figure wins.

The design rule ``hot_standby_bandwidth`` judges this share, and the reliability model
(:func:`~supernode.reliability.assess.assess_reliability`) uses it to decide which lost
planes the restarted job runs without slowing: a loss no larger than the share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from supernode.spec.reliability import ReliabilitySpec
from supernode.spec.resolved import Cluster

#: Seed 001 §4.1: at least 10 % hot-standby bandwidth inside the NVSwitch fabric.
HOT_STANDBY_OBJECTIVE = 0.10
#: Scale-up switch tiers of the topology report.
SCALE_UP_SWITCH_TIERS = ("scale_up_l1", "scale_up_l2")
STATED, TOPOLOGY, NONE = "stated", "topology", "none"


@dataclass(frozen=True)
class HotStandby:
    """The hot-standby share in use (``share``, a fraction of the scale-up bandwidth), where
    it comes from (``stated``, ``topology`` or ``none``), and the topology's own figure."""

    share: float
    source: str
    measured_share: float | None
    tier: str | None
    spare_ports: int
    ports_in_use: int
    #: Largest share of the domain's bandwidth one failed link or chip removes.
    largest_single_loss: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (share as a fraction; ports whole-cluster, port-equivalents)."""
        return {"share": self.share, "source": self.source,
                "measured_share": self.measured_share, "tier": self.tier,
                "spare_ports": self.spare_ports, "ports_in_use": self.ports_in_use,
                "largest_single_loss": self.largest_single_loss}


def on_board(topology: dict[str, Any], tier: str) -> bool:
    """Whether ``tier``'s switch chips sit on a GPU baseboard (HGX): the report counts no
    cables on it. Their free ports lead off the board (to an external NVLink network,
    NVIDIA HGX H100: 4 NVSwitch chips x 64 ports, 8 GPUs x 18 links use 144), not to the
    GPUs, whose every link is already in use: they are no standby for the GPUs."""
    cables = topology.get("cables")
    return cables is not None and not cables.get(tier)


def measured_hot_standby(topology: dict[str, Any]) -> tuple[str, float, int, int] | None:
    """(tier, share, spare ports, ports in use) of the worst scale-up switch tier of a
    topology report dict (:meth:`TopologyReport.to_dict`); None without switch tiers.
    Free ports of an on-board tier (:func:`on_board`) are not spare: share 0 there."""
    rows = []
    for tier in SCALE_UP_SWITCH_TIERS:
        radix = topology["radix"].get(tier)
        if tier in topology["switches"] and radix:
            total = topology["switches"][tier] * radix
            free = topology["free_ports"].get(tier, 0)
            used = max(total - free, 1)
            if on_board(topology, tier):
                free = 0
            rows.append((tier, free / used, free, used))
    return min(rows, key=lambda r: r[1]) if rows else None


def largest_single_loss(cluster: Cluster) -> float:
    """Largest share of a GPU's scale-up bandwidth one failed unit removes: one link
    (``1/links``) or one switch chip (the links a GPU has on it, ``ceil(links/chips)/links``:
    HGX H100, 18 links over 4 chips as 5/4/4/5, 5/18 = 27.8 %; GB200 NVL72, 1/18); 0 for a
    domain without switch chips (a mesh's lost link is one peer, not a share)."""
    up = cluster.scale_up
    links, chips = up.links_per_accelerator, up.switch_chips
    if not chips or not links:
        return 0.0
    return max(1.0 / links, math.ceil(links / chips) / links)


def hot_standby(cluster: Cluster, topology: dict[str, Any]) -> HotStandby:
    """The cluster's hot-standby share: ``reliability.hot_standby_share`` when stated, else
    measured from ``topology`` (its report dict), else 0 with source ``none``."""
    measured = measured_hot_standby(topology)
    tier, share, free, used = measured if measured else (None, None, 0, 0)
    stated = (cluster.spec.reliability or ReliabilitySpec()).hot_standby_share
    worst = largest_single_loss(cluster)
    if stated is not None:
        return HotStandby(stated, STATED, share, tier, free, used, worst)
    if share is not None:
        return HotStandby(share, TOPOLOGY, share, tier, free, used, worst)
    return HotStandby(0.0, NONE, None, None, 0, 0, worst)
