"""``results.json`` -> ``memory``: the global address space of one supernode
(:func:`supernode.design.memory.memory_results`; docs/memory.md). Null when the design
says nothing about its memory (no ``memory:`` block, no bundled data for its host CPU).
Bytes, bytes/s, seconds; shares and ratios are fractions."""

from __future__ import annotations

from typing import Literal

from supernode.design.results.base import ResultModel, field


class MemoryKindResult(ResultModel):
    """One kind of unit whose memory joins (or stays out of) the global space."""

    role: str = field("accelerator, cpu, or an other_units name.")
    name: str = field("Part name.")
    count: int = field("Units of this kind per supernode.")
    capacity_bytes: float = field("Memory per unit (bytes).")
    bandwidth_bytes_per_s: float = field("Local memory bandwidth per unit (bytes/s).")
    local_latency_s: float = field("Load latency of the unit's own memory (s).")
    interconnect_bandwidth_bytes_per_s: float = field(
        "Per direction, the bandwidth the unit's interconnect delivers to it: scale-up "
        "injection of an accelerator, the attach link (NVLink-C2C) of a CPU (bytes/s).")
    global_space: bool = field("Whether the kind's memory is in the global map.")


class MemoryPathResult(ResultModel):
    """One access tier from one kind to another kind's memory."""

    requester: str = field("Part that issues the access.")
    target: str = field("Part whose memory is read.")
    tier: str = field("local, same host, same switch, cross tier, ...")
    hops: int = field("Switch or link hops.")
    latency_s: float = field("Round trip of a load (s).")
    one_way_s: float = field("One-way message latency (round trip less directory and "
                             "memory, halved; 0 for local) (s).")
    bandwidth_bytes_per_s: float = field("Sustained bandwidth per direction (bytes/s).")


class RemoteResult(ResultModel):
    """The accelerators' farthest remote tier against their own memory."""

    tier: str = field("The farthest tier.")
    hops: int = field("Its hops.")
    one_way_s: float = field("Its one-way latency (s).")
    round_trip_s: float = field("Its load round trip (s).")
    bandwidth_bytes_per_s: float = field("Its sustained bandwidth per direction (bytes/s).")
    local_bandwidth_bytes_per_s: float = field("The accelerator's own memory bandwidth.")
    bandwidth_ratio: float = field("Remote over local bandwidth.")
    remote_share: float = field("Share of a unit's own data the map puts on other units "
                                "(0 by_unit, (n-1)/n interleaved).")
    stream_link_load: float = field("Scale-up link utilisation of a unit streaming its "
                                    "data through the map at its local bandwidth.")


class MemoryResults(ResultModel):
    """The global address space as the memory rules judge it."""

    source: str = field("Why the section exists: 'memory block' or 'data for <CPU>'.")
    mapping: Literal["by_unit", "interleaved"] = field("How the map lays out the units.")
    interleave_bytes: int = field("The map's granule (bytes).")
    line_bytes: int = field("Coherence line (bytes).")
    protocol: Literal["mesi", "moesi"] = field("Directory protocol.")
    policy: Literal["invalidate", "update"] = field("Write policy.")
    global_bytes: int = field("Size of the global address space (bytes).")
    kinds: list[MemoryKindResult] = field("Every memory-bearing kind, accelerators first.")
    paths: list[MemoryPathResult] = field("Every access tier.")
    remote: RemoteResult | None = field("The farthest remote tier; null with one "
                                        "accelerator per supernode.")
    assumed: list[str] = field("Figures no public source gives (part.field).")
