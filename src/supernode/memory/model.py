"""One supernode's memory system in one call: map, translation, access tiers, churn.

:func:`memory_model` is the entry point of ``supernode memory``: the kinds of memory
(:mod:`.units`), the global map (:mod:`.addrmap`), each kind's translation table against
a working set (:mod:`.translation`), the latency and bandwidth of every access tier
(:mod:`.fabric`) and the cost of one accelerator leaving, failing or joining
(:mod:`.membership`'s rules in closed form, checked against the explicit map in
``tests/test_memory_map.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.errors import InputError
from supernode.memory.addrmap import Region, region_table
from supernode.memory.fabric import AccessPath, access_paths
from supernode.memory.membership import move_time_s
from supernode.memory.translation import Translation, translation
from supernode.memory.units import MemoryKind, memory_kinds, memory_spec
from supernode.spec.memory import MemorySpec
from supernode.spec.resolved import Cluster

#: Share of each unit's memory that holds data when a unit leaves, fails or joins (the
#: rest is the room re-homed granules land in). An assumption; docs/memory.md.
USED_FRACTION = 0.5


@dataclass(frozen=True)
class Churn:
    """Cost of one membership change of one accelerator (bytes, seconds)."""

    change: str
    moved_bytes: float
    seconds: float
    how: str

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class MemoryModel:
    """Everything ``supernode memory`` prints."""

    cluster: str
    spec: MemorySpec
    kinds: list[MemoryKind]
    regions: list[Region]
    translations: dict[str, Translation]
    paths: list[AccessPath]
    churn: list[Churn]

    @property
    def global_bytes(self) -> int:
        """Size of the global address space (bytes)."""
        return self.regions[-1].end if self.regions else 0

    def as_dict(self) -> dict[str, object]:
        """JSON form: stable keys, SI besides the ns / GB/s of the access tiers."""
        return {
            "cluster": self.cluster, "mapping": self.spec.mapping,
            "interleave_bytes": self.spec.interleave_bytes,
            "line_bytes": self.spec.line_bytes, "protocol": self.spec.protocol,
            "policy": self.spec.policy, "global_bytes": self.global_bytes,
            "kinds": [{"role": k.role, "name": k.name, "count": k.count,
                       "capacity_bytes": k.capacity_bytes,
                       "bandwidth_bytes_per_s": k.bandwidth_bytes_per_s,
                       "local_latency_s": k.local_latency_s, "global_space": k.global_space,
                       "assumed": list(k.assumed)} for k in self.kinds],
            "regions": [r.__dict__ for r in self.regions],
            "translation": {k: t.as_dict() for k, t in self.translations.items()},
            "paths": [p.as_dict() for p in self.paths],
            "churn": [c.as_dict() for c in self.churn],
            "used_fraction": USED_FRACTION,
        }


def churn(acc: MemoryKind, used_fraction: float = USED_FRACTION) -> list[Churn]:
    """One accelerator of ``acc.count`` leaving, failing, joining: bytes and time on the
    fabric at each unit's injection bandwidth (:func:`.membership.move_time_s`)."""
    n = acc.count
    held = used_fraction * acc.capacity_bytes
    bw = acc.attach_bandwidth_bytes_per_s
    out = []
    if n > 1:
        out.append(Churn("remove", held, move_time_s(held, bw, bw, 1, n - 1),
                         "the leaving unit sends its data to the survivors' free room"))
        out.append(Churn("fail", held, move_time_s(held, bw, bw, n - 1, n - 1),
                         "the survivors restore its data from replicas among themselves"))
    joined = used_fraction * acc.capacity_bytes * n / (n + 1)
    out.append(Churn("add", joined, move_time_s(joined, bw, bw, n, 1),
                     "the fullest units hand the newcomer an even share"))
    return out


def memory_model(cluster: Cluster, working_set_bytes: float | None = None) -> MemoryModel:
    """The memory model of one supernode of ``cluster``; ``working_set_bytes`` (default:
    each unit's whole memory) sets the translation miss rates."""
    if working_set_bytes is not None and not working_set_bytes >= 0:
        raise InputError("--working-set-bytes", f"must be >= 0, got {working_set_bytes}")
    spec = memory_spec(cluster)
    kinds = memory_kinds(cluster)
    regions = region_table(kinds, spec.mapping, spec.interleave_bytes)
    global_bytes = regions[-1].end if regions else 0
    tables = {k.role: translation(k.translation_entries, k.translation_page_bytes,
                                  global_bytes, k.capacity_bytes if working_set_bytes is None
                                  else working_set_bytes) for k in kinds}
    return MemoryModel(cluster.name, spec, kinds, regions, tables,
                       access_paths(cluster, kinds, spec.line_bytes), churn(kinds[0]))
