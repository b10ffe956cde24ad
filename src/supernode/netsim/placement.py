"""Placement files: which accelerator each rank of each job runs on.

```yaml
jobs:
  - name: pretrain            # optional (default job0, job1, ...)
    accelerators: 0-255       # rank r runs on the r-th accelerator listed
    workload: llama3-70b      # optional; default: --workload
    plan: {tp: 8, pp: 4, global_batch_sequences: 256}   # optional; default: CLI plan
  - name: finetune
    accelerators: [256, 257, 258, 259, 260, 261, 262, 263]
    plan: plans/ft.yaml       # a plan file also works
```

``accelerators`` is a list of indices or a string of ranges (``"0-127,256-383"``,
inclusive). A relative plan or workload file name is read next to the placement file.
Indices are global accelerator numbers (domain-major, as in the topology
graph). Jobs may not share an accelerator; every index must exist in the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from supernode.errors import InputError
from supernode.inputs import is_file
from supernode.spec.base import StrictModel
from supernode.spec.loader import read_document, validate_document


class JobEntry(StrictModel):
    """One job of a placement file."""

    name: str | None = Field(None, description="Job name (default job0, job1, ...).")
    accelerators: list[int] | str = Field(
        description="Accelerator of each rank: a list, or ranges such as '0-127,256-383'.")
    workload: str | None = Field(None, description="Workload preset or file; default: CLI's.")
    plan: dict[str, Any] | str | None = Field(
        None, description="Plan fields or a plan file; default: the CLI's plan.")


class PlacementFile(StrictModel):
    """A placement document: one or more jobs sharing the cluster."""

    jobs: list[JobEntry] = Field(min_length=1, description="Jobs, each with its ranks.")


@dataclass(frozen=True)
class JobPlacement:
    """A job's name, rank -> accelerator array, and optional workload / plan overrides."""

    name: str
    accelerators: np.ndarray
    workload: str | None = None
    plan: dict[str, Any] | str | None = None


def parse_ranges(text: str, path: str) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]`` (inclusive ranges); InputError on bad syntax."""
    out: list[int] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise InputError(path, f"{part!r} is not an index or a range like '0-127'") from None
        if b < a:
            raise InputError(path, f"range {part!r} runs backwards")
        out.extend(range(a, b + 1))
    return out


def load_placement(path: str | Path, accelerators: int) -> list[JobPlacement]:
    """Read and check a placement file against a cluster of ``accelerators`` accelerators.

    Raises :class:`InputError` naming the field for indices off the cluster, a rank
    placed twice, or two jobs sharing an accelerator.
    """
    doc = validate_document(read_document(path), PlacementFile, source=str(path))
    jobs: list[JobPlacement] = []
    owner: dict[int, str] = {}
    for j, entry in enumerate(doc.jobs):
        where = f"jobs[{j}].accelerators"
        name = entry.name or f"job{j}"
        accs = (parse_ranges(entry.accelerators, where) if isinstance(entry.accelerators, str)
                else list(entry.accelerators))
        if not accs:
            raise InputError(where, "a job needs at least one accelerator", source=str(path))
        for r, a in enumerate(accs):
            if not 0 <= a < accelerators:
                raise InputError(f"{where}[{r}]", f"accelerator {a} is off the cluster "
                                 f"(indices 0..{accelerators - 1})", source=str(path))
            if a in owner:
                raise InputError(f"{where}[{r}]", f"accelerator {a} is already used by "
                                 f"{owner[a]}", source=str(path))
            owner[a] = f"job {name!r} (rank {r})"
        jobs.append(JobPlacement(name, np.asarray(accs, dtype=np.int64),
                                 _beside(path, entry.workload), _beside(path, entry.plan)))
    names = [job.name for job in jobs]
    if len(set(names)) != len(names):
        raise InputError("jobs", "job names must be unique", source=str(path))
    return jobs


def _beside(path: str | Path, value):
    """A relative file name in a placement file is read next to that file."""
    if isinstance(value, str):
        candidate = Path(path).parent / value
        if not value.startswith("/") and is_file(candidate):
            return str(candidate)
    return value


def default_placement(accelerators: int) -> list[JobPlacement]:
    """One job on every accelerator, rank ``r`` on accelerator ``r``."""
    return [JobPlacement("job0", np.arange(accelerators, dtype=np.int64))]
