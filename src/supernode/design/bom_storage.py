"""Checkpoint storage of the bill of materials: what the checkpoint needs, and the
appliances (and their storage-network ports) that provide it.

The need comes from the reliability section's checkpoint (``reliability.checkpoint``, its
size the memory model's model-state bytes): the write bandwidth that finishes one
checkpoint within its interval (bytes/s) and the capacity of :data:`RETAINED_CHECKPOINTS`
of them (bytes). The hardware: ``appliances = max(ceil(write / per-appliance write),
ceil(capacity / per-appliance usable capacity))`` of the appliance in
``data/design/storage_appliances.yaml`` (its source there), each taking its
``network_ports`` storage-network ports.
"""

from __future__ import annotations

import functools
import math
from importlib import resources
from typing import Any

from supernode.spec.loader import parse_text

_FILE = "data/design/storage_appliances.yaml"
#: Checkpoints kept on storage. ASSUMPTION: the last three (a restart point, the one
#: before in case it is corrupt, and one being written), NeMo's checkpoint callback
#: default ``save_top_k: 3``.
RETAINED_CHECKPOINTS = 3


@functools.cache
def storage_data() -> dict[str, Any]:
    """The parsed storage appliance file (cached; treat as read-only)."""
    text = (resources.files("supernode") / _FILE).read_text(encoding="utf-8")
    return parse_text(text, source=_FILE)


def appliance(name: str | None = None) -> dict[str, Any]:
    """One appliance entry (the file's default when ``name`` is None), with its id."""
    data = storage_data()
    key = name or data["default"]
    return {"id": key, **data["appliances"][key]}


def appliances_needed(write_bytes_per_s: float, capacity_bytes: float,
                      entry: dict[str, Any]) -> tuple[int, int, int]:
    """(appliances, for bandwidth, for capacity): each the ceiling of the need over one
    appliance's write bandwidth (bytes/s) or usable capacity (bytes); at least one."""
    by_bw = math.ceil(write_bytes_per_s / (entry["write_gbyte_per_s"] * 1e9) - 1e-9)
    by_cap = math.ceil(capacity_bytes / (entry["usable_capacity_tbyte"] * 1e12) - 1e-9)
    return max(by_bw, by_cap, 1), by_bw, by_cap


def checkpoint_storage(data: dict[str, Any]) -> dict[str, Any] | None:
    """Checkpoint storage from the reliability section's checkpoint (None without one):
    the need (bytes/s of write, bytes of capacity) and the appliances and network ports
    that meet it."""
    rel = data.get("reliability")
    if rel is None:
        return None
    ck = rel["checkpoint"]
    size, interval = ck["size_bytes"], ck["chosen_interval_s"]
    capacity, write = size * RETAINED_CHECKPOINTS, size / interval
    entry = appliance()
    count, by_bw, by_cap = appliances_needed(write, capacity, entry)
    return {"checkpoint_bytes": size,
            "checkpoint_bytes_source": "reliability.checkpoint.size_bytes: the memory "
            "model's model-state bytes (weights + optimizer states of every parameter)",
            "interval_s": interval, "retained_checkpoints": RETAINED_CHECKPOINTS,
            "retention_source": "assumption: the last three checkpoints (NeMo's "
                                "save_top_k default)",
            "capacity_bytes": capacity,
            "write_bandwidth_needed_bytes_per_s": write,
            "write_bandwidth_assumed_bytes_per_s": ck["write_bytes_per_s"],
            "appliance": entry["part"], "appliance_id": entry["id"],
            "appliance_write_bytes_per_s": entry["write_gbyte_per_s"] * 1e9,
            "appliance_read_bytes_per_s": entry["read_gbyte_per_s"] * 1e9,
            "appliance_capacity_bytes": entry["usable_capacity_tbyte"] * 1e12,
            "appliance_source": " ".join(entry["source"].split()),
            "appliances_for_bandwidth": by_bw, "appliances_for_capacity": by_cap,
            "appliances": count, "ports_per_appliance": entry["network_ports"],
            "port_bandwidth_bytes_per_s": entry["port_gbit_per_s"] * 1e9 / 8,
            "network_ports": count * entry["network_ports"]}
