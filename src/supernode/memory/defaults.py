"""The memory model's defaults, read from ``data/memory/defaults.yaml`` (file units).

Each figure there names its source or is listed under ``assumed``; the loader returns
them as plain dictionaries of file units (GB, GB/s, ns), converted to SI by the callers.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from supernode.spec.loader import parse_text

SCHEMA = "supernode-memory-defaults/1"


def bundled(name: str, schema: str) -> dict[str, Any]:
    """The packaged document ``data/memory/<name>``, checked to be of ``schema``."""
    path = resources.files("supernode") / "data" / "memory" / name
    data: dict[str, Any] = parse_text(path.read_text(encoding="utf-8"), name)
    assert data.get("schema") == schema, f"data/memory/{name}: unexpected schema"
    return data


@lru_cache(maxsize=1)
def memory_defaults() -> dict[str, Any]:
    """The bundled defaults document (``data/memory/defaults.yaml``)."""
    return bundled("defaults.yaml", SCHEMA)


def cpu_entry(model: str) -> str | None:
    """Name of the defaults entry a CPU model has (the entry whose name the model
    contains: ``Grace``, ``Kunpeng 920``), or None when only ``default`` applies."""
    lowered = model.lower()
    return next((name for name in memory_defaults()["cpus"]
                 if name != "default" and name in lowered), None)


def cpu_defaults(model: str) -> dict[str, Any]:
    """Defaults of a CPU model: its named entry (:func:`cpu_entry`), else ``default``."""
    cpus: dict[str, dict[str, Any]] = memory_defaults()["cpus"]
    return cpus[cpu_entry(model) or "default"]


def fabric_defaults() -> dict[str, Any]:
    """Header bytes per memory packet and the directory's lookup latency (ns)."""
    fabric: dict[str, Any] = memory_defaults()["fabric"]
    return fabric
