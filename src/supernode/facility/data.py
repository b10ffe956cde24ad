"""Facility data (coolant properties, rack classes, defaults), read once from package data.

The file ``data/facility/facility.yaml`` carries every figure with its source; this module
only loads it and interpolates coolant properties in temperature.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from supernode.spec.loader import parse_text

_FILE = "data/facility/facility.yaml"


@functools.cache
def facility_data() -> dict[str, Any]:
    """The parsed facility data file (cached; treat as read-only)."""
    text = (resources.files("supernode") / _FILE).read_text(encoding="utf-8")
    return parse_text(text, source=_FILE)


@dataclass(frozen=True)
class CoolantProperties:
    """Properties of a coolant at one temperature (SI: J/(kg K), kg/m^3, Pa s)."""

    name: str
    temperature_c: float
    specific_heat_j_per_kg_k: float
    density_kg_per_m3: float
    viscosity_pa_s: float
    source: str


def _interpolate(table: dict[Any, float], temperature_c: float) -> float:
    """Linear interpolation in a {temperature_c: value} table, clamped at its ends."""
    keys = sorted(float(k) for k in table)
    values = [float(table[k]) for k in sorted(table, key=float)]
    return float(np.interp(temperature_c, keys, values))


def coolant_properties(coolant: str, temperature_c: float) -> CoolantProperties:
    """Specific heat, density and viscosity of ``coolant`` (water, pg25) at a temperature,
    interpolated in the CoolProp tables (clamped to their 20-45 deg C range)."""
    entry = facility_data()["coolants"][coolant]
    return CoolantProperties(
        name=entry["name"], temperature_c=temperature_c,
        specific_heat_j_per_kg_k=1e3 * _interpolate(entry["specific_heat_kj_per_kg_k"],
                                                    temperature_c),
        density_kg_per_m3=_interpolate(entry["density_kg_per_m3"], temperature_c),
        viscosity_pa_s=1e-3 * _interpolate(entry["dynamic_viscosity_mpa_s"], temperature_c),
        source=entry["source"],
    )


def lookup_by_speed(table: dict[Any, float], gbit_per_s: float) -> float:
    """The entry of a {speed: value} table for the smallest listed speed >= ``gbit_per_s``
    (the largest one above them all)."""
    speeds = sorted(float(k) for k in table)
    pick = next((s for s in speeds if s >= gbit_per_s - 1e-9), speeds[-1])
    return float({float(k): v for k, v in table.items()}[pick])


def rack_class(power_w: float) -> tuple[str, list[float]]:
    """The seed's rack class nearest to ``power_w`` (cpu, gpu_server, supernode) and its
    range in kW (seed 001 §3.1)."""
    kw = power_w / 1e3
    classes = facility_data()["rack_classes_kw"]
    def distance(item: tuple[str, list[float]]) -> float:
        low, high = item[1]
        return 0.0 if low <= kw <= high else min(abs(kw - low), abs(kw - high)) / high
    name, bounds = min(classes.items(), key=distance)
    return name, [float(b) for b in bounds]
