"""Transformer training workloads: parameters, FLOPs, memory and communication per GPU.

Pure functions of a :class:`~supernode.spec.workload.WorkloadSpec` and a
:class:`~supernode.spec.plan.ParallelPlan` (or :class:`~supernode.spec.plan.PlanArrays`
for millions of candidate plans at once). All results are SI: FLOPs, bytes.
"""

from supernode.workload.activations import (
    in_flight_layer_microbatches,
    korthikanti_layer_bytes,
    layer_activation_bytes,
    predict_activation_memory,
)
from supernode.workload.flops import (
    forward_flops_per_token,
    hardware_flops_per_step,
    hardware_flops_per_token,
    megatron_flops_per_step,
    model_flops_per_step,
    model_flops_per_token,
    palm_flops_per_token,
    stage_flops_per_microbatch,
)
from supernode.workload.memory import (
    memory_bytes_per_gpu,
    model_state_bytes,
    params_per_gpu,
    predict_model_state_memory,
)
from supernode.workload.params import ParamCounts, active_params, count_params, total_params
from supernode.workload.presets import list_workload_presets, load_workload
from supernode.workload.traffic import CollectiveCall, bytes_per_step_by_dim, traffic_per_step

__all__ = [
    "CollectiveCall",
    "ParamCounts",
    "active_params",
    "bytes_per_step_by_dim",
    "count_params",
    "forward_flops_per_token",
    "hardware_flops_per_step",
    "hardware_flops_per_token",
    "in_flight_layer_microbatches",
    "korthikanti_layer_bytes",
    "layer_activation_bytes",
    "list_workload_presets",
    "load_workload",
    "megatron_flops_per_step",
    "memory_bytes_per_gpu",
    "model_flops_per_step",
    "model_flops_per_token",
    "model_state_bytes",
    "palm_flops_per_token",
    "params_per_gpu",
    "predict_activation_memory",
    "predict_model_state_memory",
    "stage_flops_per_microbatch",
    "total_params",
    "traffic_per_step",
]
