"""Score a batch of layouts over their whole knob grid at once (numpy, no plan objects).

A batch of ``L`` layouts sharing one :class:`~supernode.planner.space.KnobAxes` becomes
one :class:`~supernode.spec.plan.PlanArrays` whose fields are broadcastable arrays on
eleven axes: micro-batch, recompute, sequence parallelism, interleaving, ZeRO, pipeline
layout (the knob axes memory depends on), the expert all-to-all overlap and the tp / dp /
pp overlap switches, then the layout. The layout axis is last because numpy's loops run
along the innermost axis: it is the longest axis of most batches, where the pipeline
layout's two values made every broadcasting operation on the full grid ~8x slower. A
layout's knob points keep their C order (:func:`knob_index`), so ties break as before.
The step-time model (:func:`supernode.estimate.step.step_arrays`) computes every term at
its own shape (a TP message depends on layout and micro-batch only) and only the final
sums reach the full grid. Collective costs are computed once per distinct group (its
factors on the fabric) and message size: :class:`LayoutCallTime`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from supernode.collectives import Fabric
from supernode.estimate.calibration import Calibration
from supernode.estimate.layout import FactorCallTime
from supernode.estimate.model import interleave_ok
from supernode.estimate.step import Overlap, StepArrays, step_arrays
from supernode.estimate.system import SystemModel
from supernode.planner.mapping import Layout, group_factors
from supernode.planner.space import KnobAxes
from supernode.spec.plan import PP_LAYOUT_CODES, PlanArrays, plan_legal_mask
from supernode.spec.plan_arrays import CP_COMM_CODES
from supernode.spec.recompute import recompute_mask
from supernode.spec.workload import WorkloadSpec
from supernode.workload.memory import peak_memory_bytes_per_gpu

CP_COMM_NAMES = {code: name for name, code in CP_COMM_CODES.items()}

#: mb, recompute, sp, vpp, zero, pp layout | a2a, overlap tp, overlap dp, overlap pp | layout
NDIM = 11
LAYOUT_AXIS = NDIM - 1


def axis_array(values: Any, axis: int, dtype: Any = None) -> np.ndarray:
    """``values`` laid along ``axis`` of a NDIM-dimensional grid."""
    shape = [1] * NDIM
    arr = np.asarray(values, dtype=dtype)
    shape[axis] = arr.size
    return arr.reshape(shape)


class LayoutCallTime(FactorCallTime):
    """Per-layout collective costs for :func:`step_arrays` (its ``call_time`` hook): each
    call dimension's group of every layout interned and costed once per distinct group
    (:class:`~supernode.estimate.layout.FactorCallTime` on the layout axis)."""

    def __init__(self, layouts: list[Layout], fabric: Fabric) -> None:
        factors = [f for f in map(group_factors, layouts) if f is not None]
        assert len(factors) == len(layouts)  # enumerate_layouts drops the others
        super().__init__(factors, fabric, axis=LAYOUT_AXIS, ndim=NDIM)


def grid_plans(layouts: list[Layout], axes: KnobAxes, global_batch: int,
               precision: str) -> tuple[PlanArrays, Overlap]:
    """The broadcastable plan arrays and overlap switches of a batch's grid."""
    col = {k: axis_array([getattr(x, k) for x in layouts], LAYOUT_AXIS, np.int64)
           for k in ("tp", "pp", "dp", "cp", "ep")}
    col["etp"] = axis_array([x.expert_tp for x in layouts], LAYOUT_AXIS, np.int64)
    zero = axis_array([z for z, _ in axes.zero], 4, np.int64)
    plans = PlanArrays(
        **col,
        vpp=axis_array(axes.vpp, 3, np.int64),
        micro_batch=axis_array(axes.micro_batch, 0, np.int64),
        global_batch_sequences=np.asarray(global_batch, dtype=np.int64),
        recompute=axis_array([recompute_mask(r) for r in axes.recompute], 1, np.int64),
        recompute_layers=np.asarray(axes.recompute_layers, dtype=np.int64),
        sequence_parallel=axis_array(axes.sequence_parallel, 2, bool),
        zero_stage=zero,
        distributed_optimizer=axis_array([d for _, d in axes.zero], 4, bool),
        flash_attention=np.asarray(True),
        moe_a2a_overlap=axis_array(axes.a2a, 6, bool),
        pp_layout=axis_array([PP_LAYOUT_CODES[x] for x in axes.pp_layout], 5, np.int64),
        grad_fp32=np.asarray(axes.grad_fp32),
        cp_comm=np.asarray(axes.cp_comm, dtype=np.int64),
        precision=precision,
    )
    overlap = Overlap(tp=axis_array(axes.overlap, 7, bool), dp=axis_array(axes.overlap, 8, bool),
                      pp=axis_array(axes.overlap, 9, bool))
    return plans, overlap


@dataclass(frozen=True)
class GridScores:
    """Scores of a batch's grid (NDIM-dimensional arrays, layout axis last).

    ``step_time_s`` and ``objective`` span the full grid; ``memory_bytes``, ``legal``
    and ``fits`` the memory axes only (the all-to-all and overlap axes have length 1).
    """

    step_time_s: np.ndarray
    objective: np.ndarray
    memory_bytes: np.ndarray
    legal: np.ndarray
    fits: np.ndarray
    steps: StepArrays

    def best(self, axes: KnobAxes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per layout: flat grid index, objective and step time (s) of the best fitting
        point (objective inf: none fits)."""
        n = self.fits.shape[LAYOUT_AXIS]
        masked = per_layout(np.where(self.fits, self.objective, np.inf), n, axes)
        index = np.argmin(masked, axis=1)
        rows = np.arange(n)
        times = per_layout(self.step_time_s, n, axes)[rows, index]
        return index, masked[rows, index], times


def knob_shape(axes: KnobAxes) -> tuple[int, ...]:
    """Shape of one layout's knob grid (the order :func:`knob_index` unravels)."""
    return (len(axes.micro_batch), len(axes.recompute), len(axes.sequence_parallel),
            len(axes.vpp), len(axes.zero), len(axes.pp_layout), len(axes.a2a),
            len(axes.overlap), len(axes.overlap), len(axes.overlap))


def grid_shape(layouts: int, axes: KnobAxes) -> tuple[int, ...]:
    """Full NDIM shape of a batch's grid: the knob axes, then the layouts."""
    return (*knob_shape(axes), layouts)


def per_layout(grid: np.ndarray, layouts: int, axes: KnobAxes | None = None) -> np.ndarray:
    """``grid`` (broadcast to the batch's full shape, or as it is when ``axes`` is None:
    the memory axes) as one row per layout, its knob points in C order (a copy)."""
    if axes is not None:
        grid = np.broadcast_to(grid, grid_shape(layouts, axes))
    return np.moveaxis(grid, LAYOUT_AXIS, 0).reshape(layouts, -1)


def memory_grid(w: WorkloadSpec, layouts: list[Layout], axes: KnobAxes, global_batch: int,
                gpus: int, precision: str) -> tuple[np.ndarray, np.ndarray]:
    """Peak memory per GPU (bytes) and legality of every knob point of a batch.

    Both have the memory axes only (all-to-all and overlap axes of length 1): memory does
    not depend on those switches. Legality is :func:`~supernode.spec.plan.
    plan_legal_mask` plus the interleaved schedule's rule (micro-batches divisible by
    ``pp`` when ``vpp > 1``); the all-to-all overlap's own rule is applied when scoring.
    """
    no_overlap = replace(axes, overlap=(True,), a2a=(False,))
    plans, _ = grid_plans(layouts, no_overlap, global_batch, precision)
    shape = np.broadcast_shapes(*(np.shape(getattr(plans, f)) for f in (
        "tp", "micro_batch", "recompute", "sequence_parallel", "vpp", "zero_stage",
        "pp_layout")))
    legal = np.broadcast_to(plan_legal_mask(w, plans, gpus) & interleave_ok(plans), shape)
    memory = np.broadcast_to(peak_memory_bytes_per_gpu(w, plans), shape)
    return memory, legal


def score_grid(w: WorkloadSpec, layouts: list[Layout], axes: KnobAxes, global_batch: int,
               system: SystemModel, cal: Calibration, precision: str, memory: np.ndarray,
               legal: np.ndarray, energy_weights: tuple[float, float] | None = None
               ) -> GridScores:
    """Step time (s) and objective of every grid point, with the batch's memory grid.

    ``memory`` and ``legal`` come from :func:`memory_grid` for the same layouts.
    ``energy_weights`` = ``(busy_w, waiting_w)`` per GPU turns the objective into joules
    per GPU and step (``busy`` while computing, ``waiting`` otherwise); None: step time.
    """
    plans, overlap = grid_plans(layouts, axes, global_batch, precision)
    steps = step_arrays(w, plans, system, cal, overlap, call_time=LayoutCallTime(
        layouts, system.fabric))
    b = steps.breakdown_s
    # sum the narrow terms first, then the ones widened by each overlap switch
    time = _narrow(b, "compute") + _narrow(b, "pipeline_bubble") + _narrow(b, "cp_comm") \
        + _narrow(b, "ep_comm") + _narrow(b, "optimizer") + _narrow(b, "other")
    time = (time + _narrow(b, "tp_comm")) + _narrow(b, "pp_comm")
    time = time + _narrow(b, "dp_comm")
    # the all-to-all overlap pairs micro-batches: with pp > 1 only in the interleaved schedule
    a2a_bad = plans.moe_a2a_overlap & (plans.pp > 1) & (plans.vpp == 1)
    if np.any(a2a_bad):
        time = np.where(a2a_bad, np.inf, time)
    objective = time
    if energy_weights is not None:
        busy = _narrow(b, "compute") + _narrow(b, "optimizer")
        busy_w, waiting_w = energy_weights
        objective = busy_w * busy + waiting_w * (time - busy)
    fits = legal & (memory <= system.usable_memory_bytes)
    return GridScores(time, objective, memory, legal, fits, steps)


def _narrow(breakdown: dict[str, np.ndarray], key: str) -> np.ndarray:
    """A breakdown term at its own (unbroadcast) shape, to keep sums narrow."""
    return _unbroadcast(breakdown[key])


def _unbroadcast(arr: np.ndarray) -> np.ndarray:
    """Undo ``np.broadcast_to``: index 0 along every zero-stride axis (a view)."""
    index = tuple(slice(0, 1) if stride == 0 and n > 1 else slice(None)
                  for stride, n in zip(arr.strides, arr.shape, strict=True))
    return arr[index]


def knob_index(axes: KnobAxes, flat: int) -> dict[str, Any]:
    """The knob values of grid point ``flat`` (index into one layout's grid)."""
    i = np.unravel_index(flat, knob_shape(axes))
    zero, distopt = axes.zero[i[4]]
    return {"micro_batch": axes.micro_batch[i[0]], "recompute": axes.recompute[i[1]],
            "sequence_parallel": bool(axes.sequence_parallel[i[2]]), "vpp": axes.vpp[i[3]],
            "zero_stage": zero, "distributed_optimizer": distopt,
            "pp_layout": axes.pp_layout[i[5]], "moe_a2a_overlap": bool(axes.a2a[i[6]]),
            "overlap_tp_comm": axes.overlap[i[7]], "overlap_dp_comm": axes.overlap[i[8]],
            "overlap_pp_comm": axes.overlap[i[9]], "grad_reduce_in_fp32": axes.grad_fp32,
            "cp_comm_type": CP_COMM_NAMES[axes.cp_comm]}


def memory_index(axes: KnobAxes, flat: int) -> int:
    """Index of a memory-grid point (no a2a/overlap axes) in the full grid of one layout."""
    return int(flat) * axes.time_only_size
