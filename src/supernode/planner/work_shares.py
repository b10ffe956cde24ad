"""How a plan search divides its work: batches cut into units of bounded size, units
shared between forked workers by their cost, and how many workers a search is worth."""

from __future__ import annotations

import os

from supernode.planner.mapping import Layout
from supernode.planner.space import KnobAxes

#: Grid points per evaluated batch (bounds memory: a few arrays of this many floats).
MAX_GRID_POINTS = 1_500_000
#: Grid points that pay for one more search process (~40 ms of scoring on the 2-core
#: machine), and the most processes a search uses by default (:func:`search_workers`).
POINTS_PER_WORKER = 250_000
MAX_WORKERS = 4
#: What scoring a unit costs beyond its points, in points (measured on the 2-core machine:
#: a unit of 96 points takes 3-5 ms, one of 446,464 points 74 ms, ~0.17 us a point).
UNIT_COST_POINTS = 20_000


def search_workers(points: int) -> int:
    """Processes worth using for a search of ``points`` grid points: one per
    :data:`POINTS_PER_WORKER` points, at most one per CPU core this process may run on and
    :data:`MAX_WORKERS` (a worker costs a fork and its own first collective choices)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_WORKERS, points // POINTS_PER_WORKER))


def units_of(batches: dict[KnobAxes, list[Layout]], cap: int | None
           ) -> list[tuple[KnobAxes, list[Layout]]]:
    """The batches cut into evaluation units of at most :data:`MAX_GRID_POINTS` points
    (and ``cap``, to share the work between processes), in search order."""
    units = []
    for axes, group in batches.items():
        step = max(1, min(MAX_GRID_POINTS, cap or MAX_GRID_POINTS) // axes.size)
        units += [(axes, group[i:i + step]) for i in range(0, len(group), step)]
    return units


def shares_of(units: list[tuple[KnobAxes, list[Layout]]], workers: int) -> list[list[int]]:
    """Unit indices per worker, each share in search order: the costliest unit first to
    the least loaded worker, a unit costing its points plus :data:`UNIT_COST_POINTS`
    (its collective choices and small arrays); workers left without a unit are dropped."""
    cost = [len(group) * axes.size + UNIT_COST_POINTS for axes, group in units]
    load = [0] * workers
    shares: list[list[int]] = [[] for _ in range(workers)]
    for i in sorted(range(len(units)), key=lambda i: -cost[i]):
        k = load.index(min(load))
        shares[k].append(i)
        load[k] += cost[i]
    return [sorted(share) for share in shares if share]
