"""The step model's pipeline terms against the schedule itself (differential).

The analytic model prices Megatron's (interleaved) 1F1B schedule in closed form: the
pipeline sends on the critical path (:func:`~supernode.estimate.pipeline_comm.pipeline_critical_s`)
and the share of passes whose expert all-to-all can hide under a partner micro-batch
(:func:`~supernode.estimate.step.paired_share`). Here the same schedule
(:func:`supernode.netsim.schedule.device_order`, the order the simulator runs) is
evaluated as a dependency graph: each pass starts when its device is free and its input
has arrived from the neighbouring virtual stage, one hop later. The closed forms must give
the graph's critical path: exactly for equal stages, within 2 % of the step with a busier
last (output layer) or first stage.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from supernode.estimate.pipeline_comm import pipeline_critical_s
from supernode.estimate.step import paired_share
from supernode.netsim.schedule import device_order

#: (p, v, m): plain 1F1B (m below, at and above p) and interleaved (m a multiple of p).
SCHEDULES = [(2, 1, 1), (2, 1, 8), (3, 1, 7), (4, 1, 2), (4, 1, 16), (8, 1, 13),
             (2, 2, 8), (2, 16, 2), (3, 3, 9), (4, 2, 4), (4, 4, 32), (8, 2, 16)]


def _partner(order) -> list[bool]:
    """Per pass of a device: True between its first backward and its last forward."""
    kinds = [op.kind for op in order]
    first_b = kinds.index("B")
    last_f = len(kinds) - 1 - kinds[::-1].index("F")
    return [first_b <= k <= last_f for k in range(len(order))]


def schedule_makespan(p: int, v: int, m: int, *, forward: float, backward: float,
                      hop: float = 0.0, scale=None, a2a: float = 0.0,
                      overlap: bool = False) -> float:
    """Critical path of one step: chunk passes of ``forward``/``backward`` seconds times
    the device's ``scale``, ``hop`` seconds between devices, ``a2a`` seconds of expert
    all-to-all per pass (beside the compute when ``overlap`` and the pass has a partner,
    else after it)."""
    scale = scale or [1.0] * p
    orders = [device_order(d, p, v, m) for d in range(p)]
    partners = [_partner(o) for o in orders]
    last = p * v - 1
    done: dict[tuple[str, int, int], float] = {}
    index, free = [0] * p, [0.0] * p
    progressed = True
    while progressed:
        progressed = False
        for d in range(p):
            while index[d] < len(orders[d]):
                op = orders[d][index[d]]
                if op.kind == "F":
                    dep = ("F", op.stage - 1, op.microbatch) if op.stage else None
                else:
                    dep = ("B", op.stage + 1, op.microbatch) if op.stage < last else \
                        ("F", op.stage, op.microbatch)
                if dep is not None and dep not in done:
                    break
                ready = 0.0 if dep is None else done[dep] + (hop if dep[1] % p != d else 0.0)
                work = (forward if op.kind == "F" else backward) * scale[d]
                hidden = overlap and partners[d][index[d]]
                took = max(work, a2a) if hidden else work + a2a
                free[d] = max(free[d], ready) + took
                done[(op.kind, op.stage, op.microbatch)] = free[d]
                index[d] += 1
                progressed = True
    assert index == [len(o) for o in orders]
    return max(free)


def _plan(p: int, v: int, m: int) -> SimpleNamespace:
    return SimpleNamespace(pp=np.asarray(p), vpp=np.asarray(v), microbatches=np.asarray(m))


def _stages(p: int, v: int, scale, forward: float, backward: float) -> SimpleNamespace:
    """The analytic model's view of devices with equal middles: first, middle and last
    stage seconds per micro-batch, the busiest and the mean."""
    per_mb = [(forward + backward) * v * s for s in scale]
    stage_s = {"first": np.asarray(per_mb[0]), "last": np.asarray(per_mb[-1]),
               "middle": np.asarray(per_mb[1] if p >= 3 else 0.0)}
    return SimpleNamespace(stage_s=stage_s, total_s=np.asarray(max(per_mb)),
                           mean_stage_s=np.asarray(sum(per_mb) / p))


@pytest.mark.parametrize("p, v, m", SCHEDULES)
@pytest.mark.parametrize("ratio", [0.02, 0.3, 1.0])
def test_critical_sends_equal_the_schedule_graph_for_equal_stages(p, v, m, ratio):
    forward, backward = 1.0 / v, 2.0 / v
    hop = ratio * forward
    scale = [1.0] * p
    graph = (schedule_makespan(p, v, m, forward=forward, backward=backward, hop=hop)
             - schedule_makespan(p, v, m, forward=forward, backward=backward))
    closed = float(pipeline_critical_s(np.asarray(2 * hop), _stages(p, v, scale, forward,
                                                                    backward), _plan(p, v, m)))
    assert closed == pytest.approx(graph, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("p, v, m", [s for s in SCHEDULES if s[0] > 2])
@pytest.mark.parametrize("busier", ["last", "first", "middle"])
def test_a_busier_stage_hides_sends_as_the_graph_does(p, v, m, busier):
    """The output layer (last stage) or the embedding (first) makes one device slower,
    or the embedding-and-loss layout the middle ones; the others wait for them anyway,
    and sends hide in that slack."""
    forward, backward = 1.0 / v, 2.0 / v
    scale = [0.8] * p
    if busier == "middle":
        scale[1:-1] = [1.0] * (p - 2)
    else:
        scale[-1 if busier == "last" else 0] = 1.0
    for ratio in (0.05, 0.3):
        hop = ratio * forward
        with_hops = schedule_makespan(p, v, m, forward=forward, backward=backward, hop=hop,
                                      scale=scale)
        graph = with_hops - schedule_makespan(p, v, m, forward=forward, backward=backward,
                                              scale=scale)
        closed = float(pipeline_critical_s(np.asarray(2 * hop), _stages(
            p, v, scale, forward, backward), _plan(p, v, m)))
        assert abs(closed - graph) <= 0.02 * with_hops, (ratio, closed, graph)


def test_interleaving_exposes_more_sends_and_no_pipeline_none():
    comp = _stages(4, 1, [1.0] * 4, 1.0, 2.0)
    one = np.asarray(0.1)
    assert float(pipeline_critical_s(one, comp, _plan(1, 1, 8))) == 0.0
    plain, interleaved = (float(pipeline_critical_s(one, comp, _plan(4, v, 16)))
                          for v in (1, 4))
    assert float(pipeline_critical_s(one, comp, _plan(4, 1, 1))) == pytest.approx(3 * 0.1)
    assert interleaved == pytest.approx((4 * 4 - 1) * 0.1) and plain < interleaved


@pytest.mark.parametrize("p, v, m", [(1, 1, 8), (2, 2, 8), (2, 16, 2), (3, 3, 9), (4, 2, 8),
                                     (4, 4, 32), (8, 2, 32)])
@pytest.mark.parametrize("a2a", [0.3, 0.9])
def test_paired_share_is_what_the_schedule_hides(p, v, m, a2a):
    """With the all-to-all overlap, the step exposes the all-to-all of the passes without
    a partner on its critical path, ``(1 - paired_share)`` of it; without, all of it plus
    its share of the bubble (``(p - 1) / v`` micro-batches' worth)."""
    forward, backward = 1.0 / v, 2.0 / v
    per_pass = a2a * forward  # shorter than either pass: the overlap hides it whole
    base = schedule_makespan(p, v, m, forward=forward, backward=backward)
    issued = 2 * m * v * per_pass
    on = schedule_makespan(p, v, m, forward=forward, backward=backward, a2a=per_pass,
                           overlap=True) - base
    off = schedule_makespan(p, v, m, forward=forward, backward=backward, a2a=per_pass) - base
    share = float(paired_share(_plan(p, v, m)))
    assert on == pytest.approx(issued * (1.0 - share), rel=1e-9)
    assert off == pytest.approx(issued + (p - 1) / v * issued / m, rel=1e-9)
