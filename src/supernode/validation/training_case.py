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
    moe = model.pop("moe", None)
    if moe:
        raise InputError("model.moe", "MoE training cases are not modelled by the validator yet")
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
    return workload_from_data({k: v for k, v in data.items() if v is not None},
                              source="model")


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
