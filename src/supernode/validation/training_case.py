"""Turn a ``training_step`` validation case into a workload and a plan.

Nulls mean "not published": they stay ``None`` in the plan so the estimate chooses them
as a tuned run would (micro-batch, recompute, sequence parallelism, interleaving).
"""

from __future__ import annotations

from typing import Any

from supernode.errors import InputError
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.workload import WorkloadSpec, workload_from_data


def case_workload(case: dict[str, Any]) -> WorkloadSpec:
    """The case's ``model`` block as a workload (GPT-style defaults where unstated)."""
    model = dict(case.get("model") or {})
    moe = _moe_block(model.pop("moe", None))
    data = {
        "name": str(case.get("id", "case")),
        "layers": model.get("layers"),
        "hidden": model.get("hidden"),
        "heads": model.get("heads"),
        "kv_heads": model.get("kv_heads"),
        "ffn_hidden": model.get("ffn_hidden"),
        "vocab": model.get("vocab"),
        "seq_len": model.get("seq_len"),
        "gated_mlp": bool(model.get("gated_mlp") or False),
    }
    if moe is not None:
        data["moe"] = moe
    return workload_from_data({k: v for k, v in data.items() if v is not None},
                              source="model")


#: Names a case's ``model.moe`` block may use for each MoE field (Megatron / HF spellings).
_MOE_ALIASES = {
    "experts": ("experts", "num_experts", "n_routed_experts", "num_local_experts"),
    "top_k": ("top_k", "topk", "router_topk", "num_experts_per_tok"),
    "shared_experts": ("shared_experts", "n_shared_experts", "num_shared_experts"),
    "expert_ffn_hidden": ("expert_ffn_hidden", "moe_ffn_hidden", "moe_intermediate_size",
                          "moe_ffn_hidden_size"),
    "capacity_factor": ("capacity_factor", "moe_expert_capacity_factor"),
    "first_k_dense_layers": ("first_k_dense_layers", "first_k_dense_replace"),
    "layer_frequency": ("layer_frequency", "moe_layer_freq"),
}


def _moe_block(block: Any) -> dict[str, Any] | None:
    """Map a case's ``moe`` block onto the workload's MoE fields; unknown keys are refused."""
    if block in (None, False, {}):
        return None
    if not isinstance(block, dict):
        raise InputError("model.moe", "expected a mapping such as {experts: 8, top_k: 2}")
    out: dict[str, Any] = {}
    used: set[str] = set()
    for field, names in _MOE_ALIASES.items():
        for name in names:
            if block.get(name) is not None:
                out[field] = block[name]
                used.add(name)
                break
    unknown = sorted(set(block) - used - {n for names in _MOE_ALIASES.values() for n in names})
    if unknown:
        raise InputError("model.moe", f"unknown MoE fields {unknown}; known: "
                                      f"{', '.join(_MOE_ALIASES)}")
    return out


def case_plan(case: dict[str, Any]) -> ParallelPlan:
    """The case's ``parallelism`` and ``training`` blocks as a plan (nulls left to choose)."""
    par = case.get("parallelism") or {}
    train = case.get("training") or {}
    precision = train.get("precision") or "bf16"
    data = {
        "tp": par.get("tp") or 1, "pp": par.get("pp") or 1, "dp": par.get("dp") or 1,
        "cp": par.get("cp") or 1, "ep": par.get("ep") or 1, "vpp": par.get("vpp"),
        "micro_batch": train.get("micro_batch"),
        "global_batch_sequences": train.get("global_batch"),
        "recompute": train.get("recompute"),
        "sequence_parallel": train.get("sequence_parallel"),
        "distributed_optimizer": bool(train.get("distributed_optimizer") or False),
        "precision": precision,
    }
    return plan_from_data(data, source="training")
