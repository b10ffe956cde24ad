"""A router remembers the scale-up part of the routes it computed (it depends on the pairs
and their flow keys alone): routes from a router that has routed other pair lists before
equal the routes from a fresh router, under every scale-up and fabric policy (the memo is
keyed by the flow keys too: a hop from a NIC to its destination hashes the key of the
whole path, and the same hop recurs for sources on other hosts)."""

from __future__ import annotations

import numpy as np
import pytest
from test_netsim_differential import three_tier

from supernode.netsim.build import network_from_cluster
from supernode.netsim.routes import RoutingConfig
from supernode.netsim.routing import Router

NET = network_from_cluster(three_tier(32))  # 256 GPUs in 8-GPU domains, 8 rails


def _same(a, b) -> None:
    for name in ("flow", "link", "share", "latency_s"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("scale_up", ["ecmp", "spray", "adaptive"])
@pytest.mark.parametrize("fabric", ["ecmp", "adaptive"])
def test_a_router_that_remembers_routes_like_a_fresh_one(scale_up, fabric) -> None:
    config = RoutingConfig(fabric=fabric, scale_up=scale_up, seed=3)
    rng = np.random.default_rng(7)
    used = Router(NET, config)
    load = rng.random(NET.capacity_bytes_per_s.size)
    dst = rng.integers(0, 256, 64)
    base = rng.integers(0, 256, 64)
    for host in range(3):  # the same GPU of other hosts: the same hops from the NIC to
        src = (base + 8 * host) % 256  # the destination, other flow keys
        warm = used.route(src, dst, load)
        _same(warm, Router(NET, config).route(src, dst, load))
        _same(used.route(src, dst, load), warm)
