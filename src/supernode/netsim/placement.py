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
inclusive; ASCII digits; checked against the cluster before any list is built). A
relative plan or workload file name is read next to the placement file. Indices are
global accelerator numbers (domain-major, as in the topology graph). Jobs may not share
an accelerator; every index must exist in the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from supernode.errors import InputError
from supernode.inputs import is_file
from supernode.netsim.limits import checked_indices
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


def load_placement(path: str | Path, accelerators: int) -> list[JobPlacement]:
    """Read and check a placement file against a cluster of ``accelerators`` accelerators.

    Raises :class:`InputError` naming the field for indices off the cluster, a rank
    placed twice, or two jobs sharing an accelerator. Ranges are bounded before any
    index list is built (:func:`supernode.netsim.limits.parse_ranges`).
    """
    doc = validate_document(read_document(path), PlacementFile, source=str(path))
    jobs: list[JobPlacement] = []
    owner = np.full(accelerators, -1, dtype=np.int64)
    for j, entry in enumerate(doc.jobs):
        where = f"jobs[{j}].accelerators"
        name = entry.name or f"job{j}"
        try:
            accs = checked_indices(entry.accelerators, where, accelerators)
        except InputError as exc:
            raise InputError(exc.path, exc.message, source=str(path)) from None
        if not accs.size:
            raise InputError(where, "a job needs at least one accelerator", source=str(path))
        taken = np.flatnonzero(owner[accs] >= 0)
        if taken.size:
            r, a = int(taken[0]), int(accs[taken[0]])
            other = jobs[int(owner[a])]
            rank = int(np.flatnonzero(other.accelerators == a)[0])
            raise InputError(f"{where}[{r}]", f"accelerator {a} is already used by job "
                             f"{other.name!r} (rank {rank})", source=str(path))
        owner[accs] = j
        jobs.append(JobPlacement(name, accs, _beside(path, entry.workload),
                                 _beside(path, entry.plan)))
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
