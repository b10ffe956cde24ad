"""When nothing is feasible: say why, show the nearest plans, and what would make one fit.

An impossible requirement is an answer, not an empty table (three kinds of failure,
docs/architecture.md): the least
memory-hungry plans are listed (marked as not fitting) with concrete ways out — more
GPUs (found by a memory-only search at 2x, 4x... the job size), TP across domains, an
accelerator with more memory, or a global batch the GPUs can split.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np

from supernode.planner.evaluate import memory_grid
from supernode.planner.search import LayoutRecord, SearchOutcome
from supernode.planner.space import (
    SearchSpace,
    cp_ok,
    divisors,
    enumerate_layouts,
    knob_axes,
    tp_choices,
)
from supernode.spec.workload import WorkloadSpec

GB = 1e9
GROWTH_FACTORS = (2, 4, 8, 16, 32, 64)


def least_memory_records(outcome: SearchOutcome, count: int) -> list[LayoutRecord]:
    """The ``count`` layouts needing the least memory (one per set of sizes)."""
    seen, out = set(), []
    for r in sorted(outcome.records, key=lambda r: (r.least_memory_bytes, r.tp_crosses_domain)):
        key = (r.layout.tp, r.layout.pp, r.layout.dp, r.layout.cp, r.layout.ep)
        if key not in seen and np.isfinite(r.least_memory_bytes):
            seen.add(key)
            out.append(r)
        if len(out) == count:
            break
    return out


def memory_floor(w: WorkloadSpec, gpus: int, global_batch: int, space: SearchSpace,
                 max_tp: int, precision: str) -> float:
    """Least peak memory per GPU (bytes) of any legal plan of ``gpus`` GPUs (inf: none)."""
    layouts = enumerate_layouts(w, gpus, global_batch, replace(space, search_orders=False),
                                max_tp)
    batches: dict[Any, list] = defaultdict(list)
    for x in layouts:
        batches[knob_axes(w, x, global_batch, space)].append(x)
    best = np.inf
    for axes, group in batches.items():
        memory, legal = memory_grid(w, group, axes, global_batch, gpus, precision)
        best = min(best, float(np.min(np.where(legal, memory, np.inf))))
    return best


def _more_gpus(outcome: SearchOutcome, max_tp: int) -> str | None:
    t = outcome.target
    cap = t.system.usable_memory_bytes
    for factor in GROWTH_FACTORS:
        n = t.gpus * factor
        need = memory_floor(t.workload, n, t.global_batch_sequences, outcome.space, max_tp,
                            t.precision)
        if need <= cap:
            return (f"use {factor}x the GPUs: on {n:,} GPUs a plan needs {need / GB:.0f} GB "
                    f"per GPU, within the {cap / GB:.0f} GB available")
    return None


def _bigger_accelerators(need: float) -> str | None:
    from supernode.catalog import accelerators

    names = sorted((a.memory_gbyte, a.name) for a in accelerators().values()
                   if a.memory_gbyte * GB >= need)
    if not names:
        return None
    shown = ", ".join(f"{n} ({m:.0f} GB)" for m, n in names[:3])
    return f"use an accelerator with at least {need / GB:.0f} GB: {shown}"


def _batch_that_splits(outcome: SearchOutcome, max_tp: int) -> str:
    t = outcome.target
    w, gb = t.workload, t.global_batch_sequences
    dps = set()
    for tp in tp_choices(w, t.gpus, outcome.space, max_tp):
        for cp in (c for c in divisors(t.gpus // tp) if cp_ok(w, c, outcome.space)):
            for pp in divisors(t.gpus // (tp * cp)):
                if pp <= w.layers:
                    dps.add(t.gpus // (tp * cp * pp))
    if not dps:
        return (f"{t.gpus:,} GPUs cannot be split into tp x cp x pp x dp for this model (TP must "
                f"divide heads {w.n_heads}, KV heads {w.n_kv_heads} and the MLP widths, "
                f"PP <= {w.layers} layers); use a multiple of the scale-up domain")
    options = sorted({-(-gb // dp) * dp for dp in dps})
    return (f"global batch {gb:,} cannot be split over {t.gpus:,} GPUs; the nearest that "
            f"can: {', '.join(f'{b:,}' for b in options[:3])} sequences")


def infeasible_advice(outcome: SearchOutcome) -> dict[str, Any]:
    """Why no plan is eligible, and what would make one (plain sentences)."""
    t = outcome.target
    domain = t.scale_up_size
    max_tp = t.workload.n_heads if outcome.allow_cross_domain_tp else max(2 * domain, 1)
    if not outcome.records:
        return {"reason": "no legal layout", "suggestions": [_batch_that_splits(outcome,
                                                                                max_tp)]}
    cross = [r for r in outcome.records if r.fits and r.tp_crosses_domain]
    suggestions = []
    if cross and not outcome.allow_cross_domain_tp:
        r = min(cross, key=lambda r: r.objective)
        suggestions.append(f"allow TP across scale-up domains (--allow-cross-domain-tp): "
                           f"TP={r.layout.tp} fits, at {r.step_time_s:.3g} s/step")
    floor = min(r.least_memory_bytes for r in outcome.records)
    cap = t.system.usable_memory_bytes
    for maker in (lambda: _more_gpus(outcome, max_tp), lambda: _bigger_accelerators(floor)):
        text = maker()
        if text:
            suggestions.append(text)
    reason = (f"no plan fits in {cap / GB:.0f} GB per GPU: the least memory-hungry legal plan "
              f"needs {floor / GB:.0f} GB (with full recompute, ZeRO/distributed optimizer "
              f"and the smallest micro-batch considered)")
    if cross and floor <= cap:
        reason = "every plan that fits needs TP across scale-up domains"
    return {"reason": reason, "suggestions": suggestions}
