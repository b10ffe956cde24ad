"""Small clusters and runners shared by the netsim tests (plus a smoke test of them).

Test fabrics use an inline 16-port 400G switch with zero latency and NICs with zero
latency unless a test asks for latency, so closed forms stay readable: a non-blocking
two-tier tree of 16-port switches has 8 hosts per leaf and holds 128 hosts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.cluster.resolve import resolve_cluster
from supernode.collectives import fabric_from_cluster, load_efficiency_tables
from supernode.collectives.efficiency import ideal_tables
from supernode.netsim.build import network_from_cluster
from supernode.netsim.collectives import Ctx
from supernode.netsim.dag import add_collective
from supernode.netsim.engine import Environment
from supernode.netsim.network import Network
from supernode.netsim.routing import Router, RoutingConfig
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import validate_document
from supernode.spec.resolved import Cluster

NIC_BYTES_PER_S = 50e9  # 400 Gb/s


def switch(radix: int = 16, latency_ns: float = 0.0, name: str = "sw") -> dict[str, Any]:
    """An inline test switch of ``radix`` 400G ports."""
    return {"name": name, "radix_ports": radix, "port_speed_gbit_per_s": 400,
            "latency_ns": latency_ns, "in_network_reduction": True}


def fat_tree_cluster(hosts: int, *, oversubscription: float = 1.0, radix: int = 16,
                     tiers: int = 2, latency_ns: float = 0.0,
                     nic_latency_ns: float = 0.0) -> Cluster:
    """``hosts`` one-GPU hosts, one 400G NIC each, on a fat tree of test switches."""
    doc = {
        "name": f"ft{hosts}", "supernodes": hosts, "switches": [switch(radix, latency_ns)],
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 1,
                 "nics": {"count": 1, "speed_gbit_per_s": 400, "latency_ns": nic_latency_ns}},
        "scale_up": {"kind": "none", "size": 1},
        "scale_out": {"tiers": tiers, "switch": "sw", "oversubscription": [oversubscription],
                      "link_latency_ns": latency_ns},
    }
    return resolve_cluster(validate_document(doc, ClusterSpec))


def domain_cluster(hosts: int, gpus: int = 4, *, chips: int = 4, links: int = 4,
                   radix: int = 16, rail_optimized: bool = True, in_switch: bool = True,
                   latency_ns: float = 0.0) -> Cluster:
    """Hosts of ``gpus`` GPUs in one NVSwitch domain each (``links`` links over ``chips``
    chips, 100 GB/s per link), one 400G NIC per GPU, two-tier tree of test switches."""
    nv = {"name": "nvsw", "radix_ports": 64, "port_speed_gbit_per_s": 800,
          "latency_ns": latency_ns, "in_network_reduction": in_switch}
    doc = {
        "name": f"dom{hosts}x{gpus}", "supernodes": hosts,
        "switches": [switch(radix, latency_ns), nv],
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": gpus,
                 "nics": {"count": gpus, "speed_gbit_per_s": 400, "latency_ns": 0}},
        "scale_up": {"kind": "nvswitch", "size": gpus, "switch": "nvsw",
                     "switch_chips": chips, "links_per_accelerator": links,
                     "link_bandwidth_gbyte_per_s": 100, "link_latency_ns": latency_ns},
        "scale_out": {"tiers": 2, "switch": "sw", "rail_optimized": rail_optimized,
                      "link_latency_ns": latency_ns},
    }
    return resolve_cluster(validate_document(doc, ClusterSpec))


def run_collective(net: Network, op: str, algorithm: str | None, groups, message_bytes: float,
                   *, mode: str = "pipelined", coupled: bool = True, routing: str = "spray",
                   seed: int = 0, check: bool = False, fabric=None, tables=None
                   ) -> tuple[float, Environment]:
    """Simulate one collective alone on ``net``; return its duration (s) and the env.

    ``fabric``: the cluster's collective fabric (default: the one :func:`network` built
    ``net`` from); ``tables``: efficiency tables (default: line rate, no latencies).
    """
    env = Environment(net, Router(net, RoutingConfig(fabric=routing, seed=seed)), check=check)
    fabric = fabric if fabric is not None else FABRICS[net.name]
    tables = tables if tables is not None else ideal_tables(load_efficiency_tables())
    add_collective(env, "c", op, algorithm, np.atleast_2d(groups), message_bytes,
                   Ctx(mode=mode, coupled=coupled, net=net, fabric=fabric, tables=tables))
    env.run()
    return env.records[0].duration_s, env


#: The collective fabric of every cluster :func:`network` built a network of (by name).
FABRICS: dict[str, object] = {}


def network(cluster: Cluster) -> Network:
    """The cluster's network at line rate (no protocol efficiency); its collective fabric
    is remembered for :func:`run_collective`."""
    net = network_from_cluster(cluster)
    FABRICS[net.name] = fabric_from_cluster(cluster)[0]
    return net


def test_support_builds_small_fabrics() -> None:
    net = network(fat_tree_cluster(16))
    assert net.accelerators == 16
    assert set(net.capacity_bytes_per_s[net.tier == 4].tolist()) <= {NIC_BYTES_PER_S}
    dom = network(domain_cluster(2))
    assert dom.accelerators == 8 and dom.rail_optimized
