"""Message-size efficiency tables for collective communication, held as data.

A fabric tier names an efficiency table (``nvlink4``, ``infiniband_ndr`` ...). The table
says how much of the tier's per-rank, per-direction line rate ``B`` a collective achieves
for a transfer of ``W`` wire bytes per rank, under each NCCL protocol (NCCL
``src/graph/tuning.cc``: LL128 and Simple):

* ``simple`` (bandwidth protocol): ``B_eff(W) = B · η_max · W / (W + S_half)``, the
  Hockney half-performance form: ``η_max`` is the large-message efficiency and ``S_half``
  the per-rank wire size at which half of it is reached (pipeline fill, channel ramp-up).
* ``ll128`` (latency protocol): ``B_eff = B · η_ll``, no ramp; lower bandwidth, used by
  small messages. ``None`` disables it on that fabric.
* ``in_network``: NVLS / SHARP in-switch reduction efficiency (``None``: no such engine).

Each table also gives ``step_latency_s``, the per-step (per-hop) latency α that fabric
builders copy into :attr:`FabricTier.latency_s`. Achieved time is the minimum over
protocols, as NCCL's tuner picks the fastest protocol for each size; that minimum is the
message-size efficiency curve. Values are fitted by :mod:`supernode.collectives.calibrate`
from published measurements, or documented defaults where none are public.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import numpy as np
from pydantic import Field

from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.loader import read_document, validate_document
from supernode.units import US

SCHEMA = "supernode-collective-efficiency/1"
PROTOCOLS: tuple[str, ...] = ("ll128", "simple")
#: The parameters a table may declare as fitted (file names, in file units).
FITTABLE: tuple[str, ...] = (
    "step_latency_us",
    "simple_efficiency",
    "simple_half_bandwidth_bytes",
    "ll128_efficiency",
    "in_network_efficiency",
)


class EfficiencyTableSpec(StrictModel):
    """One efficiency table as written in ``efficiency.yaml`` (file units).

    A table either gives every value or names ``derived_from`` another table, whose
    values it takes, multiplied by ``scale`` entries and replaced by any value given here.
    """

    description: str = Field(..., description="What fabric the table describes.")
    derived_from: str | None = Field(None, description="Table whose values this one scales.")
    scale: dict[str, float] = Field(default_factory=dict,
                                    description="Multipliers applied to derived values.")
    step_latency_us: float | None = Field(None, ge=0,
                                          description="Per-step latency α, microseconds.")
    simple_efficiency: float | None = Field(
        None, gt=0, le=1, description="η_max: large-message fraction of line rate (Simple).")
    simple_half_bandwidth_bytes: float | None = Field(
        None, ge=0, description="S_half: per-rank wire bytes reaching half of η_max.")
    ll128_efficiency: float | None = Field(
        None, gt=0, le=1, description="LL128 fraction of line rate; null disables LL128.")
    in_network_efficiency: float | None = Field(
        None, gt=0, le=1, description="NVLS/SHARP fraction of line rate; null: none.")
    fitted: list[str] = Field(default_factory=list,
                              description="Parameters refitted by the calibration.")
    source: str = Field("", description="Where the values come from.")


class EfficiencyFileSpec(StrictModel):
    """The whole ``efficiency.yaml`` document."""

    schema_: str = Field(SCHEMA, alias="schema", description="Format tag.")
    procedure: str = Field("", description="How the fitted values were obtained.")
    tables: dict[str, EfficiencyTableSpec] = Field(..., description="Tables by name.")


@dataclass(frozen=True)
class EfficiencyTable:
    """An efficiency table in SI units (see the module docstring for the curve)."""

    name: str
    step_latency_s: float
    simple_efficiency: float
    simple_half_bandwidth_bytes: float
    ll128_efficiency: float | None = None
    in_network_efficiency: float | None = None

    def __post_init__(self) -> None:
        for field in ("simple_efficiency", "ll128_efficiency", "in_network_efficiency"):
            value = getattr(self, field)
            if value is not None and not 0 < value <= 1:
                raise InputError(f"tables.{self.name}.{field}", f"got {value}; must be in (0, 1]")
        if self.simple_efficiency is None:
            raise InputError(f"tables.{self.name}.simple_efficiency", "is required")
        if self.step_latency_s < 0 or self.simple_half_bandwidth_bytes < 0:
            raise InputError(f"tables.{self.name}", "latency and S_half must be ≥ 0")

    def efficiency(self, protocol: str) -> float | None:
        """Large-message fraction of line rate under ``protocol`` (None: unavailable)."""
        if protocol == "simple":
            return self.simple_efficiency
        if protocol == "ll128":
            return self.ll128_efficiency
        raise ValueError(f"unknown protocol {protocol!r}; known: {PROTOCOLS}")

    def half_bandwidth_bytes(self, protocol: str) -> float:
        """Half-bandwidth wire size S_half in bytes (0 for the LL128 protocol)."""
        return self.simple_half_bandwidth_bytes if protocol == "simple" else 0.0


def efficiency_curve(table: EfficiencyTable, wire_bytes, protocol: str = "simple"):
    """Fraction of line rate achieved for ``wire_bytes`` per rank: η·W/(W + S_half).

    Dimensionless, vectorised over ``wire_bytes`` (bytes). Returns 0 where the protocol
    is unavailable on this table.
    """
    eta = table.efficiency(protocol)
    w = np.asarray(wire_bytes, dtype=float)
    if eta is None:
        return np.zeros_like(w)
    half = table.half_bandwidth_bytes(protocol)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(w > 0, eta * w / (w + half), eta if half == 0 else 0.0)


def resolve_values(name: str, tables: Mapping[str, EfficiencyTableSpec],
                   _seen: tuple[str, ...] = ()) -> dict[str, float | None]:
    """File-unit values of table ``name``, following ``derived_from`` and ``scale``."""
    spec = tables[name]
    own = {key: getattr(spec, key) for key in FITTABLE}
    if spec.derived_from is None:
        required = ("step_latency_us", "simple_efficiency", "simple_half_bandwidth_bytes")
        missing = [key for key in required if own[key] is None]
        if missing:
            raise InputError(f"tables.{name}", f"missing {', '.join(missing)} (or give "
                             "derived_from)")
        return own
    base_name = spec.derived_from
    if base_name not in tables or base_name in _seen:
        raise InputError(f"tables.{name}.derived_from", f"{base_name!r} is not a table, or "
                         "derivations form a cycle")
    values = resolve_values(base_name, tables, (*_seen, name))
    for key, factor in spec.scale.items():
        if key not in FITTABLE:
            raise InputError(f"tables.{name}.scale.{key}", f"allowed: {', '.join(FITTABLE)}")
        if values[key] is not None:
            values[key] = values[key] * factor
    values.update({key: v for key, v in own.items() if v is not None})
    return values


def table_from_values(name: str, values: Mapping[str, float | None]) -> EfficiencyTable:
    """Convert one table's file-unit values to SI."""
    return EfficiencyTable(
        name=name,
        step_latency_s=float(values["step_latency_us"]) * US,
        simple_efficiency=_fraction(values["simple_efficiency"]),
        simple_half_bandwidth_bytes=float(values["simple_half_bandwidth_bytes"]),
        ll128_efficiency=_fraction(values["ll128_efficiency"]),
        in_network_efficiency=_fraction(values["in_network_efficiency"]),
    )


def _fraction(value: float | None) -> float | None:
    """Efficiencies scaled by a derivation are capped at 1 (line rate)."""
    return None if value is None else min(1.0, float(value))


def default_efficiency_path() -> Path:
    """Path of the packaged ``data/collectives/efficiency.yaml``."""
    return Path(str(resources.files("supernode") / "data" / "collectives" / "efficiency.yaml"))


def read_efficiency_file(path: str | Path | None = None) -> EfficiencyFileSpec:
    """Read and validate an efficiency file (default: the packaged one)."""
    where = Path(path) if path is not None else default_efficiency_path()
    spec = validate_document(read_document(where), EfficiencyFileSpec, source=str(where))
    for name, table in spec.tables.items():
        unknown = sorted(set(table.fitted) - set(FITTABLE))
        if unknown:
            raise InputError(f"tables.{name}.fitted", f"unknown parameters {unknown}; "
                             f"allowed: {', '.join(FITTABLE)}", source=str(where))
    return spec


def tables_from_file_spec(spec: EfficiencyFileSpec) -> Mapping[str, EfficiencyTable]:
    """All tables of a file spec, in SI, as a read-only mapping."""
    return MappingProxyType({n: table_from_values(n, resolve_values(n, spec.tables))
                             for n in spec.tables})


@lru_cache(maxsize=8)
def _load_cached(path: str | None) -> Mapping[str, EfficiencyTable]:
    return tables_from_file_spec(read_efficiency_file(path))


def load_efficiency_tables(path: str | Path | None = None) -> Mapping[str, EfficiencyTable]:
    """Efficiency tables by name, in SI (read-only; parsed once per path)."""
    return _load_cached(str(path) if path is not None else None)


def get_table(tables: Mapping[str, EfficiencyTable], name: str) -> EfficiencyTable:
    """Look ``name`` up in ``tables``; unknown names are an :class:`InputError`."""
    try:
        return tables[name]
    except KeyError:
        raise InputError("efficiency", f"unknown efficiency table {name!r}; known: "
                         f"{', '.join(sorted(tables))}") from None
