"""Collective-communication cost models (α-β with message-size efficiency tables).

Public API::

    collective_time_s(op, message_bytes, ranks, fabric, algorithm=None) -> (time_s, algorithm)
    Fabric, FabricTier, make_tier, fabric_from_validation_system
    register_algorithm, get_algorithm, algorithm_names
    busbw_factor, algbw_bytes_per_s, busbw_bytes_per_s, time_from_busbw_s
    load_efficiency_tables, EfficiencyTable

See ``docs/collectives.md`` for the formulas, the efficiency curve and its calibration.
"""

from supernode.collectives.busbw import (
    OPS,
    algbw_bytes_per_s,
    busbw_bytes_per_s,
    busbw_factor,
    time_from_busbw_s,
)
from supernode.collectives.efficiency import (
    PROTOCOLS,
    EfficiencyTable,
    efficiency_curve,
    load_efficiency_tables,
)
from supernode.collectives.fabric import (
    Fabric,
    FabricTier,
    fabric_from_validation_system,
    make_tier,
)
from supernode.collectives.model import collective_time_s
from supernode.collectives.registry import (
    Algorithm,
    DuplicateAlgorithmError,
    algorithm_names,
    get_algorithm,
    register_algorithm,
)

__all__ = [
    "OPS",
    "PROTOCOLS",
    "Algorithm",
    "DuplicateAlgorithmError",
    "EfficiencyTable",
    "Fabric",
    "FabricTier",
    "algbw_bytes_per_s",
    "algorithm_names",
    "busbw_bytes_per_s",
    "busbw_factor",
    "collective_time_s",
    "efficiency_curve",
    "fabric_from_validation_system",
    "get_algorithm",
    "load_efficiency_tables",
    "make_tier",
    "register_algorithm",
    "time_from_busbw_s",
]
