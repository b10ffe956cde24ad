"""Data-parallel communication left exposed after overlap, vectorised over candidate
plans: ZeRO-0/1's bucketed gradient reduction and parameter all-gather, ZeRO-2/3's
per-layer prefetch (what the step model charges as ``dp_comm``,
:mod:`supernode.estimate.step`; the simulator's iteration uses the same windows)."""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.estimate.calibration import Calibration
from supernode.estimate.compute import MicrobatchCompute
from supernode.estimate.select import Restrict, select
from supernode.spec.plan import PlanArrays


def layer_pipelined(comm: Any, work: Any, layers: Any) -> Any:
    """Exposed seconds of ``comm`` split over ``layers`` layer transfers of one pass, each
    prefetched under the compute ``work``: the first layer's share is exposed, the rest
    hides as far as the compute lasts, ``c / n + max(c (n - 1) / n - w, 0)``."""
    n = np.maximum(layers, 1.0)
    first = comm / n
    return first + np.maximum(comm - first - work, 0.0)


def param_gather_window_s(forward_s: Any, core_forward_s: Any, pp: Any, vpp: Any,
                          eta: float) -> Any:
    """Compute seconds the distributed optimizer's parameter all-gather (issued after
    the optimizer step) hides under in the next step (Megatron ``--overlap-param-gather``:
    each model chunk's gather must land before that chunk's first forward).

    ``forward_s`` and ``core_forward_s``: one micro-batch's forward on the device and its
    attention core (which hides the CP exchange, not this). A device of Megatron's
    schedule runs its chunks' forwards in rounds of ``p`` micro-batches, so its last
    chunk's first forward ends ``(v - 1) p + 1`` chunk forwards into the step:
    ``eta (forward - core) ((v - 1) p + 1) / v`` (one micro-batch forward without
    interleaving).
    """
    v = np.maximum(np.asarray(vpp, dtype=float), 1.0)
    rounds = ((v - 1.0) * np.asarray(pp, dtype=float) + 1.0) / v
    return eta * np.maximum(forward_s - core_forward_s, 0.0) * rounds


def dp_exposed_s(phase_s: dict[str, Any], comp: MicrobatchCompute, a: PlanArrays,
                 cal: Calibration, on: Any = True,
                 busy_s: dict[str, Any] | None = None) -> tuple[Any, Any]:
    """Data-parallel seconds left exposed per step, and the compute seconds used to hide
    them (see the module docstring).

    ``phase_s``: issued seconds per step of every dp / dp_expert call by phase
    (``backward``: gradient reduction; ``forward``: ZeRO-3 parameter gathers before each
    micro-batch's forward and backward; ``step``: the parameter all-gather after the
    optimizer). ``on``: the overlap switch (off: everything exposed). The windows are a
    pass's compute outside its attention core (which hides the CP exchange), less
    ``busy_s`` (seconds per micro-batch pass, by phase ``forward``/``backward``: other
    traffic already hidden there on the same links, e.g. TP on a shared NVLink tier).
    """
    on = np.asarray(on)
    eta = cal.dp_overlap
    grads, gathers, step = phase_s["backward"], phase_s["forward"], phase_s["step"]
    m = np.maximum(a.microbatches, 1).astype(float)
    n = np.maximum(comp.layers, 1.0)
    busy = busy_s or {}
    busy_f, busy_b = busy.get("forward", 0.0), busy.get("backward", 0.0)
    core_f = comp.attention_core_forward_s + busy_f
    fwd = eta * np.maximum(comp.forward_s - core_f, 0.0)
    bwd = eta * np.maximum(comp.backward_s + comp.recompute_s
                           - comp.attention_core_backward_s - busy_b, 0.0)
    # ZeRO-0/1: one bucketed reduction per step under the last backward, one gather
    step_exposed = np.maximum(step - param_gather_window_s(
        comp.forward_s, core_f, a.pp, a.vpp, eta), 0.0)

    def once(r: Restrict) -> Any:
        return np.maximum(r(grads) - r(bwd), 0.0) + r(step_exposed)

    def layered(r: Restrict) -> Any:  # ZeRO-2/3: per micro-batch, layer by layer
        mb, layers = r(m), r(n)
        g, gr = r(gathers) / (2.0 * mb), r(grads) / mb  # gathers split between fwd, bwd
        return mb * (layer_pipelined(g, r(fwd), layers)
                     + layer_pipelined(g + gr, r(bwd), layers)) + r(step_exposed)

    total = grads + gathers + step
    exposed_if_on = select(a.zero >= 2, layered, once)  # each formula where it applies
    exposed = exposed_if_on if on.all() else np.where(on, exposed_if_on, total)
    return exposed, total - exposed  # what is not exposed was hidden under compute
