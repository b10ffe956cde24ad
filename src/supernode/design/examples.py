"""Bundled design examples (``supernode design --example NAME``; no argument: flagship).

The manifest ``data/design/examples.yaml`` names each example's cluster file, workload
and (for the flawed design) the plan the team intends to run. The same files are in the
repository's ``examples/design/`` (a test keeps the two copies identical).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from supernode.errors import InputError
from supernode.spec.loader import parse_text

FLAGSHIP = "flagship"
_ROOT = "data/design"


@dataclass(frozen=True)
class Example:
    """One bundled example: files (absolute paths) and what it shows."""

    name: str
    cluster: Path
    workload: str
    plan: Path | None
    description: str


@functools.cache
def examples() -> dict[str, Example]:
    """Every bundled example by name."""
    root = resources.files("supernode") / _ROOT
    manifest = parse_text((root / "examples.yaml").read_text(encoding="utf-8"),
                          source=f"{_ROOT}/examples.yaml")
    out = {}
    for name, entry in manifest["examples"].items():
        folder = Path(str(root / name))
        out[name] = Example(name, folder / "cluster.yaml", entry["workload"],
                            folder / entry["plan"] if entry.get("plan") else None,
                            entry["description"])
    return out


def example(name: str) -> Example:
    """The example ``name``; InputError at ``--example`` listing the known ones."""
    known = examples()
    if name not in known:
        raise InputError("--example", f"unknown example {name!r}; known: "
                                      f"{', '.join(known)}")
    return known[name]
