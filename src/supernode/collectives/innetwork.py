"""In-switch reduction: NVLink SHARP (NVLS), NVLS_TREE and CollNet (InfiniBand SHARP).

NVLS all-reduce (one NVLink domain whose switches reduce: NVSwitch gen3 on, H100 on):
each rank's shard is reduced by the switch (``multimem.ld_reduce``) and the result
multicast back (``multimem.st``): every rank sends ``S`` (its buffer, read by the switch)
plus ``S/n`` (its reduced shard) and receives as much, ``S(n+1)/n`` per direction instead
of the ring's ``2(n-1)/n · S`` in two passes, so bus bandwidth can exceed the link rate
(≈480 GB/s on H100/H200 with 450 GB/s links). All-gather multicasts ``S/n`` per rank
(``(n-1)/n · S`` received), reduce-scatter reads ``S`` per rank; NCCL runs NVLS for both
inside one domain (src/graph/tuning.cc). Simple protocol only, at the table's in-network
efficiency and latency (NCCL ``nvlsEfficiency``, NVLS ``hwLat``).

NVLS_TREE (several domains): NVLS inside each domain, then NCCL's double binary tree of
``S`` per domain across them (:mod:`.trees`), the heads spread over the domain's NICs.
The two phases run back to back: on GB200 NVL72 racks the measured loss from one rack to
two and three racks (public set) follows the tree's bytes (1 : 1.5) at the NICs' own
efficiency, not the larger of the two stages (docs/collectives.md).

CollNet (SHARP in the scale-out switches, Graham et al. 2016): reduce-scatter inside each
domain, an in-network all-reduce of ``S/g`` per rank through its NIC (the switches reduce
and multicast), all-gather inside; only where the fabric's switches reduce in-network.
"""

from __future__ import annotations

from supernode.collectives.algorithms import ranks_of, ring
from supernode.collectives.hierarchy import part_levels, scoped
from supernode.collectives.levels import Level, outer
from supernode.collectives.schedule import Load, NotApplicable, Phase, Schedule, require_op
from supernode.collectives.trees import cross_tree_phase

NVLS_OPS = frozenset({"all_reduce", "all_gather", "reduce_scatter"})


def _reducing(level: Level) -> bool:
    """The tier's switches reduce in-network and the table has an in-network efficiency."""
    return bool(level.tier.in_network_reduction and level.table.in_network_efficiency)


def _require_nvls_domain(levels: list[Level]) -> None:
    inner = levels[0]
    if inner.tier.kind != "switch" or not _reducing(inner):
        raise NotApplicable(f"in-switch reduction needs scale-up switches that reduce "
                            f"(NVLS); tier {inner.tier.name!r} ({inner.table.name}) has none")


def _multicast(op: str, g: int, scope: str) -> Phase:
    """NVLS inside one domain of ``g`` ranks (per unit message)."""
    wire = {"all_reduce": (g + 1.0) / g, "reduce_scatter": 1.0,
            "all_gather": (g - 1.0) / g}[op]
    return Phase("multicast", scope, (Load(0, wire, 1.0, "port"),), ((0, 1.0),), wire,
                 in_network=True, params=(("op", op),))


def nvls(op: str, levels: list[Level], protocol: str) -> Schedule:
    """NVLS inside one NVLink domain (see the module docstring)."""
    require_op("nvls", op, NVLS_OPS)
    _require_nvls_domain(levels)
    if outer(levels):
        raise NotApplicable("NVLS alone works inside one NVLink domain; this group crosses "
                            f"{outer(levels)[-1].tier.name!r} (NVLS_TREE or CollNet do)")
    if protocol != "simple":
        raise NotApplicable("NVLS runs the Simple protocol only")
    phase = _multicast(op, ranks_of(levels), "group")
    return Schedule("nvls", op, protocol, "nvls", (phase,), tuple(levels))


def nvls_tree(op: str, levels: list[Level], protocol: str) -> Schedule:
    """NVLS inside each domain, then the double binary tree across domains, in sequence."""
    require_op("nvls_tree", op, frozenset({"all_reduce"}))
    _require_nvls_domain(levels)
    if not outer(levels):
        raise NotApplicable("NVLS_TREE needs several NVLink domains (NCCL disables it on "
                            "one node)")
    if protocol != "simple":
        raise NotApplicable("NVLS_TREE runs the Simple protocol only")
    phases = (_multicast("all_reduce", levels[0].members, "parts"), cross_tree_phase(levels))
    return Schedule("nvls_tree", op, protocol, "nvls_tree", phases, tuple(levels))


def collnet(op: str, levels: list[Level], protocol: str) -> Schedule:
    """CollNet / SHARP all-reduce (see the module docstring)."""
    require_op("collnet", op, frozenset({"all_reduce"}))
    crossed = outer(levels)
    if not crossed or not _reducing(crossed[0]):
        raise NotApplicable("CollNet needs several domains joined by switches that reduce "
                            "in-network (SHARP); this fabric's do not")
    if protocol != "simple":
        raise NotApplicable("CollNet runs the Simple protocol only")
    g = levels[0].members
    inner = part_levels(levels)
    rs = scoped(ring("reduce_scatter", inner, protocol).phases[0], "parts", 0, 1.0)
    ag = scoped(ring("all_gather", inner, protocol).phases[0], "parts", 0, 1.0)
    sharp = Phase("multicast", "rails", (Load(crossed[0].index, 1.0 / g, 1.0, "nic"),),
                  ((crossed[-1].index, 1.0),), 1.0 / g, in_network=True,
                  params=(("op", "all_reduce"),))
    phases = (rs, sharp, ag) if g > 1 else (sharp,)
    return Schedule("collnet", op, protocol, "collnet", phases, tuple(levels))
