"""The sweep specification: a base job and the variants to plan (schema and expansion).

A SPEC file (YAML or JSON) holds ``name``, a ``base`` (cluster, workload and plan
settings) and either ``axes`` (``mode: product``, the Cartesian product of every
axis's values) or ``variants`` (``mode: list``, each a mapping of overrides). Every key
of an axis or variant is a dotted path with one of three roots:

* ``cluster`` (a preset name or cluster file: candidate designs compared in one sweep),
  ``cluster.<path>``, or the bare path: a field of the cluster document
  (``scale_up.size``, ``host.nics.speed_gbit_per_s``, ``scale_out.oversubscription``);
* ``workload`` (a preset name or file) or ``workload.<field>`` (``workload.layers``);
* ``plan.<setting>``: one of :data:`PLAN_SETTINGS` (``plan.gpus``, ``plan.global_batch``).

The schema is strict (pydantic, ``extra="forbid"``); a bad spec is an
:class:`InputError` with the field path. See docs/planner.md for the full format.
"""

from __future__ import annotations

import difflib
import itertools
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from supernode.errors import InputError
from supernode.inputs import exists
from supernode.planner.build import MAX_GLOBAL_BATCH
from supernode.spec.base import StrictModel
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import read_document, validate_document
from supernode.spec.workload import WorkloadSpec

PLAN_SETTINGS = ("gpus", "global_batch", "objective", "allow_cross_domain_tp", "precision",
                 "price_per_gpu_hour")
MAX_VARIANTS = 10_000


class SweepBase(StrictModel):
    """The job every variant starts from."""

    cluster: str = Field(description="Cluster preset name or file (relative to the spec).")
    workload: str = Field(description="Workload preset name or file (relative to the spec).")
    gpus: int | None = Field(None, ge=1, description="GPUs of the job; null = the base "
                                                     "cluster's GPU count, for every variant.")
    global_batch: int | None = Field(None, ge=1, le=MAX_GLOBAL_BATCH,
                                     description="Sequences per step; null = the planner's "
                                                 "default.")
    objective: Literal["time", "cost", "energy"] = Field("time", description="Ranking.")
    allow_cross_domain_tp: bool = Field(False, description="Allow TP across domains.")
    precision: Literal["bf16", "fp16", "fp8"] = Field("bf16", description="Matmul precision.")
    price_per_gpu_hour: float | None = Field(None, gt=0, description="USD per GPU-hour; "
                                                                     "null = price table.")
    keep_gpus: bool = Field(True, description="When a variant sets cluster.scale_up.size, "
                                              "re-derive supernodes and switch chips so the "
                                              "cluster keeps its GPU count.")


class SweepSpec(StrictModel):
    """A sweep: a base job and the variants to plan."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$",
                      description="Name of the sweep (used for output files).")
    description: str | None = Field(None, description="Free text.")
    base: SweepBase = Field(description="The job every variant starts from.")
    mode: Literal["product", "list"] = Field("product", description="product: Cartesian "
                                             "product of axes; list: the variants as given.")
    axes: dict[str, list[Any]] | None = Field(None, description="Dotted path -> values "
                                                                "(product mode).")
    variants: list[dict[str, Any]] | None = Field(None, description="Override mappings "
                                                                    "(list mode).")

    @model_validator(mode="after")
    def _check(self) -> SweepSpec:
        if self.mode == "product":
            if not self.axes:
                raise ValueError("mode 'product' needs axes: {path: [values...]}")
            if self.variants:
                raise ValueError("mode 'product' takes axes, not variants (use mode: list)")
        elif not self.variants:
            raise ValueError("mode 'list' needs variants: [{path: value, ...}, ...]")
        return self


def normalise_key(key: str, where: str) -> str:
    """The key with its root made explicit (``scale_up.size`` -> ``cluster.scale_up.size``).

    Raises :class:`InputError` at ``where`` for a key with no known root.
    """
    if key.endswith(".") or ".." in key or not key:
        raise InputError(where, f"malformed path {key!r}")
    if key in ("workload", "cluster") or key.startswith(("cluster.", "workload.")):
        return key
    if key.startswith("plan.") and key[5:] in PLAN_SETTINGS:
        return key
    if key.split(".")[0] in ClusterSpec.model_fields:
        return f"cluster.{key}"
    close = difflib.get_close_matches(key.split(".")[0], list(ClusterSpec.model_fields), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise InputError(where, f"unknown key {key!r}{hint}: use a cluster field path "
                            f"(scale_up.size, or cluster.scale_up.size), workload, "
                            f"workload.<field> or plan.<{'|'.join(PLAN_SETTINGS)}>")


def expand(spec: SweepSpec) -> list[dict[str, Any]]:
    """The variants as override mappings, in a fixed order (product: last axis fastest)."""
    if spec.mode == "product":
        assert spec.axes is not None
        keys = []
        for key, values in spec.axes.items():
            keys.append(normalise_key(key, f"axes['{key}']"))
            if not values:
                raise InputError(f"axes['{key}']", "needs at least one value")
        total = 1
        for values in spec.axes.values():
            total *= len(values)
        if total > MAX_VARIANTS:
            raise InputError("axes", f"{total:,} variants; at most {MAX_VARIANTS:,}")
        return [dict(zip(keys, combo, strict=True))
                for combo in itertools.product(*spec.axes.values())]
    assert spec.variants is not None
    if len(spec.variants) > MAX_VARIANTS:
        raise InputError("variants", f"{len(spec.variants):,} variants; at most "
                                     f"{MAX_VARIANTS:,}")
    return [{normalise_key(k, f"variants[{i}]['{k}']"): v for k, v in variant.items()}
            for i, variant in enumerate(spec.variants)]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The document models a field's type allows (``X | None``, ``str | X``, ...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    return []


def check_field_path(model: type[BaseModel], path: str, where: str, root: str,
                     data: Any = None) -> None:
    """Refuse a dotted ``path`` that names no field of ``model`` (or a field inside a
    value that is not a section, such as a catalog name in ``data``, the base document).

    Paths only, not values: a bad value is one variant's error row, a bad path would make
    every variant an error, so it is refused at load (three kinds of failure,
    docs/architecture.md).
    """
    models, node = [model], data
    parts = path.split(".")
    for i, part in enumerate(parts):
        here = ".".join([root, *parts[:i]])
        fields = {name: f for m in models for name, f in m.model_fields.items()}
        if part not in fields:
            close = difflib.get_close_matches(part, list(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InputError(where, f"{here} has no field {part!r}{hint}; fields: "
                                    f"{', '.join(sorted(fields))}")
        if i == len(parts) - 1:
            return
        node = node.get(part) if isinstance(node, dict) else None
        models = _models_in(fields[part].annotation)
        if node is not None and not isinstance(node, dict):
            models = []
        if not models:
            what = f"is {node!r} in the base" if node is not None else "has no fields"
            raise InputError(where, f"{here}.{part} {what}: nothing to set inside it")


def check_keys(spec: SweepSpec) -> None:
    """Every swept cluster/workload path names a field (checked once per key, at load)."""
    wheres: dict[str, str] = {}
    if spec.mode == "product":
        assert spec.axes is not None
        for key in spec.axes:
            wheres.setdefault(normalise_key(key, f"axes['{key}']"), f"axes['{key}']")
    else:
        assert spec.variants is not None
        for i, variant in enumerate(spec.variants):
            for key in variant:
                wheres.setdefault(normalise_key(key, f"variants[{i}]['{key}']"),
                                  f"variants[{i}]['{key}']")
    cluster_data = None
    for key, where in wheres.items():
        if key.startswith("cluster."):
            if cluster_data is None:
                from supernode.cluster.load import load_cluster_spec

                try:
                    cluster_data = load_cluster_spec(spec.base.cluster).model_dump()
                except InputError as exc:
                    raise InputError("base.cluster", exc.render()) from None
            check_field_path(ClusterSpec, key[len("cluster."):], where, "cluster",
                             cluster_data)
        elif key.startswith("workload."):
            check_field_path(WorkloadSpec, key[len("workload."):], where, "workload")


def resolve_reference(ref: str, folder: Path) -> str:
    """A preset name as is; a relative file path against the spec's folder."""
    path = folder / ref
    if ref.endswith((".yaml", ".yml", ".json")) and not ref.startswith("/") and exists(path):
        return str(path)
    return ref


def load_sweep_spec(path: str | Path) -> tuple[SweepSpec, list[dict[str, Any]]]:
    """Read, validate and expand a SPEC file; references resolved against its folder."""
    path = Path(path)
    spec = validate_document(read_document(path), SweepSpec, source=str(path))
    folder = path.parent
    base = spec.base.model_copy(update={
        "cluster": resolve_reference(spec.base.cluster, folder),
        "workload": resolve_reference(spec.base.workload, folder)})
    spec = spec.model_copy(update={"base": base})
    try:
        variants = expand(spec)
        check_keys(spec)
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=str(path)) from None
    for variant in variants:
        if isinstance(variant.get("workload"), str):
            variant["workload"] = resolve_reference(variant["workload"], folder)
    check_cluster_values(variants, folder, str(path))
    return spec, variants


def check_cluster_values(variants: list[dict[str, Any]], folder: Path, source: str) -> None:
    """Resolve and load every cluster a ``cluster`` axis names (refused at load, not per
    variant: a missing file would make its variants all errors)."""
    from supernode.cluster.load import load_cluster_spec

    seen: set[str] = set()
    for variant in variants:
        if "cluster" not in variant:
            continue
        ref = variant["cluster"]
        if not isinstance(ref, str):
            raise InputError("axes['cluster']", f"a preset name or cluster file, got {ref!r}",
                             source=source)
        variant["cluster"] = resolve_reference(ref, folder)
        if variant["cluster"] not in seen:
            seen.add(variant["cluster"])
            try:
                load_cluster_spec(variant["cluster"])
            except InputError as exc:
                raise InputError("axes['cluster']", exc.render(), source=source) from None
