"""The link layer: lanes × lane rate, FEC, CRC + replay, and what a bit error rate costs.

Public API::

    link_generations() -> {name: LinkGeneration}      # data/links/generations.yaml, SI
    get_generation(name) -> LinkGeneration
    generation_for_rate(family, bytes_per_s) -> LinkGeneration
    link_performance(gen, pre_fec_ber=... | post_fec_ber=..., message_bytes=...)
        -> LinkPerformance (effective bandwidth, mean/p99/p99.9 added latency)
    ber_thresholds(name) -> BerThresholds (drain and watch BER, raw and effective; one
        rule for netsim, monitoring and reports)
    scale_out_generation(cluster) -> LinkGeneration | None   # the NIC-to-leaf link

See ``docs/links.md`` for the formulas, the data and the drain policy.
"""

from supernode.links.cluster import scale_out_generation
from supernode.links.drain import BerThresholds, ber_thresholds, drain_policy
from supernode.links.fec import codeword_failure_probability, post_fec_ber
from supernode.links.generations import (
    LinkGeneration,
    generation_for_rate,
    get_generation,
    link_generations,
)
from supernode.links.model import LinkPerformance, go_back_n_efficiency, link_performance

__all__ = [
    "BerThresholds",
    "LinkGeneration",
    "LinkPerformance",
    "ber_thresholds",
    "codeword_failure_probability",
    "drain_policy",
    "generation_for_rate",
    "get_generation",
    "go_back_n_efficiency",
    "link_generations",
    "link_performance",
    "post_fec_ber",
    "scale_out_generation",
]
