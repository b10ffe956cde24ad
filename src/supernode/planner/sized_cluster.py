"""The cluster a sizing asks for, as a cluster file every command loads.

``supernode size`` sizes a build in whole units of a template (a DGX SuperPOD SU, an NVL72
rack ...); the template's name alone ("dgx-h100-superpod-su") is one unit, not the build.
:func:`sized_cluster` grows the template to the phase-1 GPUs by
:func:`supernode.cluster.scaling.scale_cluster` — the same growth ``plan --gpus`` applies,
adding fat-tree switch tiers while the NICs do not fit (seed 001 §2.2: a two-tier fat tree
of radix-``k`` switches joins ``k²/2`` ports, three tiers ``k³/4``) — and says what fabric
that is.
"""

from __future__ import annotations

from typing import Any

from supernode.cluster.scaling import scale_cluster
from supernode.spec.cluster import ClusterSpec
from supernode.spec.documents import dump_yaml

_TIER_WORDS = {1: "one-tier", 2: "two-tier", 3: "three-tier"}


def sized_cluster(template: ClusterSpec, gpus: int, name: str) -> tuple[ClusterSpec,
                                                                       dict[str, Any]]:
    """``template`` grown to hold ``gpus`` GPUs, named ``name``, and its fabric:
    ``{name, gpus, supernodes, tiers, switch, radix, check, notes}`` (``check``: the
    sentence "5,376 GPUs need a three-tier fabric with radix-64 switches")."""
    scaled = scale_cluster(template, gpus)
    cluster = scaled.cluster
    spec = scaled.spec.model_copy(update={"name": name, "description": (
        f"{template.name} grown by supernode size to {cluster.accelerators:,} GPUs "
        f"({scaled.units:,} unit(s) of the template). Template: {template.description}")})
    out: dict[str, Any] = {"name": name, "gpus": cluster.accelerators,
                           "supernodes": spec.supernodes, "tiers": 0, "switch": None,
                           "radix": None, "notes": list(scaled.notes)}
    if cluster.scale_out is None:
        out["check"] = (f"{cluster.accelerators:,} GPUs fit one scale-up domain: no "
                        "scale-out fabric")
        return spec, out
    tiers, switch = cluster.scale_out.tiers, cluster.scale_out.switch
    out.update(tiers=tiers, switch=switch.name, radix=switch.radix)
    out["check"] = (f"{cluster.accelerators:,} GPUs need a "
                    f"{_TIER_WORDS.get(tiers, f'{tiers}-tier')} fabric with radix-"
                    f"{switch.radix} switches ({switch.name})")
    return spec, out


def cluster_file_text(spec: ClusterSpec, header: str) -> str:
    """The YAML of a cluster file for ``spec`` (``supernode plan --cluster`` loads it),
    after ``header`` as comment lines."""
    data = spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    comments = "".join(f"# {line}\n" for line in header.splitlines())
    return comments + dump_yaml(data)
