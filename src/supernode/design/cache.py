"""A small per-process memo for design stages that depend on the cluster alone.

The scheduling replay and the exported files do not depend on the workload or the plan:
reviewing several workloads on one cluster in one process (a sweep, a notebook, the tests)
computes them once. Keys are the cluster's resolved specification as JSON plus the
stage's own inputs; the newest :data:`SIZE` entries are kept; every caller gets its own
deep copy, so no result is shared or changed through another.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from supernode.spec.resolved import Cluster

T = TypeVar("T")
#: Entries kept per stage.
SIZE = 8
_MEMO: dict[str, OrderedDict[Hashable, Any]] = {}


def cluster_key(cluster: Cluster) -> str:
    """The cluster's identity for the memo: its specification as JSON, and the collective
    efficiency tables in force (a ``--calibration`` changes the step model's costs)."""
    from supernode.collectives.efficiency import in_force

    active = in_force()
    return cluster.spec.model_dump_json() + (f"|tables:{active.key}" if active else "")


def memoised(stage: str, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()`` once per (``stage``, ``key``) among the newest :data:`SIZE`; a deep
    copy of the stored result every time."""
    table = _MEMO.setdefault(stage, OrderedDict())
    if key in table:
        table.move_to_end(key)
    else:
        table[key] = compute()
        while len(table) > SIZE:
            table.popitem(last=False)
    return copy.deepcopy(table[key])


def remembered(stage: str, key: Hashable) -> bool:
    """True when (``stage``, ``key``) is in memory (:func:`memoised` would not compute)."""
    return key in _MEMO.get(stage, {})


def clear() -> None:
    """Forget every memoised result (the next call of each stage computes again)."""
    _MEMO.clear()
