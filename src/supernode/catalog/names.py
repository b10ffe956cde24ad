"""Accelerator names beyond the catalog's ids: aliases of a catalog part, and variants that
share a catalog part's die (``data/catalog/accelerator_names.yaml``, each with its source).

:func:`canonical_accelerator_name` maps an alias to the catalog id (used wherever a part is
looked up); :func:`case_accelerator` also resolves a variant, for a validation case that
states its own peak and links: the catalog part it shares a die with, with the variant's
own memory and TDP where its datasheet differs, and a note saying so.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import Field

from supernode.spec.base import StrictModel
from supernode.spec.hardware import AcceleratorSpec
from supernode.spec.loader import parse_text, validate_document

NAMES_FILE = "catalog/accelerator_names.yaml"


class AcceleratorVariant(StrictModel):
    """A part sharing a catalog part's compute die, with its own memory and board power."""

    name: str = Field(min_length=1, description="The variant's id.")
    like: str = Field(min_length=1, description="Catalog part with the same compute die.")
    memory_gbyte: float | None = Field(None, gt=0, description="HBM capacity, GB (1e9 B); "
                                       "null: the catalog part's.")
    memory_bandwidth_tbyte_per_s: float | None = Field(None, gt=0, description="HBM "
                                                       "bandwidth, TB/s; null: the part's.")
    tdp_w: float | None = Field(None, gt=0, description="Board power, W; null: the part's.")
    source: str = Field(min_length=1, description="Where the figures come from.")


class AcceleratorNames(StrictModel):
    """The names file: aliases (spelling -> catalog id) and variants."""

    aliases: dict[str, str] = Field(default_factory=dict)
    variants: list[AcceleratorVariant] = Field(default_factory=list)


def normalised(name: str) -> str:
    """``name`` lower-cased with ``_`` and spaces read as ``-`` (how names are matched)."""
    return "-".join(name.strip().lower().replace("_", " ").split())


@lru_cache(maxsize=1)
def accelerator_names() -> AcceleratorNames:
    """The packaged names file, validated."""
    text = (resources.files("supernode") / "data" / NAMES_FILE).read_text(encoding="utf-8")
    return validate_document(parse_text(text, source=NAMES_FILE), AcceleratorNames,
                             source=NAMES_FILE)


def canonical_accelerator_name(name: str) -> str:
    """The catalog id an alias stands for; ``name`` lower-cased when it is none."""
    key = normalised(name)
    return accelerator_names().aliases.get(key, name.lower())


def _variant(name: str) -> AcceleratorVariant | None:
    key = normalised(name)
    return next((v for v in accelerator_names().variants if v.name == key), None)


def case_accelerator(name: Any, path: str = "system.accelerator"
                     ) -> tuple[AcceleratorSpec, str | None]:
    """The part a validation case names: a catalog part or alias (note None), or a variant
    costed as the catalog part it shares a die with, its own memory and TDP applied, and a
    note naming both. An unknown name raises InputError at ``path``."""
    from supernode.catalog import find_accelerator

    variant = _variant(str(name)) if name is not None else None
    if variant is None:
        return find_accelerator(str(name), path=path), None
    base = find_accelerator(variant.like, path=path)
    update = {k: v for k, v in (("memory_gbyte", variant.memory_gbyte),
                                ("memory_bandwidth_tbyte_per_s",
                                 variant.memory_bandwidth_tbyte_per_s),
                                ("tdp_w", variant.tdp_w)) if v is not None}
    labels = {"memory_gbyte": "HBM capacity", "memory_bandwidth_tbyte_per_s":
              "HBM bandwidth", "tdp_w": "TDP"}
    own = ", ".join(labels[k] for k in update)
    note = (f"{variant.name} is not a catalog part: costed as {base.name} (same compute "
            f"die) with the case's peak and links" + (f" and its own {own}" if own else ""))
    return base.model_copy(update=update), note
