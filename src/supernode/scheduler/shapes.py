"""Job shapes: a model and a tensor-parallel size for every job of a trace (seeded rule).

Traces give GPU counts, not models. The rule (``docs/scheduler.md``, "Job shapes"):

1. **Model.** From the ladder in ``data/traces/job-models.yaml`` (GPT-3 125M … Llama 3
   405B), the models whose mixed-precision Adam training state, 16 bytes per parameter
   (ZeRO, Rajbhandari et al. SC'20, §3: 2 + 2 + 12 bytes), fills at most half of the job's
   HBM; one of the :data:`LARGEST_FITTING` largest of them is drawn uniformly (the
   smallest model when none fits).
2. **TP.** One of the legal sizes in :data:`TP_CHOICES` is drawn uniformly: ``t`` divides
   the job's GPUs and the supernode size (so a TP group can sit inside one), and the
   model's heads and KV heads (Megatron's rule, :func:`supernode.spec.plan.check_plan`).
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


@dataclass(frozen=True)
class JobShapes:
    """Model (ladder index) and TP size of every job, in trace order."""

    model: np.ndarray
    tp: np.ndarray


def draw_shapes(gpus: np.ndarray, domain_size: int, memory_bytes: float, seed: int,
                model: np.ndarray | None = None, tp: np.ndarray | None = None) -> JobShapes:
    """Shapes of jobs of ``gpus`` GPUs by the module's rule; ``model``/``tp`` entries ≥ 0
    (ladder index, TP size) are kept as given, -1 entries are drawn."""
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
        else:
            legal = legal_tp(m, g, domain_size)
            out_tp[i] = legal[int(u_tp[i] * len(legal))]
    return JobShapes(out_model, out_tp)
