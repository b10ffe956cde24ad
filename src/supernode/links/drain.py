"""The bit error rate at which a link should be drained, and the level at which to watch it.

One rule for every consumer (the netsim failure language, the monitoring rules' BER trend
alerts, reports): a link is drained at the lowest raw (pre-FEC) BER where either

* ``spec``: the BER leaves the standard's limit (``max_pre_fec_ber``; 2.4e-4 for the
  RS(544,514) links, 1e-6 for PCIe 6.0, 1e-12 for PCIe 5.0). Past it the FEC's margin is
  gone and the post-FEC error rate climbs by orders of magnitude per decade of raw BER;
* ``bandwidth``: retransmissions cost ``max_bandwidth_loss`` of the link's goodput
  (policy, default 1 %), found by bisection on log10(BER) — the loss is monotone in BER.

The watch level is ``watch_decades`` below the drain BER (policy, default one decade): a
link trending there deserves a ticket before it costs anything. The policy lives in
``data/links/generations.yaml`` (``drain_policy``).

Monitoring sees the BER *after* the FEC (a port's symbol errors on InfiniBand NDR/HDR,
effective errors on EDR, the MAC's errors on Ethernet), so each generation also gets an
**effective** drain level on that scale: its sourced post-FEC limit (``max_post_fec_ber``:
ibdiagnet's 1e-12 for InfiniBand, IEEE 802.3's 1e-13 objective for 400/800GbE;
``effective_criterion`` ``spec``), or where none is published the post-FEC BER this model
gives at the raw drain level (``model``; equal to it without FEC). The independent-error
FEC model is optimistic for PAM4 bursts (2.4e-15 at the KP4 limit), which is why a
published post-FEC limit wins. The effective watch level is ``watch_decades`` below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from supernode.links.generations import DrainPolicySpec, get_generation, read_generations_file
from supernode.links.model import link_performance

#: Search range of the bisection, raw BER.
BER_FLOOR = 1e-18
BER_CEILING = 0.5


@dataclass(frozen=True)
class BerThresholds:
    """Drain and watch levels of one generation: raw (pre-FEC) BER, the post-FEC BER at
    the raw drain level, and the effective (post-FEC) levels monitoring compares with."""

    generation: str
    drain_pre_fec_ber: float
    drain_post_fec_ber: float
    watch_pre_fec_ber: float
    criterion: str
    bandwidth_loss_at_drain: float
    bandwidth_drain_pre_fec_ber: float
    spec_max_pre_fec_ber: float | None
    drain_effective_ber: float
    watch_effective_ber: float
    effective_criterion: str

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return dict(self.__dict__)


def drain_policy() -> DrainPolicySpec:
    """The packaged drain policy."""
    return read_generations_file().drain_policy


def _loss(name: str, ber: float) -> float:
    return 1.0 - link_performance(get_generation(name), pre_fec_ber=ber).bandwidth_fraction


def bandwidth_limit_ber(name: str, max_loss: float) -> float:
    """Raw BER at which retransmissions cost ``max_loss`` of ``name``'s goodput."""
    lo, hi = math.log10(BER_FLOOR), math.log10(BER_CEILING)
    if _loss(name, 10.0 ** hi) < max_loss:
        return BER_CEILING
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if _loss(name, 10.0 ** mid) >= max_loss:
            hi = mid
        else:
            lo = mid
    ber: float = 10.0 ** hi  # a float: the base is positive
    return ber


@lru_cache(maxsize=64)
def ber_thresholds(name: str, max_bandwidth_loss: float | None = None,
                   watch_decades: float | None = None) -> BerThresholds:
    """Drain and watch BER of link generation ``name`` (policy defaults from the data file).

    >>> t = ber_thresholds("ethernet-400g")
    >>> t.criterion, t.drain_pre_fec_ber
    ('spec', 0.00024)
    """
    gen = get_generation(name)
    policy = drain_policy()
    loss = policy.max_bandwidth_loss if max_bandwidth_loss is None else max_bandwidth_loss
    decades = policy.watch_decades if watch_decades is None else watch_decades
    by_bandwidth = bandwidth_limit_ber(gen.name, loss)
    spec = gen.max_pre_fec_ber
    if spec is not None and spec <= by_bandwidth:
        drain, criterion = spec, "spec"
    else:
        drain, criterion = by_bandwidth, "bandwidth"
    at_drain = link_performance(gen, pre_fec_ber=drain)
    effective, how = ((gen.max_post_fec_ber, "spec") if gen.max_post_fec_ber is not None
                      else (at_drain.post_fec_ber, "model"))
    return BerThresholds(
        generation=gen.name, drain_pre_fec_ber=drain, drain_post_fec_ber=at_drain.post_fec_ber,
        watch_pre_fec_ber=drain / 10.0 ** decades, criterion=criterion,
        bandwidth_loss_at_drain=1.0 - at_drain.bandwidth_fraction,
        bandwidth_drain_pre_fec_ber=by_bandwidth, spec_max_pre_fec_ber=spec,
        drain_effective_ber=effective, watch_effective_ber=effective / 10.0 ** decades,
        effective_criterion=how)
