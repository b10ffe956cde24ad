"""Which collective path and which fabric effect drove a prediction (for reports).

For a chosen algorithm and protocol (a :class:`~supernode.collectives.choice_memo.Choice`
element) the path is ``algorithm/protocol over tier[table, routing] + ...``; the effects
are what, beyond line rate × protocol efficiency, its schedule pays: static ECMP
collisions (:mod:`.routing`), uplink oversubscription, in-network reduction (NVLS,
SHARP), uneven parts where a group straddles domains, the depth of NCCL's tree across
domains. ``validate``, ``compare`` and ``collective`` print them so a miss can be traced
to the path and effect that produced it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from supernode.collectives.efficiency import EfficiencyTable, Tables, as_tables
from supernode.collectives.fabric import Fabric
from supernode.collectives.levels import outer, used_levels
from supernode.collectives.model import options
from supernode.collectives.routing import flows_per_port
from supernode.collectives.schedule import Schedule, hashed_uplinks, routing_efficiency

NO_EFFECT = "none (line rate x protocol efficiency)"


def chosen_schedule(op: str, ranks: int, fabric: Fabric, algorithm: str, protocol: str,
                    tables: Tables | Mapping[str, EfficiencyTable] | None = None
                    ) -> Schedule | None:
    """The schedule of ``algorithm``/``protocol`` for ``ranks`` ranks (None if none runs)."""
    runnable, _ = options(op, fabric, int(ranks), as_tables(tables), (algorithm,))
    for option in runnable:
        if option.protocol == protocol:
            return option.schedule
    return None


def path_text(schedule: Schedule) -> str:
    """``algorithm/protocol over tier[table, routing] + ...`` for the tiers it uses."""
    levels = used_levels(list(schedule.levels)) or list(schedule.levels[:1])
    tiers = []
    for lv in levels:
        tags = [lv.tier.efficiency]
        if lv.tier.in_network_reduction:
            tags.append("in-network")
        if lv.index > 0:
            tags.append(lv.tier.routing)
        tiers.append(f"{lv.tier.name}[{', '.join(tags)}]")
    return f"{schedule.algorithm}/{schedule.protocol} over {' + '.join(tiers)}"


def effects(schedule: Schedule) -> tuple[str, ...]:
    """The fabric effects the schedule pays (see the module docstring), in order."""
    levels = list(schedule.levels)
    found: list[str] = []
    for phase in schedule.phases:
        if phase.in_network:
            tier = levels[max(j for j, _ in phase.steps)].tier.name if phase.steps else ""
            kind = "NVLS" if phase.pattern == "multicast" and all(
                ld.level == 0 for ld in phase.loads) else "SHARP"
            found.append(f"in-network reduction ({kind}) on {tier}")
        for load in phase.loads:
            factor = routing_efficiency(load, levels, phase)
            if factor < 1.0:
                lv = levels[load.level]
                flows = flows_per_port(phase.pattern, lv.ranks - levels[load.level - 1].members)
                found.append(f"static ECMP on {lv.tier.name}: x{factor:.2f} ({flows:g} flows "
                             f"per port hashed over {hashed_uplinks(lv)} uplinks)")
        if phase.pattern == "tree" and int(phase.number("nodes", 1)) > 2:
            m = int(phase.number("nodes", 1))
            found.append(f"double binary tree over {m} domains (depth "
                         f"{int(math.floor(math.log2(m)))})")
    for lv in outer(levels):
        if lv.tier.oversubscription > 1:
            found.append(f"oversubscription {lv.tier.oversubscription:g}:1 on {lv.tier.name}")
        inner = levels[lv.index - 1].members
        if lv.smallest < inner:
            found.append(f"uneven parts on {lv.tier.name}: smallest {lv.smallest} of {inner}")
    unique = tuple(dict.fromkeys(found))
    return unique or (NO_EFFECT,)


def explain(op: str, ranks: int, fabric: Fabric, algorithm: str, protocol: str,
            tables: Tables | Mapping[str, EfficiencyTable] | None = None
            ) -> tuple[str, tuple[str, ...]]:
    """``(path, effects)`` of the chosen algorithm/protocol on ``ranks`` ranks."""
    schedule = chosen_schedule(op, ranks, fabric, algorithm, protocol, tables)
    if schedule is None:
        return f"{algorithm}/{protocol}", (NO_EFFECT,)
    return path_text(schedule), effects(schedule)
