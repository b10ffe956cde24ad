"""What recomputation costs: the forward of each recomputable module of a layer
(Megatron-Core's ``--recompute-modules``), and the sum a plan's choice re-runs.

``core_attn`` the attention core; ``layernorm`` the two norms (streamed); ``mla_up_proj``
MLA's up-projection GEMMs and the rotary embedding; ``mlp`` a dense layer's MLP GEMMs and
activation; ``moe`` a MoE layer's router, expert and shared-expert GEMMs, activations and
token permutation; ``moe_act`` the experts' activation; ``shared_experts`` the shared
experts' GEMMs and activation. Each at the same kernel model as the layer's own forward
(:mod:`supernode.estimate.kernels`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.estimate.calibration import Calibration
from supernode.estimate.elementwise import NORM_ELEMENTS_PER_HIDDEN, elementwise_cost
from supernode.estimate.kernels import gemm_forward_s, stream_s
from supernode.estimate.system import SystemModel
from supernode.spec.plan import PlanArrays
from supernode.spec.recompute import recomputes
from supernode.spec.workload import WorkloadSpec
from supernode.workload.activations import activation_element_bytes
from supernode.workload.shapes import Gemm, local_tokens


def module_forward_s(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration,
                     gemms: list[Gemm], moe_layer: bool, core_forward_s: Any) -> dict[str, Any]:
    """Forward seconds of each recomputable module of one layer (Megatron-Core's
    ``--recompute-modules``) on one GPU per micro-batch: what recomputing it costs.

    ``core_attn`` the attention core; ``layernorm`` the two norms (streamed); ``mla_up_proj``
    MLA's up-projection GEMMs and the rotary embedding; ``mlp`` a dense layer's MLP GEMMs and
    activation; ``moe`` a MoE layer's router, expert and shared-expert GEMMs, activations
    and token permutation; ``moe_act`` the experts' activation; ``shared_experts`` the
    shared experts' GEMMs and activation (``moe_act_routed``: the routed experts' part of
    ``moe_act``). Modules a layer lacks cost 0.
    """
    t = a.tp.astype(float)
    sp_div = np.where(a.sp, t, 1.0)
    cost = elementwise_cost(w)
    gate = (3.0 if w.gated_mlp else 2.0) * cost.activation
    per_token = local_tokens(w, a) * activation_element_bytes(a.precision)

    def streamed(elements: Any) -> Any:
        return stream_s(per_token * elements, system, cal)

    def forward(names: tuple[str, ...]) -> Any:
        chosen = [g for g in gemms if g.name.startswith(names)]
        return gemm_forward_s(chosen, system, cal, a.precision) if chosen else 0.0

    out: dict[str, Any] = {
        "core_attn": core_forward_s,
        "layernorm": streamed(NORM_ELEMENTS_PER_HIDDEN * cost.norm * w.hidden / sp_div),
        "mla_up_proj": 0.0, "mlp": 0.0, "moe": 0.0, "moe_act": 0.0, "moe_act_routed": 0.0,
        "shared_experts": 0.0,
    }
    if w.mla is not None:
        rope = 2.0 * (w.n_heads + 1) * w.mla.qk_rope_head_dim / t * cost.rotary
        out["mla_up_proj"] = forward(("q_up", "kv_up")) + streamed(rope)
    if moe_layer and w.moe is not None:
        moe = w.moe
        routed = moe.top_k * moe.token_imbalance
        act_routed = streamed(gate * w.expert_ffn_hidden * routed / t)
        shared = (forward(("shared_",)) + streamed(gate * w.expert_ffn_hidden
                                                    * moe.shared_experts / t)
                  if moe.shared_experts else 0.0)
        permute = streamed((3.0 * routed + 1.0) * w.hidden / t + 4.0 * moe.experts / t)
        out["moe_act_routed"] = act_routed
        out["moe_act"] = act_routed + (streamed(gate * w.expert_ffn_hidden
                                                * moe.shared_experts / t)
                                       if moe.shared_experts else 0.0)
        out["shared_experts"] = shared
        out["moe"] = forward(("router", "expert_")) + act_routed + permute + shared
    else:
        out["mlp"] = forward(("mlp_",)) + streamed(gate * w.ffn_hidden / t)
    return out


def recomputed_forward_s(a: PlanArrays, s: dict[str, Any]) -> Any:
    """Seconds of one layer's forward that the plans' selective recompute runs again, from
    the modules' forward seconds ``s`` (:func:`module_forward_s`; arrays over plans).

    The MoE block's recompute holds its activations and shared experts; the shared
    experts' recompute holds their activation.
    """
    def again(name: str) -> Any:
        return np.where(recomputes(a.recompute, name), s[name], 0.0)

    shared_act = np.where(recomputes(a.recompute, "shared_experts"), 0.0,
                          again("moe_act") - np.where(recomputes(a.recompute, "moe_act"),
                                                      s["moe_act_routed"], 0.0))
    inside = again("shared_experts") + np.where(recomputes(a.recompute, "moe_act"),
                                                s["moe_act_routed"], 0.0) + shared_act
    return (again("core_attn") + again("layernorm") + again("mla_up_proj") + again("mlp")
            + np.where(recomputes(a.recompute, "moe"), s["moe"], inside))
