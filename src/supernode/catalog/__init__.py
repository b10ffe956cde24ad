"""Catalog of real hardware: accelerators, switches and whole-cluster presets.

Figures live in data files under ``supernode/data`` with a ``source:`` for each entry;
this module only reads them. Names are case-insensitive; an unknown name is an
:class:`InputError` that suggests the nearest known one.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field

from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.hardware import AcceleratorSpec, SwitchSpec
from supernode.spec.loader import parse_text, validate_document

_DATA = resources.files("supernode") / "data"


def _read(relative: str) -> Any:
    return parse_text((_DATA / relative).read_text(encoding="utf-8"), source=relative)


@lru_cache(maxsize=1)
def accelerators() -> dict[str, AcceleratorSpec]:
    """All catalog accelerators by name."""
    entries = _read("catalog/accelerators.yaml")["accelerators"]
    specs = [validate_document(e, AcceleratorSpec, source="catalog/accelerators.yaml")
             for e in entries]
    return _unique(specs, "accelerator")


@lru_cache(maxsize=1)
def switches() -> dict[str, SwitchSpec]:
    """All catalog switches by name."""
    entries = _read("catalog/switches.yaml")["switches"]
    specs = [validate_document(e, SwitchSpec, source="catalog/switches.yaml") for e in entries]
    return _unique(specs, "switch")


class HostEntry(StrictModel):
    """Height, weight and NIC cages of a named host (``data/catalog/hosts.yaml``)."""

    name: str | None = Field(None, description="Host name (host.name of a cluster file).")
    accelerators_per_host: int | None = Field(None, ge=1, description="Generic entries: the "
                                                                       "accelerators they hold.")
    rack_units: int = Field(ge=1, description="Height in rack units (U).")
    weight_kg: float = Field(gt=0, description="Weight in kg.")
    nic_ports_per_cage: int = Field(1, ge=1, description="NIC ports one optical module "
                                                         "serves (twin-port OSFP cages: 2).")
    source: str = Field(min_length=1, description="Where the figures come from.")


class HostsFile(StrictModel):
    """``data/catalog/hosts.yaml``."""

    hosts: list[HostEntry]
    generic: list[HostEntry]


@lru_cache(maxsize=1)
def hosts_file() -> HostsFile:
    """The host catalog, validated."""
    return validate_document(_read("catalog/hosts.yaml"), HostsFile,
                             source="catalog/hosts.yaml")


def find_host(name: str | None, accelerators_per_host: int, generic: bool = True
              ) -> HostEntry | None:
    """The catalog entry of a host: by ``name`` (case-insensitive), else (``generic``) the
    generic one of its ``accelerators_per_host``; None when neither exists."""
    data = hosts_file()
    key = (name or "").lower()
    for entry in data.hosts:
        if entry.name and entry.name.lower() == key:
            return entry
    if not generic:
        return None
    return next((e for e in data.generic if e.accelerators_per_host == accelerators_per_host),
                None)


class ScaleUpHint(StrictModel):
    """The scale-up link of accelerators whose id contains ``fragment``."""

    fragment: str = Field(min_length=1, description="Part of an accelerator id, lower case.")
    table: str = Field(min_length=1, description="Efficiency table of the part's scale-up "
                                                 "link (nvlink3/4/5, xgmi).")
    source: str = Field(min_length=1, description="Where the part's link is documented.")


class ScaleUpHints(StrictModel):
    """``data/catalog/scale_up_hints.yaml``."""

    hints: list[ScaleUpHint] = Field(min_length=1)


@lru_cache(maxsize=1)
def scale_up_hints() -> tuple[ScaleUpHint, ...]:
    """The scale-up link of parts given by id only, first match first
    (``data/catalog/scale_up_hints.yaml``)."""
    name = "catalog/scale_up_hints.yaml"
    return tuple(validate_document(_read(name), ScaleUpHints, source=name).hints)


#: A catalog entry: looked up by its ``name``.
_Entry = TypeVar("_Entry", AcceleratorSpec, SwitchSpec)


def _unique(specs: list[_Entry], what: str) -> dict[str, _Entry]:
    out: dict[str, _Entry] = {}
    for spec in specs:
        key = spec.name.lower()
        if key in out:
            raise ValueError(f"duplicate {what} name in the catalog: {spec.name}")
        out[key] = spec
    return out


def _find(table: dict[str, _Entry], name: str, what: str, path: str) -> _Entry:
    key = name.lower()
    if key in table:
        return table[key]
    close = difflib.get_close_matches(key, list(table), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(path, f"unknown {what} {name!r}{hint} (see `supernode catalog list`)")


def find_accelerator(name: str, path: str = "accelerator") -> AcceleratorSpec:
    """Return the catalog accelerator called ``name`` (or one of its aliases,
    :mod:`supernode.catalog.names`) or raise InputError at ``path``."""
    from supernode.catalog.names import canonical_accelerator_name

    return _find(accelerators(), canonical_accelerator_name(name), "accelerator", path)


def find_switch(name: str, path: str = "switch") -> SwitchSpec:
    """Return the catalog switch called ``name`` or raise InputError at ``path``."""
    return _find(switches(), name, "switch", path)


def cluster_presets() -> dict[str, Path]:
    """Bundled cluster presets: name -> path of the YAML file."""
    folder = _DATA / "clusters"
    return {Path(f.name).stem: Path(str(f)) for f in folder.iterdir() if f.name.endswith(".yaml")}
