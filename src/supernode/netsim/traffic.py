"""Traffic files: a communication pattern given directly, collective by collective.

```yaml
collectives:
  - name: moe-dispatch          # unique
    op: all_to_all              # all_reduce, all_gather, reduce_scatter, all_to_all,
                                # broadcast, reduce, p2p
    algorithm: direct           # optional; default: the fastest, as the model picks
    message_bytes: 268435456    # nccl-tests size (bytes)
    accelerators: 0-63          # list or ranges
    group_size: 8               # optional: consecutive groups of 8 run at once
    start_s: 0.0                # optional delay before it starts (s)
    after: [warmup]             # optional: start when these have finished
    repeat: 1                   # optional: back-to-back copies
```
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from supernode.collectives.busbw import MAX_MESSAGE_BYTES
from supernode.errors import InputError
from supernode.netsim.collectives import Ctx
from supernode.netsim.dag import add_collective, delay
from supernode.netsim.engine import Environment
from supernode.netsim.limits import (
    MAX_REPEAT,
    MAX_START_S,
    all_to_all_flows,
    check_flows,
    checked_indices,
)
from supernode.netsim.network import Network
from supernode.netsim.tasks import Task
from supernode.spec.base import StrictModel

Op = Literal["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast",
             "reduce", "p2p"]


class CollectiveEntry(StrictModel):
    """One collective of a traffic file."""

    name: str = Field(min_length=1, description="Unique name (used by 'after').")
    op: Op = Field(description="Collective operation.")
    algorithm: str | None = Field(
        None, description="Algorithm (its schedule's flows); null = the fastest, as the model "
        "picks.")
    message_bytes: float = Field(gt=0, le=MAX_MESSAGE_BYTES,
                                 description="nccl-tests message size (bytes, at most 1 TiB).")
    accelerators: list[int] | str = Field(description="Members: a list or '0-63' ranges.")
    group_size: int | None = Field(None, ge=2, description="Split into consecutive groups.")
    start_s: float = Field(0.0, ge=0, le=MAX_START_S,
                           description="Delay before starting (seconds, at most a day).")
    after: list[str] = Field(default_factory=list, description="Start after these finish.")
    repeat: int = Field(1, ge=1, le=MAX_REPEAT, description="Back-to-back copies (fused).")


class TrafficFile(StrictModel):
    """A traffic document: collectives started at given times or after one another."""

    collectives: list[CollectiveEntry] = Field(min_length=1, description="The collectives.")


def groups_of(entry: CollectiveEntry, index: int, accelerators: int) -> np.ndarray:
    """The entry's ``G x n`` groups of accelerator indices (checked against the cluster
    before any list is built)."""
    where = f"collectives[{index}].accelerators"
    accs = checked_indices(entry.accelerators, where, accelerators)
    size = entry.group_size or len(accs)
    if not size or len(accs) % size:
        raise InputError(f"collectives[{index}].group_size",
                         f"{len(accs)} accelerators do not split into groups of {size}")
    return accs.reshape(-1, size)


def check_traffic_size(doc: TrafficFile, accelerators: int) -> None:
    """Refuse (InputError naming the collective) a traffic file whose members are off the
    cluster or whose all-to-alls exceed the flow limit, before any network is built."""
    total = 0
    for i, entry in enumerate(doc.collectives):
        shape = groups_of(entry, i, accelerators).shape
        total += all_to_all_flows(entry.op, shape)
        try:
            check_flows(total, f"{entry.name!r}", shape[1])
        except InputError as exc:
            raise InputError(f"collectives[{i}]", exc.message) from None


def build_traffic(env: Environment, net: Network, doc: TrafficFile, mode: str,
                  coupled: bool, fabric=None, tables=None) -> list[Task]:
    """Add every collective of ``doc`` to ``env``; return their last tasks. ``fabric`` and
    ``tables``: the cluster's collective fabric and efficiency tables (schedules)."""
    ends: dict[str, Task] = {}
    names = [c.name for c in doc.collectives]
    if len(set(names)) != len(names):
        raise InputError("collectives", "collective names must be unique")
    for i, entry in enumerate(doc.collectives):
        groups = groups_of(entry, i, net.accelerators)
        ctx = Ctx(float(entry.repeat), mode, coupled, net, entry.name, fabric, tables)
        try:
            first, last = add_collective(env, entry.name, entry.op, entry.algorithm, groups,
                                         entry.message_bytes, ctx, lane=entry.name)
        except InputError as exc:
            raise InputError(f"collectives[{i}].{exc.path}" if exc.path else
                             f"collectives[{i}]", exc.message) from None
        if entry.start_s > 0:
            wait = delay(env, f"{entry.name}/wait", entry.start_s, label="wait",
                         lane=entry.name)
            env.after(wait, first)
        for other in entry.after:
            if other not in ends:
                raise InputError(f"collectives[{i}].after",
                                 f"{other!r} is not an earlier collective")
            env.after(ends[other], first)
        ends[entry.name] = last
    return list(ends.values())
