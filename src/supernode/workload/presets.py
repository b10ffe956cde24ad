"""Named workload presets shipped with the package, and loading workloads from files.

Presets are YAML files in ``supernode/data/workloads/`` (read with
:mod:`importlib.resources`), each citing its source. :func:`load_workload` takes a preset
name or a path to a YAML/JSON file; every problem becomes an :class:`InputError` with the
field path (``moe.top_k``) and what is allowed.
"""

from __future__ import annotations

import difflib
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from supernode.errors import InputError
from supernode.inputs import exists
from supernode.spec.loader import parse_text, read_document
from supernode.spec.stack import FRAMEWORK_NAMES, StackSpec
from supernode.spec.workload import WorkloadSpec, workload_from_data


def _preset_files() -> dict[str, Traversable]:
    """Preset name -> packaged YAML file."""
    root = resources.files("supernode") / "data" / "workloads"
    return {f.name.removesuffix(".yaml"): f for f in root.iterdir() if f.name.endswith(".yaml")}


def list_workload_presets() -> list[str]:
    """Names of the packaged workload presets, sorted."""
    return sorted(_preset_files())


def load_workload(name_or_path: str | Path) -> WorkloadSpec:
    """Load a workload from a preset name (``llama3-70b``) or a YAML/JSON file path.

    Raises :class:`InputError` for an unknown preset (with the nearest names), unreadable
    or malformed files, unknown fields (with a suggestion), wrong types or values.
    """
    presets = _preset_files()
    key = str(name_or_path)
    if key in presets:
        data = parse_text(presets[key].read_text(encoding="utf-8"), source=f"preset {key}")
        return workload_from_data(data, source=f"preset {key}")
    path = Path(key)
    if key.lower().endswith((".yaml", ".yml", ".json")) or exists(key):
        return workload_from_data(read_document(path), source=str(path))
    close = difflib.get_close_matches(key, list(presets), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError("workload", f"{key!r} is neither a preset nor a file{hint} "
                                 f"Presets: {', '.join(sorted(presets))}")


def with_framework(spec: WorkloadSpec, framework: str | None) -> WorkloadSpec:
    """``spec`` run on ``framework`` (``--framework``): the stack's framework replaced, its
    other overrides kept; None leaves ``spec`` as it is. An unknown name is an
    :class:`InputError` naming the option and the known frameworks."""
    if framework is None:
        return spec
    if framework not in FRAMEWORK_NAMES:
        raise InputError("--framework", f"unknown framework {framework!r}; known: "
                                        f"{', '.join(FRAMEWORK_NAMES)}")
    stack = (spec.stack or StackSpec()).model_copy(update={"framework": framework})
    return spec.model_copy(update={"stack": stack})
