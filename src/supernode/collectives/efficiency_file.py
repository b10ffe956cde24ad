"""The efficiency file (``data/collectives/efficiency.yaml``, format
``supernode-collective-efficiency/2``): its document model, derivations between tables
(``derived_from`` and ``scale``), and its conversion to the SI tables of
:mod:`supernode.collectives.efficiency_table` (loaded and put in force by
:mod:`supernode.collectives.efficiency`)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from pydantic import Field

from supernode.collectives.efficiency_table import FITTABLE, REQUIRED, EfficiencyTable, Tables
from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.loader import read_document, validate_document
from supernode.units import GBYTE_PER_S, US

SCHEMA = "supernode-collective-efficiency/2"


class EfficiencyTableSpec(StrictModel):
    """One efficiency table as written in ``efficiency.yaml`` (file units).

    A table either gives every required value or names ``derived_from`` another table,
    whose values it takes, multiplied by ``scale`` entries and replaced by any value
    given here. ``null`` for an optional protocol disables it.
    """

    description: str = Field(..., description="What link generation the table describes.")
    derived_from: str | None = Field(None, description="Table whose values this one takes.")
    scale: dict[str, float] = Field(default_factory=dict,
                                    description="Multipliers applied to derived values.")
    simple_efficiency: float | None = Field(
        None, gt=0, le=1, description="η: large-message fraction of line rate (Simple).")
    simple_half_bandwidth_bytes: float | None = Field(
        None, ge=0, description="S_half: Simple pipeline fill, wire bytes per rank.")
    ll128_ratio: float | None = Field(None, gt=0, le=1,
                                      description="LL128 rate / Simple rate; null: no LL128.")
    ll_ratio: float | None = Field(None, gt=0, le=1,
                                   description="LL rate / Simple rate; null: no LL.")
    ll_max_gbyte_per_s: float | None = Field(None, gt=0,
                                             description="Cap on the LL rate per rank, GB/s.")
    ll128_max_gbyte_per_s: float | None = Field(
        None, gt=0, description="Cap on the LL128 rate per rank, GB/s.")
    ll_latency_us: float | None = Field(None, ge=0, description="LL per-step latency, µs.")
    ll128_latency_us: float | None = Field(None, ge=0,
                                           description="LL128 per-step latency, µs.")
    simple_latency_us: float | None = Field(None, ge=0,
                                            description="Simple per-step latency, µs.")
    in_network_efficiency: float | None = Field(
        None, gt=0, le=1, description="NVLS/SHARP fraction of line rate; null: none.")
    in_network_latency_us: float | None = Field(
        None, ge=0, description="Latency of one in-network reduction step, µs.")
    in_network_half_bandwidth_bytes: float | None = Field(
        None, ge=0, description="In-network pipeline fill, wire bytes per rank (default: "
        "the Simple fill).")
    fitted: list[str] = Field(default_factory=list,
                              description="Parameters refitted by the calibration.")
    prior: dict[str, float] = Field(
        default_factory=dict, description="Sourced starting values of fitted parameters of "
        "a root table (a derived table's prior is its base's value).")
    source: str = Field("", description="Where the values come from.")


class EfficiencyFileSpec(StrictModel):
    """The whole ``efficiency.yaml`` document."""

    schema_: str = Field(SCHEMA, alias="schema", description="Format tag.")
    procedure: str = Field("", description="How the fitted values were obtained.")
    base_latency_us: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="NCCL base latency per algorithm and protocol, µs.")
    base_latency_source: str = Field("", description="Where the base latencies come from.")
    tables: dict[str, EfficiencyTableSpec] = Field(..., description="Tables by name.")


def resolve_values(name: str, tables: Mapping[str, EfficiencyTableSpec],
                   _seen: tuple[str, ...] = ()) -> dict[str, float | None]:
    """File-unit values of table ``name``, following ``derived_from`` and ``scale``."""
    spec = tables[name]
    given = spec.model_fields_set
    own = {key: getattr(spec, key) for key in FITTABLE}
    if spec.derived_from is None:
        missing = [key for key in REQUIRED if own[key] is None]
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
        value = values[key]
        if value is not None:
            values[key] = value * factor
    # a value written in the file (even null, which disables a protocol) replaces the base's
    values.update({key: own[key] for key in FITTABLE if key in given})
    return values


def table_from_values(name: str, values: Mapping[str, float | None]) -> EfficiencyTable:
    """Convert one table's file-unit values to SI."""
    def us(key: str) -> float:
        return float(values.get(key) or 0.0) * US

    def rate(key: str) -> float | None:
        v = values.get(key)
        return None if v is None else float(v) * GBYTE_PER_S

    def required(key: str) -> float:
        v = values.get(key)
        if v is None:  # a derived table's null in place of its base's value
            raise InputError(f"tables.{name}.{key}", "required: give a value, or leave it "
                             "out to take the base table's")
        return float(v)

    in_network_half = values.get("in_network_half_bandwidth_bytes")
    return EfficiencyTable(
        name=name,
        simple_efficiency=min(1.0, required("simple_efficiency")),
        simple_half_bandwidth_bytes=required("simple_half_bandwidth_bytes"),
        simple_latency_s=us("simple_latency_us"),
        ll128_ratio=_fraction(values.get("ll128_ratio")),
        ll_ratio=_fraction(values.get("ll_ratio")),
        ll_max_bytes_per_s=rate("ll_max_gbyte_per_s"),
        ll128_max_bytes_per_s=rate("ll128_max_gbyte_per_s"),
        ll_latency_s=us("ll_latency_us"),
        ll128_latency_s=us("ll128_latency_us"),
        in_network_efficiency=_fraction(values.get("in_network_efficiency")),
        in_network_latency_s=us("in_network_latency_us"),
        in_network_half_bandwidth_bytes=(None if in_network_half is None
                                         else float(in_network_half)),
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
        unknown = sorted((set(table.fitted) | set(table.prior)) - set(FITTABLE))
        if unknown:
            raise InputError(f"tables.{name}.fitted", f"unknown parameters {unknown}; "
                             f"allowed: {', '.join(FITTABLE)}", source=str(where))
    return spec


def tables_from_file_spec(spec: EfficiencyFileSpec) -> Tables:
    """All tables of a file spec, in SI, with the base latencies."""
    tables = MappingProxyType({n: table_from_values(n, resolve_values(n, spec.tables))
                               for n in spec.tables})
    base = MappingProxyType({family: MappingProxyType({p: v * US for p, v in row.items()})
                             for family, row in spec.base_latency_us.items()})
    return Tables(tables, base)
