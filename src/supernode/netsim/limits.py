"""The simulator's size limits, checked before anything large is built.

Measured on the benchmark cases (benchmarks/README.md, ``netsim_bench.py``): a training
iteration costs about 13 KiB per simulated GPU (65,536 GPUs: 843 MiB peak) and an
all-to-all about 1 KiB per flow (1,047,552 flows: 1,066 MiB). The limits keep a run
within about 2 GiB each, and a request past them is refused at once with the limit
(docs/limits.md) instead of failing with MemoryError minutes later.

* :data:`MAX_SIMULATED_ACCELERATORS`: accelerators of a simulated cluster;
* :data:`MAX_FLOWS`: all-to-all flows built in one run, summed over its collectives (an
  all-to-all among ``n`` ranks is ``n (n - 1)`` flows; every other collective is a few
  flows per rank, bounded by the accelerator limit). Checked before the network is built
  (:func:`check_flows`, :func:`job_flows`) and again as each collective is built
  (:func:`reserve_flows`);
* :data:`MAX_PASSES`: forward and backward passes of a training iteration (a global
  batch of 2^31 sequences is a billion micro-batches: refused, not simulated for days);
* :data:`MAX_STEP_PHASES`: in ``--mode step`` a ring all-reduce over ``n`` ranks is
  ``2 (n - 1)`` phases per copy; the phases of a run are bounded before they are built;
* traffic files: messages up to 1 TiB (``collectives.busbw.MAX_MESSAGE_BYTES``), delays up to
  :data:`MAX_START_S`, up to :data:`MAX_REPEAT` copies;
* ranges such as ``"0-127,256-383"`` are parsed with bounds first (:func:`parse_ranges`):
  a range past the cluster is refused before any list is built.
"""

from __future__ import annotations

import math
import re
import weakref
from typing import Any

import numpy as np

from supernode.errors import InputError

MAX_SIMULATED_ACCELERATORS = 131_072
MAX_FLOWS = 2**21
#: Transfer phases a run may build in ``--mode step`` (one per ring step, each a task).
MAX_STEP_PHASES = 1_000_000
#: Forward and backward passes a run may build (stages x virtual stages x micro-batches
#: x 2 x replica sets): each is a dozen tasks; 2,560 (the README example) take ~1 s.
MAX_PASSES = 200_000
#: Largest delay before a collective of a traffic file starts, seconds (one day).
MAX_START_S = 86_400.0
#: Most back-to-back copies of one collective of a traffic file.
MAX_REPEAT = 10_000

#: One part of a range string: an index or ``lo-hi`` (ASCII digits, within int64).
_RANGE = re.compile(r"([0-9]{1,18})(?:-([0-9]{1,18}))?")

_flows_used: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_phases_used: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def check_simulated_size(accelerators: int, where: str = "cluster") -> None:
    """InputError unless a cluster of ``accelerators`` is within the simulator's limit."""
    if accelerators > MAX_SIMULATED_ACCELERATORS:
        raise InputError(where, f"{accelerators:,} accelerators; the flow simulator takes "
                                f"at most {MAX_SIMULATED_ACCELERATORS:,} (about 2 GiB; "
                                "topology, estimate, plan and collective answer for larger "
                                "clusters)")


class TooLarge(InputError):
    """A run past one of these limits (an input error that no fallback can fix)."""


def all_to_all_flows(op: str, groups_shape: tuple[int, ...]) -> int:
    """Flows of one collective over ``G x n`` groups that count against :data:`MAX_FLOWS`:
    ``G n (n - 1)`` for an all-to-all (every member to every other: the direct algorithm;
    the hierarchical one builds fewer), 0 for the others (a few per member; bounded by
    :data:`MAX_SIMULATED_ACCELERATORS`)."""
    if op != "all_to_all":
        return 0
    groups, members = (1, groups_shape[0]) if len(groups_shape) == 1 else groups_shape[:2]
    return int(groups) * int(members) * max(int(members) - 1, 0)


def check_flows(count: int, what: str, members: int | None = None) -> None:
    """TooLarge when ``count`` all-to-all flows exceed :data:`MAX_FLOWS`."""
    if count > MAX_FLOWS:
        among = f" among {members:,} ranks" if members else ""
        raise TooLarge("", f"{what}: all-to-all{among} is {count:,} flows; the simulator's "
                           f"limit is {MAX_FLOWS:,} all-to-all flows per run (n ranks make "
                           "n(n-1) flows)")


def step_phases(groups_shape: tuple[int, ...], mode: str, repeat: float) -> int:
    """Upper bound of the phases one collective builds: in step mode ``2 n`` per copy (a
    ring all-reduce's ``2 (n - 1)`` steps), else 0 (pipelined: a few, fused)."""
    if mode != "step":
        return 0
    return 2 * int(groups_shape[-1]) * max(int(math.ceil(repeat)), 1)


def reserve_flows(run: Any, op: str, groups_shape: tuple[int, ...], what: str,
                  mode: str = "pipelined", repeat: float = 1.0) -> None:
    """Count a collective's all-to-all flows and step-mode phases against ``run``'s budgets
    (:data:`MAX_FLOWS`, :data:`MAX_STEP_PHASES`) before anything is built; TooLarge when
    the run would exceed one."""
    count = all_to_all_flows(op, groups_shape)
    if count:
        total = _flows_used.get(run, 0) + count
        check_flows(total, what, groups_shape[-1])
        _flows_used[run] = total
    phases = step_phases(groups_shape, mode, repeat)
    if phases:
        total = _phases_used.get(run, 0) + phases
        if total > MAX_STEP_PHASES:
            raise TooLarge("", f"{what}: {op} in step mode over {groups_shape[-1]:,} ranks "
                               f"x {repeat:g} copies is up to {phases:,} phases; the limit "
                               f"is {MAX_STEP_PHASES:,} per run (use --mode pipelined)")
        _phases_used[run] = total


def job_passes(pp: int, vpp: int, microbatches: int, replica_sets: int) -> int:
    """Forward and backward passes one training iteration builds."""
    return 2 * int(pp) * int(vpp) * int(microbatches) * int(replica_sets)


def check_passes(count: int, what: str) -> None:
    """TooLarge when an iteration would build more than :data:`MAX_PASSES` passes."""
    if count > MAX_PASSES:
        raise TooLarge("", f"{what}: the iteration is {count:,} forward and backward passes "
                           f"(stages x virtual stages x micro-batches x 2 x replica sets); "
                           f"the simulator's limit is {MAX_PASSES:,} (fewer micro-batches: a "
                           "smaller --global-batch or a larger --micro-batch)")


def job_flows(calls: Any, gpus: int) -> int:
    """All-to-all flows a training iteration builds at least: each all-to-all call over
    groups of ``group_size`` covers the job's ``gpus`` once (``gpus (g - 1)`` flows)."""
    return sum(gpus * max(c.group_size - 1, 0) for c in calls if c.op == "all_to_all")


def parse_ranges(text: str, path: str, size: int) -> np.ndarray:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]`` (inclusive ranges) of indices below ``size``.

    Every part is checked (syntax, order, bounds) and the total counted before any array
    is built, so ``"0-10000000000"`` is refused at once. InputError at ``path``.
    """
    bounds: list[tuple[int, int]] = []
    total = 0
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        match = _RANGE.fullmatch(part)
        if match is None:
            shown = part if len(part) <= 40 else part[:37] + "..."
            raise InputError(path, f"{shown!r} is not an index or a range like '0-127' "
                                   "(ASCII digits)")
        lo = int(match.group(1))
        hi = int(match.group(2)) if match.group(2) is not None else lo
        if hi < lo:
            raise InputError(path, f"range {part!r} runs backwards")
        if hi >= size:
            raise InputError(path, f"{part!r} is off the cluster (indices 0..{size - 1})")
        total += hi - lo + 1
        if total > size:
            raise InputError(path, f"lists more than the cluster's {size:,} accelerators, "
                                   "so some twice")
        bounds.append((lo, hi))
    if not bounds:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in bounds])


def checked_indices(values: list[int] | str, path: str, size: int) -> np.ndarray:
    """Accelerator indices from a list or a range string, each in ``0..size-1`` and none
    twice; InputError at ``path`` (``path[i]`` for the first bad list element)."""
    if isinstance(values, str):
        out = parse_ranges(values, path, size)
    else:
        if len(values) > size:
            raise InputError(path, f"lists {len(values):,} accelerators; the cluster has "
                                   f"{size:,}")
        bad = next((i for i, a in enumerate(values) if not 0 <= a < size), None)
        if bad is not None:
            raise InputError(f"{path}[{bad}]", f"accelerator {values[bad]} is off the "
                                               f"cluster (indices 0..{size - 1})")
        out = np.asarray(values, dtype=np.int64)
    counts = np.bincount(out, minlength=1)
    if counts.size and counts.max() > 1:
        twice = int(np.argmax(counts > 1))
        raise InputError(path, f"accelerator {twice} is listed twice")
    return out
