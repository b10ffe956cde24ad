"""The memories of one supernode: which units bring memory, how much, how fast (SI).

A supernode (one scale-up domain) holds ``scale_up.size`` accelerators on hosts of
``accelerators_per_host``; each host also carries its CPU sockets and ``other_units``
(seed 003 §2.3: general CPUs, matrix and preprocessing units in one system). Each kind of
unit is a :class:`MemoryKind`: a count per domain and per-unit figures. Figures come from
the cluster's ``memory:`` block, else the catalog part (an accelerator's HBM capacity and
bandwidth, a CPU's ``memory_gbyte``), else ``data/memory/defaults.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.errors import InputError
from supernode.memory.defaults import cpu_defaults, memory_defaults
from supernode.spec.memory import MemorySpec, UnitMemorySpec
from supernode.spec.resolved import Cluster
from supernode.units import GBYTE, GBYTE_PER_S, NS


@dataclass(frozen=True)
class MemoryKind:
    """One kind of memory-bearing unit in a supernode, per-unit figures in SI."""

    role: str                   # accelerator, cpu, or an other_units name
    name: str                   # part name (gb200, Grace...)
    count: int                  # units of this kind per supernode
    per_host: int               # units of this kind per host
    capacity_bytes: float
    bandwidth_bytes_per_s: float
    local_latency_s: float
    global_space: bool
    #: Per direction, the link a unit without scale-up ports reaches the domain by (an
    #: accelerator's is its scale-up injection bandwidth).
    attach_bandwidth_bytes_per_s: float
    attach_latency_s: float
    translation_entries: int
    translation_page_bytes: int
    assumed: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> float:
        """Memory of every unit of this kind in the supernode (bytes)."""
        return self.count * self.capacity_bytes


def _override(spec: MemorySpec | None, role: str) -> UnitMemorySpec | None:
    if spec is None:
        return None
    return next((u for u in spec.units if u.unit == role), None)


def _pick(over: UnitMemorySpec | None, field: str, fallback: Any, assumed: list[str],
          assumed_fields: tuple[str, ...]) -> Any:
    """The override's value of ``field``, else ``fallback`` (noted when assumed)."""
    value = getattr(over, field) if over is not None else None
    if value is not None:
        return value
    if field in assumed_fields:
        assumed.append(field)
    return fallback


def _kind(role: str, name: str, count: int, per_host: int, base: dict[str, Any],
          over: UnitMemorySpec | None, base_assumed: tuple[str, ...]) -> MemoryKind:
    assumed: list[str] = []

    def pick(field: str) -> Any:
        return _pick(over, field, base[field], assumed, base_assumed)

    return MemoryKind(
        role=role, name=name, count=count, per_host=per_host,
        capacity_bytes=float(pick("capacity_gbyte")) * GBYTE,
        bandwidth_bytes_per_s=float(pick("bandwidth_gbyte_per_s")) * GBYTE_PER_S,
        local_latency_s=float(pick("local_latency_ns")) * NS,
        global_space=over.global_space if over is not None else True,
        attach_bandwidth_bytes_per_s=float(pick("attach_bandwidth_gbyte_per_s")) * GBYTE_PER_S,
        attach_latency_s=float(pick("attach_latency_ns")) * NS,
        translation_entries=int(pick("translation_entries")),
        translation_page_bytes=int(pick("translation_page_bytes")),
        assumed=tuple(f"{name}.{a}" for a in assumed))


def memory_kinds(cluster: Cluster) -> list[MemoryKind]:
    """The memory-bearing unit kinds of one supernode of ``cluster``, accelerators first.

    Raises :class:`InputError` (path ``memory.units[i].unit``) for a ``memory:`` entry
    naming no unit of the host.
    """
    spec = cluster.spec.memory
    acc = cluster.accelerator
    per_host = cluster.host.accelerators_per_host
    hosts = max(1, cluster.scale_up.size // per_host)
    defaults = memory_defaults()
    acc_base = {"capacity_gbyte": acc.memory_bytes / GBYTE,
                "bandwidth_gbyte_per_s": acc.memory_bandwidth_bytes_per_s / GBYTE_PER_S,
                "local_latency_ns": defaults["accelerator"]["local_latency_ns"],
                "attach_bandwidth_gbyte_per_s":
                    cluster.scale_up.bandwidth_per_accelerator_bytes_per_s / GBYTE_PER_S
                    or acc.memory_bandwidth_bytes_per_s / GBYTE_PER_S,
                "attach_latency_ns": cluster.scale_up.link_latency_s / NS,
                "translation_entries": defaults["accelerator"]["translation_entries"],
                "translation_page_bytes": defaults["accelerator"]["translation_page_bytes"]}
    kinds = [_kind("accelerator", acc.name, cluster.scale_up.size, per_host, acc_base,
                   _override(spec, "accelerator"),
                   ("local_latency_ns", "translation_entries"))]
    sockets = sum(c.count for c in cluster.spec.host.cpus)
    if sockets:
        cpu = cluster.spec.host.cpus[0]
        base = dict(cpu_defaults(cpu.model))
        if cpu.memory_gbyte is not None:
            base["capacity_gbyte"] = cpu.memory_gbyte
        assumed = tuple(base.get("assumed", ()))
        if cpu.memory_gbyte is not None:
            assumed = tuple(a for a in assumed if a != "capacity_gbyte")
        kinds.append(_kind("cpu", cpu.model, hosts * sockets, sockets, base,
                           _override(spec, "cpu"), assumed))
    other_base = defaults["other_units"]
    for unit in cluster.spec.host.other_units:
        base = dict(other_base)
        if unit.memory_gbyte is not None:
            base["capacity_gbyte"] = unit.memory_gbyte
        kinds.append(_kind(unit.name, unit.name, hosts * unit.count, unit.count, base,
                           _override(spec, unit.name), tuple(other_base["assumed"])))
    known = {k.role for k in kinds}
    for index, entry in enumerate(spec.units if spec is not None else []):
        if entry.unit not in known:
            raise InputError(f"memory.units[{index}].unit",
                             f"{entry.unit!r} is no unit of the host; one of: "
                             f"{', '.join(sorted(known))}")
    return kinds


def memory_spec(cluster: Cluster) -> MemorySpec:
    """The cluster's ``memory:`` block, or the defaults (by_unit, 4 KiB, 128 B, MESI)."""
    return cluster.spec.memory if cluster.spec.memory is not None else MemorySpec()
