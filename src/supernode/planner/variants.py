"""Variants of a cluster or workload document, by dotted field path (never in place).

``with_overrides(spec, {"scale_up.size": 72, "host.nics.speed_gbit_per_s": 800})``
returns a new, re-validated document; an unknown path or a bad value is an
:class:`InputError` naming the path. :func:`with_domain_size` changes the scale-up
domain the way an architect would: enough switch chips for the new size (switched
domains) and enough domains to keep the GPU count.
"""

from __future__ import annotations

import copy
import math
from typing import Any, TypeVar

from pydantic import BaseModel

from supernode.errors import InputError
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import validate_document

ModelT = TypeVar("ModelT", bound=BaseModel)


def set_path(data: dict[str, Any], path: str, value: Any, root: str = "") -> None:
    """Set ``data[a][b][c] = value`` for ``path = "a.b.c"`` (in this dict, a copy)."""
    parts = path.split(".")
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        where = ".".join(filter(None, [root, *parts[: i + 1]]))
        if not isinstance(node, dict) or part not in node:
            raise InputError(where, "no such field to set")
        if node[part] is None:
            node[part] = {}
        node = node[part]
    if not isinstance(node, dict):
        raise InputError(".".join(filter(None, [root, path])), "no such field to set")
    node[parts[-1]] = value


def with_overrides(spec: ModelT, overrides: dict[str, Any], root: str = "") -> ModelT:
    """A re-validated copy of ``spec`` with each dotted path set to its value.

    ``root`` prefixes error paths (``cluster`` -> ``cluster.scale_up.size``).
    """
    if not overrides:
        return spec
    data = copy.deepcopy(spec.model_dump(exclude_unset=False, by_alias=True))
    for path, value in overrides.items():
        set_path(data, path, value, root)
    try:
        return validate_document(data, type(spec))
    except InputError as exc:
        path = ".".join(filter(None, [root, exc.path]))
        raise InputError(path, exc.message) from None


def with_domain_size(spec: ClusterSpec, size: int, gpus: int | None = None) -> ClusterSpec:
    """``spec`` with scale-up domains of ``size`` GPUs (switched kinds only).

    Adds switch chips when the new size needs more ports (a single switch tier, each
    chip reaching every GPU of the domain), and sets ``supernodes`` so that the cluster
    holds ``gpus`` (default: as many GPUs as before).
    """
    up = spec.scale_up
    if up.kind != "nvswitch":
        raise InputError("scale_up.kind", f"changing the domain size needs a switched "
                                          f"(nvswitch) scale-up domain; got {up.kind!r}")
    if size < 1:
        raise InputError("scale_up.size", f"must be >= 1, got {size}")
    total = gpus or spec.supernodes * up.size
    update: dict[str, Any] = {"size": size}
    chips = _chips_for(spec, size)
    if chips is not None and chips > (up.switch_chips or 0):
        update["switch_chips"] = chips
    if up.switch_tiers == 2 and up.group_size and size % up.group_size:
        update["group_size"] = None
        update["switch_tiers"] = 1
    new_up = up.model_copy(update=update)
    return spec.model_copy(update={"scale_up": new_up,
                                   "supernodes": max(1, math.ceil(total / size))})


def _chips_for(spec: ClusterSpec, size: int) -> int | None:
    """Switch chips one tier needs for ``size`` GPUs (None when the chip is unknown)."""
    from supernode.catalog import find_accelerator, find_switch

    up = spec.scale_up
    if up.switch is None:
        return None
    switch = up.switch if not isinstance(up.switch, str) else find_switch(up.switch)
    chip = spec.host.accelerator
    if isinstance(chip, str):
        inline = {a.name: a for a in spec.accelerators}
        chip = inline.get(chip) or find_accelerator(chip)
    links = up.links_per_accelerator or chip.scale_up_ports
    return math.ceil(size * links / switch.radix_ports)
