"""Job shapes: a model and a tensor-parallel size for every job of a trace (seeded rule).

Traces give GPU counts, not models. The rule (``docs/scheduler.md``, "Job shapes"):

1. **Model.** From the ladder in ``data/traces/job-models.yaml`` (GPT-3 125M … Llama 3
   405B), the models whose mixed-precision Adam training state, 16 bytes per parameter
   (ZeRO, Rajbhandari et al. SC'20, §3: 2 + 2 + 12 bytes), fills at most half of the job's
   HBM; one of the :data:`LARGEST_FITTING` largest of them is drawn uniformly (the
   smallest model when none fits).
2. **TP** (:data:`SHAPE_RULES`). ``memory-tp`` (the default, issue 26): the smallest legal
   size whose share of the training state fits the same half of one GPU's HBM — weights
   and gradients (2 + 2 bytes per parameter) split over TP, the fp32 master weights and
   Adam moments (12 bytes) over TP x DP (Megatron's distributed optimizer, ZeRO stage 1) —
   else the largest legal size; so a 1.3B model on 8 GPUs gets TP 1, not TP 8.
   ``uniform-tp`` (the earlier rule, kept as a variant): one legal size drawn uniformly.
   Legal: ``t`` in :data:`TP_CHOICES` divides the job's GPUs and the supernode size (so a
   TP group can sit inside one), and the model's heads and KV heads (Megatron's rule,
   :func:`supernode.spec.plan.check_plan`).
3. Pipeline stages and the global batch are not drawn: :mod:`supernode.scheduler.slowdown`
   takes the fewest power-of-two stages that fit in memory and the planner's default batch.

Draws use one ``numpy`` generator seeded with ``seed``: two uniform numbers per job in trace
order, so the shapes depend on the seed and the trace only (never on the policy). A trace
may fix a job's model or TP (columns ``model`` and ``tp``); the draw is then skipped.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import numpy as np

from supernode.errors import InputError
from supernode.spec.loader import parse_text
from supernode.spec.plan import ParallelPlan, check_plan
from supernode.spec.workload import WorkloadSpec, workload_from_data
from supernode.workload.params import total_params
from supernode.workload.presets import load_workload

#: Training-state bytes per parameter with mixed-precision Adam (ZeRO §3: 2 + 2 + 12).
STATE_BYTES_PER_PARAM = 16
#: Share of a job's HBM the training state may fill (the rest: activations, buffers).
STATE_SHARE_OF_MEMORY = 0.5
#: The model is drawn among this many of the largest models that fit.
LARGEST_FITTING = 3
#: Tensor-parallel sizes a job may get (Megatron practice: up to one 8-GPU NVLink board).
TP_CHOICES = (1, 2, 4, 8)
#: How a job's TP is chosen (module doc): from memory, or drawn uniformly (the old rule).
SHAPE_RULES = ("memory-tp", "uniform-tp")
#: Bytes per parameter split over TP (bf16 weights and gradients) and over TP x DP (fp32
#: master weights and Adam moments, sharded by the distributed optimizer; ZeRO §3).
TP_SHARDED_BYTES_PER_PARAM = 4
DP_SHARDED_BYTES_PER_PARAM = STATE_BYTES_PER_PARAM - TP_SHARDED_BYTES_PER_PARAM


@dataclass(frozen=True)
class JobModel:
    """One rung of the model ladder: its name, workload and parameter count."""

    name: str
    workload: WorkloadSpec
    params: int


@functools.cache
def job_models() -> tuple[JobModel, ...]:
    """The model ladder from ``data/traces/job-models.yaml``, smallest first."""
    path = resources.files("supernode") / "data" / "traces" / "job-models.yaml"
    doc = parse_text(path.read_text(encoding="utf-8"), source="job-models.yaml")
    out = []
    for i, entry in enumerate(doc["models"]):
        if "preset" in entry:
            w = load_workload(entry["preset"])
        else:
            w = workload_from_data(entry["workload"], source=f"job-models.yaml models[{i}]")
        out.append(JobModel(entry["name"], w, int(total_params(w))))
    return tuple(sorted(out, key=lambda m: m.params))


def model_index(name: str, path: str) -> int:
    """Index of the ladder model called ``name``; InputError naming ``path`` otherwise."""
    names = [m.name for m in job_models()]
    if name not in names:
        raise InputError(path, f"unknown model {name!r}; the ladder has {', '.join(names)}")
    return names.index(name)


def fitting_models(gpus: int, memory_bytes: float) -> list[int]:
    """Ladder indices a job of ``gpus`` GPUs of ``memory_bytes`` HBM each may draw from."""
    models = job_models()
    budget = STATE_SHARE_OF_MEMORY * gpus * memory_bytes
    fit = [i for i, m in enumerate(models) if m.params * STATE_BYTES_PER_PARAM <= budget]
    return fit[-LARGEST_FITTING:] if fit else [0]


@functools.cache
def legal_tp(model: int, gpus: int, domain_size: int) -> tuple[int, ...]:
    """TP sizes of :data:`TP_CHOICES` legal for ``model`` on ``gpus`` GPUs (at least 1)."""
    w = job_models()[model].workload
    out = []
    for t in TP_CHOICES:
        if gpus % t or domain_size % t:
            continue
        try:
            check_plan(w, ParallelPlan(tp=t, dp=gpus // t, global_batch_sequences=gpus // t),
                       gpus=gpus)
        except InputError:
            continue
        out.append(t)
    return tuple(out) or (1,)


@functools.cache
def needed_tp(model: int, gpus: int, domain_size: int, memory_bytes: float) -> int:
    """The smallest legal TP whose share of the model's training state fits
    :data:`STATE_SHARE_OF_MEMORY` of one GPU's ``memory_bytes`` (the largest legal TP when
    none does); see the module doc."""
    params = job_models()[model].params
    legal = legal_tp(model, gpus, domain_size)
    for t in legal:
        per_gpu = params * (TP_SHARDED_BYTES_PER_PARAM / t
                            + DP_SHARDED_BYTES_PER_PARAM / gpus)
        if per_gpu <= STATE_SHARE_OF_MEMORY * memory_bytes:
            return t
    return legal[-1]


def check_shape_rule(rule: str, path: str = "--shapes") -> str:
    """``rule`` when it is one of :data:`SHAPE_RULES`; InputError naming ``path`` else."""
    if rule not in SHAPE_RULES:
        raise InputError(path, f"unknown shape rule {rule!r}; known: {', '.join(SHAPE_RULES)}")
    return rule


@dataclass(frozen=True)
class JobShapes:
    """Model (ladder index) and TP size of every job, in trace order."""

    model: np.ndarray
    tp: np.ndarray


def draw_shapes(gpus: np.ndarray, domain_size: int, memory_bytes: float, seed: int,
                model: np.ndarray | None = None, tp: np.ndarray | None = None,
                rule: str = "memory-tp") -> JobShapes:
    """Shapes of jobs of ``gpus`` GPUs by the module's rule (``rule``: how TP is chosen);
    ``model``/``tp`` entries ≥ 0 (ladder index, TP size) are kept as given, -1 entries are
    drawn. The generator draws the same numbers under either rule."""
    check_shape_rule(rule)
    rng = np.random.default_rng(seed)
    n = len(gpus)
    u_model, u_tp = rng.random(n), rng.random(n)
    out_model = np.empty(n, dtype=np.int64)
    out_tp = np.empty(n, dtype=np.int64)
    fits: dict[int, list[int]] = {}
    for i in range(n):
        g = int(gpus[i])
        if model is not None and model[i] >= 0:
            m = int(model[i])
        else:
            choices = fits.setdefault(g, fitting_models(g, memory_bytes))
            m = choices[int(u_model[i] * len(choices))]
        out_model[i] = m
        if tp is not None and tp[i] >= 0:
            out_tp[i] = int(tp[i])
        elif rule == "memory-tp":
            out_tp[i] = needed_tp(m, g, domain_size, memory_bytes)
        else:
            legal = legal_tp(m, g, domain_size)
            out_tp[i] = legal[int(u_tp[i] * len(legal))]
    return JobShapes(out_model, out_tp)
