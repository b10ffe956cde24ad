"""Which link generation a cluster's links are: one rule for monitoring, reports and tools.

The scale-out link is the NIC-to-leaf link: InfiniBand, or Ethernet where the fabric's
switch is an Ethernet switch (its ``protocol``, :func:`supernode.spec.hardware.switch_protocol`,
the rule of the collective efficiency tables too), at the slower of the NIC and the switch
port (a NIC faster than its port runs at the port's rate), matched to the generation of
that family nearest in data rate (:func:`~supernode.links.generations.generation_for_rate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from supernode.links.generations import LinkGeneration, generation_for_rate

if TYPE_CHECKING:
    from supernode.spec.resolved import Cluster


def scale_out_family(cluster: Cluster) -> str:
    """``ethernet`` or ``infiniband``: the family of a resolved cluster's fabric switch."""
    out = cluster.scale_out
    if out is None:
        raise ValueError(f"{cluster.name} has no scale-out fabric")
    return "ethernet" if out.switch.ethernet else "infiniband"


def scale_out_generation(cluster: Cluster) -> LinkGeneration | None:
    """The generation of a resolved cluster's NIC-to-leaf link (None without a fabric)."""
    out = cluster.scale_out
    if out is None or cluster.host.nic_count <= 0:
        return None
    rate = min(cluster.host.nic_bandwidth_bytes_per_s, out.switch.port_bandwidth_bytes_per_s)
    if rate <= 0:
        return None
    return generation_for_rate(scale_out_family(cluster), rate)
