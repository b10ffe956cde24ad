"""The plan search: enumerate layouts, prune by memory, score every knob, rank.

1. :func:`~supernode.planner.space.enumerate_layouts` lists every structurally legal
   ``tp, pp, dp, cp, ep`` and rank order for the job's GPUs and batch.
2. Layouts with the same knob axes are batched; the memory of every knob point is
   computed first (:func:`~supernode.planner.evaluate.memory_grid`) and layouts with no
   point that fits are pruned before their step time is scored.
3. The rest are scored over the whole grid (:func:`~supernode.planner.evaluate.
   score_grid`), and each layout keeps its best point (lowest objective that fits).
4. Layouts whose TP group leaves the scale-up domain are scored (so that the report can
   say what they would cost) but excluded unless ``allow_cross_domain_tp``.
5. Layouts whose TP, CP or EP groups straddle a scale-up domain rank after those that do
   not, unless they win by more than a margin (:mod:`supernode.planner.straddle`).

The batches, cut into units, may be shared between processes (``workers``; this one and
forked children, :mod:`supernode.forked`): a layout's record depends on that layout
alone, so the outcome is the same for any number of them, and so are the counts.

Nothing here mutates the system or the workload; the result is a table of layouts.
"""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial

# np.unique imports numpy.ma on first use (numpy 2): import it once, before a search
# forks its workers, not once in each (7 ms)
import numpy as np
import numpy.ma  # noqa: F401

from supernode.bounds import check_workers
from supernode.errors import InputError
from supernode.estimate.calibration import Calibration, default_calibration
from supernode.estimate.system import SystemModel
from supernode.forked import run_forked
from supernode.planner.economics import Economics, default_economics
from supernode.planner.evaluate import memory_grid, per_layout, score_grid
from supernode.planner.mapping import Layout, group_factors, slowest_tier
from supernode.planner.space import KnobAxes, SearchSpace, enumerate_layouts, knob_axes
from supernode.planner.straddle import STRADDLE_MARGIN, check_margin, rank_straddling
from supernode.planner.work_shares import (
    search_workers,
    shares_of,
    units_of,
)
from supernode.spec.workload import WorkloadSpec

OBJECTIVES = ("time", "cost", "energy")


@dataclass(frozen=True)
class PlanTarget:
    """What to plan for: the model, the machine, the job's GPUs and batch (SI inside).

    ``host_size``: GPUs per host, the unit of rail alignment (None: the scale-up size).
    ``economics``: price and power (None: the defaults for the accelerator).
    """

    workload: WorkloadSpec
    system: SystemModel
    gpus: int
    global_batch_sequences: int
    precision: str = "bf16"
    host_size: int | None = None
    economics: Economics | None = None
    notes: tuple[str, ...] = ()

    @property
    def scale_up_size(self) -> int:
        """GPUs in one scale-up domain (1 when the fabric has no scale-up tier)."""
        tier = self.system.fabric.tiers[0]
        return tier.group_size if tier.name == "scale_up" else 1

    @property
    def tokens_per_step(self) -> int:
        """Tokens in one optimizer step."""
        return self.global_batch_sequences * self.workload.seq_len

    def economics_or_default(self) -> Economics:
        """The target's economics, or the accelerator's defaults."""
        return self.economics or default_economics(self.system.accelerator)


@dataclass
class LayoutRecord:
    """One layout's outcome: its best knob point, or why it has none."""

    layout: Layout
    axes: KnobAxes
    tp_crosses_domain: bool
    least_memory_bytes: float
    least_memory_index: int
    best_index: int = -1
    objective: float = math.inf
    step_time_s: float = math.inf
    #: (dimension, size) of the TP/CP/EP groups that straddle a domain (set when ranked).
    straddles: tuple[tuple[str, int], ...] = ()
    #: Why a straddling record ranks where it does (None: it does not straddle).
    rank_note: str | None = None

    @property
    def fits(self) -> bool:
        """True when some knob point is legal and fits in memory."""
        return math.isfinite(self.objective)


@dataclass
class SearchStats:
    """Counts and timing of one search (``workers``: processes that scored it)."""

    layouts_considered: int = 0
    layouts_pruned_by_memory: int = 0
    candidates_evaluated: int = 0
    candidates_pruned_by_memory: int = 0
    legal_candidates: int = 0
    wall_time_s: float = 0.0
    workers: int = 1

    def add(self, other: SearchStats) -> None:
        """Add ``other``'s counts (not its time) to these."""
        for name in ("layouts_pruned_by_memory", "candidates_evaluated",
                     "candidates_pruned_by_memory", "legal_candidates"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def plans_per_s(self) -> float:
        """Scored candidates per second of search."""
        return self.candidates_evaluated / self.wall_time_s if self.wall_time_s > 0 else 0.0


@dataclass
class SearchOutcome:
    """Every layout's record, the eligible ones ranked, and the search statistics."""

    target: PlanTarget
    objective: str
    allow_cross_domain_tp: bool
    records: list[LayoutRecord]
    ranked: list[LayoutRecord]
    stats: SearchStats
    space: SearchSpace = field(default_factory=SearchSpace)
    straddle_margin: float = STRADDLE_MARGIN


def check_target(target: PlanTarget, objective: str) -> None:
    """Raise :class:`InputError` for a target or objective the search cannot take."""
    if objective not in OBJECTIVES:
        raise InputError("objective", f"unknown objective {objective!r}; allowed: "
                                      f"{', '.join(OBJECTIVES)}")
    if target.gpus < 1:
        raise InputError("gpus", f"must be >= 1, got {target.gpus}")
    if target.global_batch_sequences < 1:
        raise InputError("global_batch", f"must be >= 1, got {target.global_batch_sequences}")
    capacity = target.system.fabric.capacity
    if target.gpus > capacity:
        raise InputError("gpus", f"the job's {target.gpus:,} GPUs exceed the cluster's "
                                 f"{capacity:,}; give a larger cluster or fewer GPUs")


def search_layouts(target: PlanTarget, objective: str = "time",
                   allow_cross_domain_tp: bool = False, space: SearchSpace | None = None,
                   cal: Calibration | None = None, workers: int | None = 1,
                   straddle_margin: float = STRADDLE_MARGIN) -> SearchOutcome:
    """Score every legal layout of ``target`` and rank the eligible ones (best first;
    straddling ones after, unless they win by more than ``straddle_margin``:
    :func:`~supernode.planner.straddle.rank_straddling`).

    ``workers``: processes scoring the layouts (this one and forked children,
    :func:`supernode.forked.run_forked`; None: :func:`search_workers`). The outcome is
    the same for any number: each layout's record depends on that layout alone.
    """
    check_target(target, objective)
    check_margin(straddle_margin)
    space = space or SearchSpace()
    cal = cal or default_calibration()
    start = time.perf_counter()
    domain = target.scale_up_size
    max_tp = target.workload.n_heads if allow_cross_domain_tp else max(2 * domain, 1)
    layouts = enumerate_layouts(target.workload, target.gpus, target.global_batch_sequences,
                                space, max_tp)
    stats = SearchStats(layouts_considered=len(layouts))
    batches: dict[KnobAxes, list[Layout]] = defaultdict(list)
    for layout in layouts:
        batches[knob_axes(target.workload, layout, target.global_batch_sequences, space)
                ].append(layout)
    weights = target.economics_or_default().energy_weights if objective == "energy" else None
    points = sum(len(group) * axes.size for axes, group in batches.items())
    workers = search_workers(points) if workers is None else \
        check_workers(workers, "workers") or 1
    units = units_of(batches, max(1, -(-points // workers)) if workers > 1 else None)
    shares = shares_of(units, workers)

    def score(share: list[int]) -> tuple[list[list[LayoutRecord]], SearchStats, int]:
        counts = SearchStats()
        return [_score_batch(target, units[i][1], units[i][0], cal, weights, counts)
                for i in share], counts, os.getpid()

    by_unit: dict[int, list[LayoutRecord]] = {}
    processes = set()
    for share, (scored, counts, pid) in zip(shares, run_forked(
            [partial(score, share) for share in shares]), strict=True):
        by_unit.update(zip(share, scored, strict=True))
        stats.add(counts)
        processes.add(pid)
    records = [r for i in range(len(units)) for r in by_unit[i]]
    stats.workers = len(processes)  # those that did score (a failed child's share: here)
    stats.wall_time_s = time.perf_counter() - start
    eligible = [r for r in records if r.fits and (allow_cross_domain_tp
                                                  or not r.tp_crosses_domain)]
    ranked = rank_straddling(sorted(eligible, key=_rank_key), target.system,
                             target.scale_up_size, straddle_margin)
    return SearchOutcome(target, objective, allow_cross_domain_tp, records, ranked, stats,
                         space, straddle_margin)


def _rank_key(r: LayoutRecord) -> tuple:
    x = r.layout
    return (r.objective, r.step_time_s, x.tp, x.pp, x.cp, x.ep, not x.megatron_equivalent,
            x.order)


def tp_crosses_domain(layout: Layout, system: SystemModel) -> bool:
    """True when the layout's TP group crosses a tier beyond the scale-up domain."""
    if layout.tp <= 1:
        return False
    factors = group_factors(layout)
    tier = slowest_tier(system.fabric, factors["tp"]) if factors else len(system.fabric.tiers)
    return tier > 0 or system.fabric.tiers[0].name != "scale_up"


def _score_batch(target: PlanTarget, layouts: list[Layout], axes: KnobAxes,
                 cal: Calibration, weights: tuple[float, float] | None,
                 stats: SearchStats) -> list[LayoutRecord]:
    """Records of one batch: memory for all, step time for those that can fit."""
    w, gb, system = target.workload, target.global_batch_sequences, target.system
    memory, legal = memory_grid(w, layouts, axes, gb, target.gpus, target.precision)
    n = len(layouts)
    mem_masked = per_layout(np.where(legal, memory, np.inf), n)
    least_index = np.argmin(mem_masked, axis=1)
    least = mem_masked[np.arange(n), least_index]
    records = [LayoutRecord(x, axes, tp_crosses_domain(x, system), float(least[i]),
                            int(least_index[i])) for i, x in enumerate(layouts)]
    keep = np.flatnonzero(least <= system.usable_memory_bytes)
    overlap_points = axes.time_only_size
    stats.layouts_pruned_by_memory += n - keep.size
    stats.candidates_pruned_by_memory += (n - keep.size) * axes.size
    if keep.size == 0:
        return records
    kept = [layouts[i] for i in keep]
    scores = score_grid(w, kept, axes, gb, system, cal, target.precision,
                        memory[..., keep], legal[..., keep], weights)
    index, value, times = scores.best(axes)
    stats.candidates_evaluated += keep.size * axes.size
    allowed = np.array([not records[i].tp_crosses_domain for i in keep])
    fits_per_layout = per_layout(scores.fits, keep.size).sum(axis=1)
    stats.legal_candidates += int(fits_per_layout[allowed].sum()) * overlap_points
    for j, i in enumerate(keep):
        if math.isfinite(value[j]):
            r = records[i]
            r.best_index, r.objective = int(index[j]), float(value[j])
            r.step_time_s = float(times[j])
    return records
