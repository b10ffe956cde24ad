"""Flow-level, congestion-aware fabric simulator (capability 7: simulation before building).

Flows run over the real topology graph (:mod:`supernode.topology`): shortest paths with
ECMP, spraying or adaptive routing, rail-aligned on rail-optimised fabrics; rates are
max-min fair (progressive filling), recomputed at every flow arrival and completion in
one event-driven :class:`Environment`. Collectives become flows from the same schedules
:mod:`supernode.collectives` costs; one training iteration of a plan becomes a DAG of compute
delays (from :mod:`supernode.estimate`) and collectives per rank group. Links and switches
can fail or slow down; several jobs can share the fabric.

Public API::

    simulate_jobs(cluster, [JobInput(name, workload, plan, accelerators)], failures=...,
                  options=SimOptions(...)) -> SimResult
    simulate_traffic(cluster, TrafficFile, ...) -> SimResult
    network_from_cluster(cluster) -> Network;  Router(net, RoutingConfig(...))
    Environment(net, router); add_collective(env, name, op, algorithm, groups, bytes, Ctx())
    max_min_rates(ptr, links, mult, capacity);  apply_failures(net, ["link:leaf/0-spine/1"])

See ``docs/netsim.md``.
"""

from supernode.netsim.build import network_from_cluster
from supernode.netsim.collectives import Ctx, collective_phases
from supernode.netsim.dag import add_collective
from supernode.netsim.engine import Environment
from supernode.netsim.failures import apply_failures, parse_failure
from supernode.netsim.maxmin import check_max_min, max_min_rates
from supernode.netsim.network import Network, network_from_graph
from supernode.netsim.patterns import PATTERNS
from supernode.netsim.placement import load_placement
from supernode.netsim.policies import ROUTING_POLICIES, RoutingPolicy
from supernode.netsim.routing import Router, RoutingConfig
from supernode.netsim.scenario import (
    JobInput,
    SimOptions,
    SimResult,
    simulate_jobs,
    simulate_traffic,
)
from supernode.netsim.tasks import FlowSpec, Task
from supernode.netsim.traffic import TrafficFile

__all__ = [
    "ROUTING_POLICIES",
    "Ctx",
    "PATTERNS",
    "Environment",
    "FlowSpec",
    "JobInput",
    "Network",
    "Router",
    "RoutingConfig",
    "RoutingPolicy",
    "SimOptions",
    "SimResult",
    "Task",
    "TrafficFile",
    "add_collective",
    "apply_failures",
    "check_max_min",
    "collective_phases",
    "load_placement",
    "max_min_rates",
    "network_from_cluster",
    "network_from_graph",
    "parse_failure",
    "simulate_jobs",
    "simulate_traffic",
]
