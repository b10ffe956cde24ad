"""The design review's memory stage: the global address space in figures the rules judge.

Seed 003 §2.3 puts every unit's memory into one global address space over the supernode
bus. The stage runs only when the design says something about that space: the cluster
has a ``memory:`` block, or the bundled data (``data/memory/defaults.yaml``) has a named
entry for its host CPU (Grace's NVLink-C2C, Kunpeng on the Unified Bus); otherwise it
returns None and ``results.json`` -> ``memory`` is null. It calls
:func:`supernode.memory.model.memory_model` (closed forms, a few milliseconds) and keeps
what the report and the memory rules (:mod:`supernode.rules.memory_rules`) read: the
figures of :func:`supernode.memory.judged.judged_figures` (unit kinds, access tiers with
their one-way latencies, the farthest remote tier and the streaming link load), which
``supernode memory map --json`` prints under ``review``.

Units: SI (bytes, bytes/s, seconds).
"""

from __future__ import annotations

from typing import Any

from supernode.memory.defaults import cpu_entry
from supernode.memory.judged import judged_figures
from supernode.memory.model import memory_model
from supernode.memory.units import memory_kinds
from supernode.spec.resolved import Cluster


def memory_source(cluster: Cluster) -> str | None:
    """Why the design has a memory section: ``memory block`` (the cluster's own), ``data
    for <CPU>`` (the bundled defaults name the host CPU), or None (no section)."""
    if cluster.spec.memory is not None:
        return "memory block"
    for cpu in cluster.spec.host.cpus:
        name = cpu_entry(cpu.model)
        if name is not None:
            return f"data for {cpu.model}"
    return None


def check_memory_block(cluster: Cluster) -> None:
    """Refuse a ``memory:`` block that names a unit the host does not have (InputError
    with its field path), before any stage runs."""
    if cluster.spec.memory is not None:
        memory_kinds(cluster)


def memory_results(cluster: Cluster) -> dict[str, Any] | None:
    """``results.json`` -> ``memory`` for ``cluster`` (None: no memory section, see
    :func:`memory_source`). Raises InputError for a bad ``memory:`` block."""
    source = memory_source(cluster)
    if source is None:
        return None
    return {"source": source, **judged_figures(memory_model(cluster))}
