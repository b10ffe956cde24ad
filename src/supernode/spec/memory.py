"""Schema of a cluster's ``memory:`` block: how each unit kind joins the global address space.

Seed 003 (§2.3, §4.3): a supernode puts every unit's memory into one global address space.
A request carries a global address; the bus translates it to (unit, local address) and
forwards it. The block says, per unit kind, how much memory the unit brings, how fast it
is, whether it joins the global space, the granularity of the map and the translation
table; left out, each figure comes from the catalog part (HBM capacity and bandwidth) or
from ``data/memory/defaults.yaml`` (each default there names its source or says assumed).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from supernode.spec.base import FieldError, StrictModel

#: ``accelerator`` (the host's accelerators), ``cpu`` (its CPU sockets) or the name of an
#: ``other_units`` entry of the host.
MemoryUnitRole = str
Mapping = Literal["by_unit", "interleaved"]
Protocol = Literal["mesi", "moesi"]
Policy = Literal["invalidate", "update"]


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


class UnitMemorySpec(StrictModel):
    """The memory one kind of unit brings to the supernode (figures per unit)."""

    unit: MemoryUnitRole = Field(min_length=1, description="Which units: accelerator, cpu, "
                                 "or the name of one of the host's other_units.")
    capacity_gbyte: float | None = Field(None, gt=0, description="Memory per unit in GB "
                                         "(null: the catalog part's HBM, the CPU's "
                                         "memory_gbyte, or defaults.yaml).")
    bandwidth_gbyte_per_s: float | None = Field(None, gt=0, description="Local memory "
                                                "bandwidth per unit in GB/s (null: catalog "
                                                "or defaults.yaml).")
    local_latency_ns: float | None = Field(None, gt=0, description="Load-to-use latency of "
                                           "the unit's own memory in ns (null: defaults).")
    global_space: bool = Field(True, description="The memory joins the global address "
                               "space (false: private to the unit).")
    attach_bandwidth_gbyte_per_s: float | None = Field(
        None, gt=0, description="Per direction, GB/s, of the link a unit without scale-up "
        "ports reaches the domain by (Grace NVLink-C2C: 450); null: defaults.yaml.")
    attach_latency_ns: float | None = Field(None, ge=0, description="One-way latency of "
                                            "that attach link in ns (null: defaults).")
    translation_entries: int | None = Field(None, ge=1, le=2**32, description="Entries of "
                                            "the unit's remote-translation table (null: "
                                            "defaults).")
    translation_page_bytes: int | None = Field(None, ge=4096, le=2**40, description="Reach "
                                               "of one translation entry in bytes (a power "
                                               "of two; null: defaults).")

    @model_validator(mode="after")
    def _page(self) -> UnitMemorySpec:
        page = self.translation_page_bytes
        if page is not None and not _power_of_two(page):
            raise FieldError("translation_page_bytes", f"must be a power of two, got {page}")
        return self


class MemorySpec(StrictModel):
    """The global address space of a supernode: map layout, line size and protocol."""

    mapping: Mapping = Field("by_unit", description="by_unit: each unit owns one "
                             "contiguous range; interleaved: consecutive granules of each "
                             "unit kind rotate over its units.")
    interleave_bytes: int = Field(4096, ge=64, le=2**30, description="Granule of the map "
                                  "in bytes (a power of two): the unit of interleaving and "
                                  "of migration.")
    line_bytes: int = Field(128, ge=16, le=4096, description="Coherence line in bytes (a "
                            "power of two).")
    protocol: Protocol = Field("mesi", description="Directory protocol: mesi or moesi.")
    policy: Policy = Field("invalidate", description="On a write to a shared line: "
                           "invalidate the other copies or update them.")
    units: list[UnitMemorySpec] = Field(default_factory=list, description="Per unit kind "
                                        "overrides; kinds not listed take the defaults.")

    @model_validator(mode="after")
    def _sizes(self) -> MemorySpec:
        for name in ("interleave_bytes", "line_bytes"):
            value = getattr(self, name)
            if not _power_of_two(value):
                raise FieldError(name, f"must be a power of two, got {value}")
        if self.line_bytes > self.interleave_bytes:
            raise FieldError("line_bytes", f"{self.line_bytes} B is larger than the map "
                             f"granule interleave_bytes ({self.interleave_bytes} B)")
        seen: set[str] = set()
        for index, unit in enumerate(self.units):
            if unit.unit in seen:
                raise FieldError(f"units[{index}].unit", f"{unit.unit!r} is listed twice")
            seen.add(unit.unit)
        return self
