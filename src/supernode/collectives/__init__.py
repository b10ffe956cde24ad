"""Collective-communication cost models: one schedule per algorithm, α-β costed.

Public API::

    collective_time_s(op, message_bytes, ranks, fabric, algorithm=None) -> (time_s, algorithm)
    choose(op, message_bytes, ranks, fabric, algorithm=None) -> Choice (time, algorithm,
        protocol, binding tier, tiers crossed)
    Fabric, FabricTier, make_tier; fabric_from_cluster, fabric_from_validation_system
    group_view(fabric, factors): the tiers a group of strided ranks crosses (alignment)
    register_algorithm, unregister_algorithm, get_algorithm, algorithm_names; build a
        Schedule with get_algorithm(name).build(op, group_levels(fabric, n, tables), protocol)
    busbw_factor, algbw_bytes_per_s, busbw_bytes_per_s, time_from_busbw_s
    load_efficiency_tables, EfficiencyTable

See ``docs/collectives.md`` for the schedules, the efficiency tables and their calibration.
"""

from supernode.collectives.busbw import (
    OPS,
    algbw_bytes_per_s,
    busbw_bytes_per_s,
    busbw_factor,
    time_from_busbw_s,
)
from supernode.collectives.choice_memo import Choice
from supernode.collectives.efficiency import (
    PROTOCOLS,
    EfficiencyTable,
    Tables,
    efficiency_curve,
    load_efficiency_tables,
)
from supernode.collectives.fabric import Fabric, FabricTier, make_tier, with_group_size
from supernode.collectives.groups import consecutive_view, group_view
from supernode.collectives.levels import Level, group_levels
from supernode.collectives.model import choose, collective_time_s
from supernode.collectives.registry import (
    Algorithm,
    DuplicateAlgorithmError,
    algorithm_names,
    get_algorithm,
    register_algorithm,
    unregister_algorithm,
)
from supernode.collectives.schedule import Phase, Schedule, schedule_time_s
from supernode.collectives.systems import fabric_from_cluster, fabric_from_validation_system

__all__ = [
    "OPS",
    "PROTOCOLS",
    "Algorithm",
    "Choice",
    "DuplicateAlgorithmError",
    "EfficiencyTable",
    "Fabric",
    "FabricTier",
    "Level",
    "Phase",
    "Schedule",
    "Tables",
    "algbw_bytes_per_s",
    "algorithm_names",
    "busbw_bytes_per_s",
    "busbw_factor",
    "choose",
    "collective_time_s",
    "consecutive_view",
    "efficiency_curve",
    "fabric_from_cluster",
    "fabric_from_validation_system",
    "get_algorithm",
    "group_levels",
    "group_view",
    "load_efficiency_tables",
    "make_tier",
    "register_algorithm",
    "schedule_time_s",
    "time_from_busbw_s",
    "unregister_algorithm",
    "with_group_size",
]
