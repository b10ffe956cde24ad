"""Pipeline sends on the critical path of Megatron's 1F1B schedules (plain and
interleaved), vectorised over candidate plans: what the step model charges as exposed
``pp_comm`` before overlap (:mod:`supernode.estimate.step`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.estimate.compute import MicrobatchCompute
from supernode.estimate.select import Restrict, select
from supernode.spec.plan import PlanArrays


def pipeline_critical_s(one: Any, comp: MicrobatchCompute, a: PlanArrays) -> Any:
    """Seconds of pipeline transfers on the critical path of one step of Megatron's
    schedule (:func:`supernode.netsim.schedule.device_order`), whatever else overlaps:
    a micro-batch's activations must arrive before the next stage can start.

    ``one``: a forward plus a backward send (s). The fill's ``p - 1`` hops each way are
    always exposed. Interleaved 1F1B (``v > 1``) also exposes each of the ``v - 1``
    further rounds of its warm-up and cool-down, where the first device's ``p`` forwards
    wait for the round trip of ``p`` passes and ``p`` hops (Narayanan et al., SC'21
    §2.2: interleaving multiplies the pipeline communication by ``v``); its steady state
    has slack (two warm-up forwards more per earlier device). A hop of a round hides
    where the busiest stage's pass outlasts the mean one (the others wait for it anyway):
    ``max(one - d, 0)``, ``d`` the busiest minus the mean stage's seconds per model chunk.
    Plain 1F1B: see :func:`_plain_steady_s`. Exact for equal stages;
    tests/test_estimate_pipeline.py checks it against the schedule's dependency graph
    with unequal ones.
    """
    p = np.asarray(a.pp, dtype=np.int64)
    if not np.any(p > 1):
        return 0.0
    v = np.asarray(a.vpp, dtype=np.int64)
    pf = p.astype(float)
    m = np.maximum(np.asarray(a.microbatches, dtype=np.int64), 1)
    first, middle, last = (comp.stage_s["first"], comp.stage_s["middle"], comp.stage_s["last"])

    def rounds(r: Restrict) -> Any:
        slack = np.maximum(r(comp.total_s) - r(comp.mean_stage_s), 0.0) / r(v)
        return (r(v) - 1) * r(pf) * np.maximum(r(one) - slack, 0.0)

    def plain(r: Restrict) -> Any:
        return _plain_steady_s(r(one), r(first), r(middle), r(last), r(comp.total_s),
                               r(comp.mean_stage_s), r(p), r(m))

    # each schedule's formula only where it runs (interleaving: most of the vpp axis)
    return np.where(p > 1, (pf - 1.0) * one + select(v > 1, rounds, plain), 0.0)


def _plain_steady_s(one: Any, first: Any, middle: Any, last: Any, busiest: Any,
                    mean: Any, p: Any, m: Any) -> Any:
    """Steady-state sends exposed by plain 1F1B (seconds per step).

    Between its forward and backward each device exchanges with both neighbours and has
    no slack, so a micro-batch takes the longest of, over every run of consecutive
    devices ``r..s``, their mean pass seconds plus ``2 (s - r) / (s - r + 1)`` hops (the
    dependency cycle through them); beyond the busiest device's own pass, that costs
    ``n p / (p - 1)`` micro-batches of it, ``n = m - 1 - floor((m + p - 2) / p)`` being
    the steady-state hops each way of equal stages. The runs are those of first, middle
    (equal) and last stages. With a busier stage the exposure is at least the hops from
    it to the last device (at most ``n``): they follow its last pass.

    ``first``, ``middle``, ``last``, ``busiest``, ``mean``: a micro-batch's pass seconds
    on those stages; ``p`` stages (int), ``m`` micro-batches (int, >= 1).
    """
    pf = p.astype(float)
    n = (m - 1 - (m + p - 2) // np.maximum(p, 1)).astype(float)
    inner = np.maximum(pf - 2.0, 0.0)
    per_hop = one / 2.0
    runs = [mean + 2.0 * (pf - 1.0) / np.maximum(pf, 1.0) * per_hop]
    edge = 2.0 * inner / np.maximum(pf - 1.0, 1.0) * per_hop
    middles = np.where(p >= 3, middle + 2.0 * np.maximum(pf - 3.0, 0.0)
                       / np.maximum(inner, 1.0) * per_hop, 0.0)
    runs += [middles,
             np.where(p >= 3, (first + inner * middle) / np.maximum(pf - 1.0, 1.0) + edge, 0.0),
             np.where(p >= 3, (inner * middle + last) / np.maximum(pf - 1.0, 1.0) + edge, 0.0)]
    cycle = np.maximum.reduce(np.broadcast_arrays(*runs))
    periodic = n * pf / np.maximum(pf - 1.0, 1.0) * np.maximum(cycle - busiest, 0.0)
    after = np.where(last >= busiest, 0.0, np.where((p >= 3) & (middle >= busiest),
                                                    1.0, pf - 1.0))
    return np.maximum(np.minimum(after, n) * one, periodic)
