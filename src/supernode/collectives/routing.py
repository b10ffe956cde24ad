"""Routing of the scale-out fabric as a collective sees it: the expected loss of static
ECMP hashing.

A fabric spreads flows over its equal-cost uplinks in one of three ways (the cluster
file's ``scale_out.routing``, :data:`ROUTINGS`):

* ``ecmp``: a static hash per flow (per QP: RoCE hashes the UDP source port, InfiniBand's
  subnet manager assigns one path per destination LID without AR). Flows that hash onto
  the same uplink share it while other uplinks idle;
* ``adaptive``: the switch picks the output port by its load, per packet or flowlet
  (InfiniBand AR, Spectrum-X); ``spray``: packets sprayed over every path (AMD Pollara's
  packet spraying, NVLink's striping). Both balance the load: no loss is priced.

Under ``ecmp`` a phase whose flows cross a tier's uplinks finishes when the fullest
uplink does: with ``λ`` flows per port hashed independently onto ``U`` uplinks, each
uplink's flow count is ≈ Poisson(λ) (balls into bins, Raab & Steger 1998), the phase
moves at ``λ / E[max of U Poisson(λ)]`` of the balanced rate. Nothing is fitted: ``λ``
is NCCL's concurrency (:func:`flows_per_port`), ``U`` the uplinks one leaf hashes over
(``FabricTier.hash_ports``). The simulator's ``ecmp`` policy hashes the same flows onto
the same uplinks (:mod:`supernode.netsim.policies`), which it reproduces on average.
"""

from __future__ import annotations

import math
from functools import lru_cache

ROUTINGS = ("ecmp", "adaptive", "spray")

#: NCCL ring/tree channels per NIC: the graph search finds one channel per NIC and
#: duplicates the channels (src/graph/connect.cc, ncclTopoPostset: "Duplicate channels
#: rings/trees"), one QP each (NCCL_IB_QPS_PER_CONNECTION default 1).
CHANNELS_PER_NIC = 2


@lru_cache(maxsize=4096)
def expected_max_poisson(mean: float, bins: int) -> float:
    """E[max] of ``bins`` independent Poisson(``mean``) counts (flows per uplink).

    ``Σ_{j≥0} 1 - F(j)^bins`` with ``F`` the Poisson CDF (terms in log space, so large
    means do not underflow), over ``mean ± 12√mean + 30`` (outside it the terms are 1 or
    0 to double precision); exact for integer counts, no asymptotic form.
    """
    if mean <= 0 or bins <= 1:
        return max(mean, 0.0)
    spread = 12.0 * math.sqrt(mean) + 30.0
    start = max(0, int(mean - spread))  # F(j) < 1e-30 below: P(max > j) is 1
    total, cdf = float(start), 0.0
    for j in range(start, int(mean + spread) + 1):
        cdf += math.exp(j * math.log(mean) - mean - math.lgamma(j + 1.0))  # F(j)
        total += 1.0 - min(cdf, 1.0) ** bins
    return total


def collision_efficiency(flows_per_port: float, ports: int) -> float:
    """Fraction of the balanced rate a phase keeps when ``flows_per_port`` flows per
    port are hashed onto ``ports`` uplinks and the fullest one sets its time (≤ 1)."""
    if flows_per_port <= 0 or ports <= 1:
        return 1.0
    return min(1.0, flows_per_port / expected_max_poisson(float(flows_per_port), int(ports)))


def flows_per_port(pattern: str, remote_peers: int) -> float:
    """Concurrent flows one rank's port drives across the uplinks in a phase of
    ``pattern``: NCCL's ring/tree channels per NIC (:data:`CHANNELS_PER_NIC`); for a
    direct all-to-all one flow per peer beyond the rank's domain, all at once (on several
    NVLink domains NCCL lowers the channels per peer until every peer fits one round,
    src/graph/paths.cc ncclTopoComputeP2pChannels, one QP per connection)."""
    if pattern == "pairs":
        return float(max(remote_peers, 0))
    return float(CHANNELS_PER_NIC)
