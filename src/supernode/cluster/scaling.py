"""Grow a cluster to hold a job, by whole scale-out units, without touching the original.

The *unit* is the cluster document as written: a DGX SuperPOD scalable unit (32 DGX, 256
GPUs), a GB200 NVL72 SuperPOD unit (8 racks), one NVL72 rack... To hold ``gpus``, the
document is copied with ``supernodes`` multiplied by ``ceil(gpus / unit GPUs)``. When
the scale-out fat tree can no longer hold the NICs, the copy gets another switch tier
(2 -> 3, as the DGX SuperPOD does beyond 4 SUs). A cluster without a scale-out fabric
gets a rail-optimised, non-blocking fat tree of the catalog switch matching its NICs.
Every change is reported in plain words. The input spec is never mutated (inputs split by
owner, docs/architecture.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from supernode.cluster.resolve import resolve_cluster
from supernode.errors import InputError
from supernode.spec.cluster import ClusterSpec, ScaleOutSpec
from supernode.spec.resolved import Cluster

#: Catalog switch used for a scale-out fabric added to a single-domain cluster, by the
#: NIC line rate it must serve (Gb/s): NDR 400G, XDR 800G.
DEFAULT_SCALE_OUT_SWITCH = ((400.0, "quantum2-qm9700"), (800.0, "quantum-x800-q3400"))


@dataclass(frozen=True)
class ScaledCluster:
    """A resolved cluster holding the job, what changed, and the job's share of it."""

    cluster: Cluster
    spec: ClusterSpec
    job_gpus: int
    units: int
    notes: list[str] = field(default_factory=list)


def unit_gpus(spec: ClusterSpec) -> int:
    """GPUs in one scale-out unit: the whole cluster document as written."""
    return spec.supernodes * spec.scale_up.size


def scale_cluster(spec: ClusterSpec, gpus: int | None = None, name: str | None = None,
                  add_tiers: bool = False) -> ScaledCluster:
    """Resolve ``spec``, grown by whole units to hold ``gpus`` GPUs (None: as written).

    ``add_tiers``: also add fat-tree tiers to a document that is not grown (for derived
    variants, e.g. a sweep's). Raises :class:`InputError` (path ``gpus``) when the job
    cannot be held.
    """
    label = name or spec.name
    unit = unit_gpus(spec)
    if gpus is None or gpus <= unit:
        cluster, notes = resolve_adding_tiers(spec) if add_tiers else (
            resolve_cluster(spec), [])
        job = gpus or cluster.accelerators
        if job < 1:
            raise InputError("gpus", f"must be >= 1, got {job}")
        if job != cluster.accelerators:
            notes.append(f"the job uses {job:,} of {label}'s {cluster.accelerators:,} GPUs")
        return ScaledCluster(cluster, spec, job, 1, notes)
    units = math.ceil(gpus / unit)
    grown, notes = _grow(spec, units)
    cluster, more = resolve_adding_tiers(grown)
    notes += more
    notes.insert(0, f"scaled {label} from 1 to {units:,} units of {unit:,} GPUs "
                    f"({unit:,} -> {cluster.accelerators:,} GPUs) to hold {gpus:,} GPUs")
    if gpus < cluster.accelerators:
        notes.append(f"the job uses {gpus:,} of the {cluster.accelerators:,} GPUs")
    return ScaledCluster(cluster, cluster.spec, gpus, units, notes)


def _grow(spec: ClusterSpec, units: int) -> tuple[ClusterSpec, list[str]]:
    notes: list[str] = []
    update: dict[str, Any] = {"supernodes": spec.supernodes * units}
    if spec.scale_out is None:
        nics = spec.host.nics
        if nics is None or nics.count == 0:
            raise InputError("gpus", f"{spec.name} has no NICs to join copies of it; give a "
                                     f"cluster with a scale-out fabric")
        switch = next((s for speed, s in DEFAULT_SCALE_OUT_SWITCH
                       if nics.speed_gbit_per_s <= speed), DEFAULT_SCALE_OUT_SWITCH[-1][1])
        update["scale_out"] = ScaleOutSpec(tiers=2, rail_optimized=True, switch=switch)
        notes.append(f"{spec.name} has no scale-out fabric: added a rail-optimised, "
                     f"non-blocking 2-tier fat tree of {switch}")
    return spec.model_copy(update=update), notes


def resolve_adding_tiers(spec: ClusterSpec) -> tuple[Cluster, list[str]]:
    """Resolve a grown or varied document, adding fat-tree tiers (up to 3) while its
    NICs do not fit the switches; the notes say what was added."""
    current = spec
    notes: list[str] = []
    while True:
        try:
            return resolve_cluster(current), notes
        except InputError as exc:
            out = current.scale_out
            if exc.path != "scale_out.tiers" or out is None or out.tiers >= 3:
                raise InputError("gpus", f"the scaled cluster is not valid: {exc.render()}"
                                 ) from None
            grown = out.model_copy(update={"tiers": out.tiers + 1})
            notes.append(f"scale-out fabric raised from {out.tiers} to {grown.tiers} switch "
                         f"tiers to hold {current.supernodes * current.scale_up.size:,} GPUs' "
                         f"NICs ({exc.message.split(';')[0]})")
            current = current.model_copy(update={"scale_out": grown})
