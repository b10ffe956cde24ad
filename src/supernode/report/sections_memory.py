"""Section: memory (the global address space of one supernode, seed 003 §2.3).

It reads ``results.json`` -> ``memory`` (:func:`supernode.design.memory.memory_results`)
and is left out when that is null or absent (a design that says nothing about its memory
space, or the results of an older run). The memory rules' findings are in the findings
section like every rule's.
"""

from __future__ import annotations

from typing import Any

from supernode.report import sections_run  # noqa: F401  (registered after its facility)
from supernode.report.blocks import Cell, Paragraph, Section, Table
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T

M = ("memory",)


def _space_paragraph(mem: dict[str, Any]) -> Paragraph:
    """Size, layout and protocol of the global space, and why the section is here."""
    return Paragraph((
        L("One global address space of "), N(*M, "global_bytes", kind="bytes"),
        L(" per supernode, "), T(*M, "mapping"), L(" ("), N(*M, "interleave_bytes",
                                                             kind="count"),
        L(" B granules), "), N(*M, "line_bytes", kind="count"), L(" B coherence lines, "),
        T(*M, "protocol"), L(" "), T(*M, "policy"), L(" (from the "), T(*M, "source"),
        L("; supernode memory --cluster prints the map, the membership changes and the "
          "coherence cost).")))


def _remote_paragraph() -> Paragraph:
    """The farthest remote tier against local memory, and the streaming link load."""
    r = (*M, "remote")
    return Paragraph((
        L("Farthest remote tier of the accelerators: "), T(*r, "tier"), L(", "),
        N(*r, "one_way_s", kind="ns"), L(" one-way ("), N(*r, "round_trip_s", kind="ns"),
        L(" for a load), "), N(*r, "bandwidth_bytes_per_s", kind="bytes_per_s"),
        L(" against "), N(*r, "local_bandwidth_bytes_per_s", kind="bytes_per_s"),
        L(" local (ratio "), N(*r, "bandwidth_ratio", kind="ratio"),
        L("). A unit streaming its own data through the map reaches "),
        N(*r, "remote_share", kind="share"), L(" of it remotely and loads its link "),
        N(*r, "stream_link_load", kind="share"),
        L(" (seed 003 §2.3: keep the data used together in one unit).")))


def memory_section(r: dict[str, Any]) -> Section | None:
    """The global space, its unit kinds and its access tiers."""
    mem = r.get("memory")
    if mem is None:
        return None
    s = Section("memory", "Memory")
    s.blocks.append(_space_paragraph(mem))
    if mem["remote"] is not None:
        s.blocks.append(_remote_paragraph())
    k = (*M, "kinds")
    s.blocks.append(Table("Memory per unit kind", (
        "kind", "part", "units", "per unit", "bandwidth", "interconnect", "latency",
        "in the map"), tuple((
            T(*k, i, "role"), T(*k, i, "name"), N(*k, i, "count", kind="count"),
            N(*k, i, "capacity_bytes", kind="bytes"),
            N(*k, i, "bandwidth_bytes_per_s", kind="bytes_per_s"),
            N(*k, i, "interconnect_bandwidth_bytes_per_s", kind="bytes_per_s"),
            N(*k, i, "local_latency_s", kind="ns"), N(*k, i, "global_space", kind="bool"))
            for i in range(len(mem["kinds"])))))
    p = (*M, "paths")
    s.blocks.append(Table("Access tiers (round trip of a load; sustained per direction)", (
        "from", "to", "tier", "hops", "one-way", "round trip", "bandwidth"), tuple((
            T(*p, i, "requester"), T(*p, i, "target"), T(*p, i, "tier"),
            N(*p, i, "hops", kind="count"), N(*p, i, "one_way_s", kind="ns"),
            N(*p, i, "latency_s", kind="ns"),
            N(*p, i, "bandwidth_bytes_per_s", kind="bytes_per_s"))
            for i in range(len(mem["paths"])))))
    if mem["assumed"]:
        names: list[Cell] = []
        for i in range(len(mem["assumed"])):
            names += [L(", ") if i else L("Assumed (no public source): "),
                      T(*M, "assumed", i)]
        s.blocks.append(Paragraph((*names, L("."))))
    return s


register_section("memory", "Memory", memory_section, after="facility")
