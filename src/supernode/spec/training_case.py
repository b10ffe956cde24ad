"""Turn a ``training_step`` validation case into a workload and a plan.

Nulls mean "not published": they stay ``None`` in the plan so the estimate chooses them
as a tuned run would (micro-batch, recompute, sequence parallelism, interleaving).
"""

from __future__ import annotations

from typing import Any

from supernode.errors import InputError
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.stack import FRAMEWORK_NAMES
from supernode.spec.workload import WorkloadSpec, workload_from_data


def case_workload(case: dict[str, Any]) -> WorkloadSpec:
    """The case's ``model`` block as a workload (GPT-style defaults where unstated).

    Format revision 2: ``training.zero_stage`` (``distributed_optimizer: true`` alone is
    stage 1; with ``zero_stage`` 2 or 3 it means that stage, revision 3),
    ``training.moe_a2a_overlap``, ``parallelism.etp``, ``parallelism.pp_layout``.
    Revision 3: ``training.recompute_modules``, ``training.recompute_num_layers``;
    ``training.framework`` is the workload's software stack (null: the default).
    """
    model = dict(case.get("model") or {})
    moe = _moe_block(model.pop("moe", None))
    data = {
        "name": str(case.get("id", "case")),
        "layers": model.get("layers"),
        "hidden": model.get("hidden"),
        "heads": model.get("heads"),
        "kv_heads": model.get("kv_heads"),
        "head_dim": model.get("head_dim"),
        "ffn_hidden": model.get("ffn_hidden"),
        "vocab": model.get("vocab"),
        "seq_len": model.get("seq_len"),
        "gated_mlp": bool(model.get("gated_mlp") or False),
    }
    if moe is not None:
        data["moe"] = moe
        every_layer = not moe.get("first_k_dense_layers") and moe.get("layer_frequency",
                                                                       1) == 1
        if data["ffn_hidden"] is None and every_layer and moe.get("expert_ffn_hidden"):
            data["ffn_hidden"] = moe["expert_ffn_hidden"]  # no dense MLP: width unused
    mla = _attention_block(model.get("attention"))
    if mla is not None:
        data["mla"] = mla
        data.pop("kv_heads")
    window = model.get("sliding_window")
    if window is not None:
        data["sliding_window"] = window
    framework = (case.get("training") or {}).get("framework")
    if framework is not None:
        if framework not in FRAMEWORK_NAMES:
            raise InputError("training.framework", f"unknown framework {framework!r}; known: "
                                                   f"{', '.join(FRAMEWORK_NAMES)}, or null")
        data["stack"] = {"framework": framework}
    return workload_from_data({k: v for k, v in data.items() if v is not None},
                              source="model")


def _attention_block(block: Any) -> dict[str, Any] | None:
    """A case's ``attention`` block: MLA fields, or None for MHA/GQA."""
    if block in (None, {}):
        return None
    if not isinstance(block, dict):
        raise InputError("model.attention", "expected a mapping such as {kind: mla, ...}")
    kind = block.get("kind", "mla")
    if kind in ("mha", "gqa"):
        return None
    if kind != "mla":
        raise InputError("model.attention.kind", f"unknown kind {kind!r}; known: mla, mha, gqa")
    return {k: v for k, v in block.items() if k != "kind"}


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


#: Megatron-LM's spellings of ``--cp-comm-type`` that the plan writes differently.
_CP_COMM_ALIASES = {"allgather": "all_gather"}


def case_plan(case: dict[str, Any]) -> ParallelPlan:
    """The case's ``parallelism`` and ``training`` blocks as a plan (nulls left to choose).

    Format revision 2: ``training.zero_stage`` (``distributed_optimizer: true`` alone is
    stage 1; with ``zero_stage`` 2 or 3 it means that stage, revision 3),
    ``training.moe_a2a_overlap``, ``parallelism.etp``, ``parallelism.pp_layout``.
    Revision 3: ``training.recompute_modules`` (with ``recompute: selective``),
    ``training.recompute_num_layers`` (with ``recompute: full``), ``training.cp_comm_type``
    (``p2p``, ``all_gather`` (Megatron's spelling ``allgather`` too), ``a2a``, ``a2a+p2p``;
    null: Megatron-Core's default ``p2p``).
    """
    par = case.get("parallelism") or {}
    train = case.get("training") or {}
    precision = train.get("precision") or "bf16"
    sizes = parallel_sizes(case)
    data = {
        **sizes, "ep": par.get("ep") or 1, "vpp": par.get("vpp"),
        "etp": par.get("etp"), "pp_layout": par.get("pp_layout"),
        "micro_batch": train.get("micro_batch"),
        "global_batch_sequences": train.get("global_batch"),
        "recompute": train.get("recompute"),
        "recompute_modules": train.get("recompute_modules"),
        "recompute_num_layers": train.get("recompute_num_layers"),
        "sequence_parallel": train.get("sequence_parallel"),
        "distributed_optimizer": train.get("distributed_optimizer"),
        "zero_stage": train.get("zero_stage"),
        "moe_a2a_overlap": train.get("moe_a2a_overlap"),
        "cp_comm_type": _CP_COMM_ALIASES.get(str(train.get("cp_comm_type")),
                                             train.get("cp_comm_type")),
        "precision": precision,
    }
    return plan_from_data(data, source="training")


_SIZES = ("tp", "pp", "dp", "cp")


def parallel_sizes(case: dict[str, Any]) -> dict[str, Any]:
    """``tp``, ``pp``, ``dp`` and ``cp`` of the case, a null one derived from
    ``system.gpus`` where the others fix it (:func:`derived_sizes`), else 1."""
    par = case.get("parallelism") or {}
    sizes = {k: par.get(k) or 1 for k in _SIZES}  # a wrong type is the plan's to refuse
    derived = _derivation(case)
    if derived is not None:
        sizes[derived[0]] = derived[1]
    return sizes


def derived_sizes(case: dict[str, Any]) -> dict[str, str]:
    """The parallel size a case leaves null that ``system.gpus`` determines, with the rule:
    ``dp`` when it is null (the others null read as 1), or the one null size among
    ``tp``/``pp``/``cp`` when ``dp`` is given; none when the GPUs do not divide evenly."""
    derived = _derivation(case)
    if derived is None:
        return {}
    others = "·".join(k for k in _SIZES if k != derived[0])
    return {derived[0]: f"system.gpus / ({others})"}


def _derivation(case: dict[str, Any]) -> tuple[str, int] | None:
    """(the size :func:`derived_sizes` derives, its value), or None."""
    par = case.get("parallelism") or {}
    gpus = _gpus(case)
    null = [k for k in _SIZES if par.get(k) is None]
    target = "dp" if "dp" in null else (null[0] if len(null) == 1 else None)
    if target is None or gpus is None:
        return None
    known = 1
    for k in _SIZES:
        value = par.get(k)
        if k != target and isinstance(value, int) and not isinstance(value, bool):
            known *= value
    if known <= 0 or gpus % known:
        return None
    return target, gpus // known


def _gpus(case: dict[str, Any]) -> Any:
    gpus = (case.get("system") or {}).get("gpus")
    return gpus if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0 else None


def measured_step_time_s(case: dict[str, Any]) -> float | None:
    """``measured.step_time_s``, or derived from ``tokens_per_s_per_gpu`` when absent:
    ``global_batch * seq_len / (tokens_per_s_per_gpu * gpus)``."""
    measured = case.get("measured")
    if not isinstance(measured, dict):
        return None
    step = measured.get("step_time_s")
    if isinstance(step, int | float) and not isinstance(step, bool):
        return float(step)
    rate = measured.get("tokens_per_s_per_gpu")
    if rate is None:
        return None
    try:
        tokens = float(case["training"]["global_batch"]) * float(case["model"]["seq_len"])
        return tokens / (float(rate) * float(case["system"]["gpus"]))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
