"""One training iteration of a job as a DAG of compute delays and collectives.

Per pipeline device, the passes run in Megatron's order (:mod:`.schedule`), each a small
DAG (:mod:`.passes`). Pipeline sends go between consecutive virtual stages after each
pass and gate the receiving pass. Gradient collectives (the ``dp``/``dp_expert`` calls of
the ``backward`` phase) start as each model chunk's last backward runs, bucket by bucket
(``max(1, dp_launches // chunks)`` launch points per chunk, buckets fused between them),
as Megatron's overlapped gradient reduction does; then the optimizer step; then the parameter
all-gather of the distributed optimizer (``step`` phase), which the next iteration's
forwards hide up to each chunk's first one (the analytic model's
:func:`~supernode.estimate.dp_comm.param_gather_window_s`; with the DP overlap switch off,
every bucket waits for the device's last backward and the gather is fully exposed).
ZeRO-2/3 per-micro-batch collectives run with each pass on the device's data-parallel
stream, layer by layer: the first layer's share before the pass's compute, the rest beside
it (off: after it), as the analytic model's :func:`~supernode.estimate.dp_comm.
layer_pipelined`. With the expert all-to-all overlap, passes outside the pipeline's
warm-up and cool-down run their all-to-all beside their compute.

*Replica sets* (:func:`.groups.replica_sets`): with ``aggregate`` every data-parallel
replica of a stage moves in lockstep, and each collective of a pass is one coupled class
over all replicas' groups; otherwise each replica (or EP-joined set) has its own passes
and every flow its own class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from supernode.estimate.dp_comm import param_gather_window_s
from supernode.netsim.dag import delay
from supernode.netsim.engine import Environment
from supernode.netsim.groups import dp_groups, pp_pairs, replica_sets
from supernode.netsim.jobs import JobModel
from supernode.netsim.network import Network
from supernode.netsim.passes import PassContext, _chain, build_pass, calls_for
from supernode.netsim.schedule import device_order
from supernode.netsim.tasks import Task


@dataclass(frozen=True)
class IterationOptions:
    """How an iteration is turned into flows (see the module docstring)."""

    aggregate: bool = True
    mode: str = "pipelined"
    dp_launches: int = 8


@dataclass
class JobRun:
    """Handles to read a job's step time after the run."""

    job: JobModel
    optimizer_ends: list[Task] = field(default_factory=list)
    gathers: list[tuple[Task, Task, float]] = field(default_factory=list)

    def step_time_s(self) -> float:
        """Step time (s): latest device end (after the optimizer and the exposed part of
        the parameter all-gather) plus the fixed per-step time."""
        end = max(t.end_s for t in self.optimizer_ends)
        for opt, last, window in self.gathers:
            end = max(end, opt.end_s + max(last.end_s - opt.end_s - window, 0.0))
        return end + self.job.other_s


def _dp(pc: PassContext, s: int, dim: str) -> np.ndarray:
    """Gradient groups of stage ``s`` (built once)."""
    return pc.groups((dim, s), lambda: dp_groups(pc.job, s, dim))


def _on(flag: bool | None) -> bool:
    return True if flag is None else bool(flag)


def build_iteration(env: Environment, job: JobModel, net: Network,
                    opts: IterationOptions = IterationOptions()) -> JobRun:
    """Add one iteration of ``job`` to ``env``; return handles for its step time."""
    p = job.plan
    hidden = job.calibration.tp_overlap if _on(p.overlap_tp_comm) else 0.0
    pc = PassContext(env, job, net, opts.mode, opts.aggregate, hidden)
    sets = replica_sets(job, opts.aggregate)
    run = JobRun(job)
    passes: dict[tuple, tuple[Task, Task, Task]] = {}
    for s in range(p.pp):
        order = device_order(s, p.pp, job.vpp, job.microbatches)
        lanes = [f"stage {s}" if opts.aggregate else f"stage {s} dp {r[0]}" for r in sets]
        prev: list[Task | None] = [None] * len(sets)
        dp_stream: Task | None = None
        paired = _paired(order)
        for k, op in enumerate(order):
            built = []
            for i, ds in enumerate(sets):
                start, done, end = build_pass(pc, op, s, ds, lanes[i], i, paired[k])
                built.append((start, done, end))
                passes[(op.kind, op.stage, op.microbatch, i)] = (start, done, end)
            dp_stream = _per_pass_dp(pc, s, k, op, built, prev, dp_stream, lanes[0])
            for i, (start, _, end) in enumerate(built):
                before = prev[i]
                if before is not None:
                    env.after(before, start)
                prev[i] = end
        _step_end(pc, s, order, passes, sets, dp_stream, run, opts, lanes[0])
    _pipeline_sends(pc, sets, passes)
    return run


def _paired(order: list) -> list[bool]:
    """Per op of a device: True when another micro-batch's pass runs beside it (not one
    of the warm-up forwards before the first backward, nor the cool-down backwards after
    the last forward)."""
    kinds = [op.kind for op in order]
    first_b = kinds.index("B") if "B" in kinds else len(kinds)
    last_f = len(kinds) - 1 - kinds[::-1].index("F") if "F" in kinds else -1
    return [first_b <= k <= last_f for k in range(len(order))]


def _per_pass_dp(pc: PassContext, s: int, k: int, op, built: list, prev: list,
                 stream: Task | None, lane: str) -> Task | None:
    """ZeRO-2/3 collectives of one pass (all replica sets), on the device's DP stream.

    Forward: the parameter gathers' forward half; backward: their backward half and the
    gradient reduce-scatter. With overlap, the first layer's share runs before the
    passes start, the rest beside them; without, everything after their compute.
    """
    job, env = pc.job, pc.env
    z = job.plan.zero_stage or 0
    z = max(z, 1 if job.plan.distributed_optimizer else 0)
    per_pass = job.microbatches * job.vpp
    phase = "forward" if op.kind == "F" else "backward"
    if z < 2 or (phase == "forward" and z < 3):
        return stream
    items = [(c, _dp(pc, s, c.dim), c.per_step / (2 * per_pass))
             for dim in ("dp", "dp_expert") for c in calls_for(job, dim, "forward")]
    if phase == "backward":
        items += [(c, _dp(pc, s, c.dim), c.per_step / per_pass)
                  for dim in ("dp", "dp_expert") for c in calls_for(job, dim, "backward")]
    if not items:
        return stream
    name = f"{job.name}/s{s}/dp{k}"
    if not _on(job.plan.overlap_dp_comm):
        chain = _chain(pc, name, items, lane)
        if chain is None:
            return stream
        for _, done, end in built:
            env.after(done, chain[0])
            env.after(chain[1], end)
        if stream is not None:
            env.after(stream, chain[0])
        return chain[1]
    layers = max(float(job.layers_per_gpu), 1.0)
    first = _chain(pc, name + "a", [(c, g, r / layers) for c, g, r in items], lane)
    rest = _chain(pc, name + "b", [(c, g, r * (1 - 1 / layers)) for c, g, r in items], lane)
    if first is None:
        return stream
    for i, (start, _, end) in enumerate(built):
        if prev[i] is not None:
            env.after(prev[i], first[0])
        env.after(first[1], start)
        if rest is not None:
            env.after(start, rest[0])
            env.after(rest[1], end)
    if stream is not None:
        env.after(stream, first[0])
    return rest[1] if rest is not None else first[1]


def _grad_ready_ops(job: JobModel, order: list, passes: dict, s: int, sets: list
                    ) -> list[list[tuple[Task, Task, Task]]]:
    """Per model chunk of device ``s`` (in execution order), the passes of every replica
    set after which that chunk's gradients are final: its last micro-batch's backward."""
    last_mb = job.microbatches - 1
    finals = [op for op in order if op.kind == "B" and op.microbatch == last_mb]
    return [[passes[("B", op.stage, last_mb, i)] for i in range(len(sets))] for op in finals]


def _step_end(pc: PassContext, s: int, order: list, passes: dict, sets: list,
              stream: Task | None, run: JobRun, opts: IterationOptions, lane: str) -> None:
    """Gradient buckets while each chunk's last backward runs, optimizer, all-gather."""
    job, env = pc.job, pc.env
    z = max(job.plan.zero_stage or 0, 1 if job.plan.distributed_optimizer else 0)
    calls = [] if z >= 2 else [c for d in ("dp", "dp_expert") for c in calls_for(job, d,
                                                                                 "backward")]
    chunks = _grad_ready_ops(job, order, passes, s, sets)
    pieces = max(1, opts.dp_launches // len(chunks))
    launches = len(chunks) * pieces
    overlap = _on(job.plan.overlap_dp_comm)
    piece = job.backward_s * job.compute_scale(s) / job.vpp / pieces
    last_ops = [passes[(order[-1].kind, order[-1].stage, order[-1].microbatch, i)]
                for i in range(len(sets))]
    for k, finals in enumerate(chunks):
        triggers = []
        for j, (start, _, _) in enumerate(finals):
            row, prev = [], start
            for i in range(pieces):
                if overlap:
                    t = delay(env, f"{job.name}/s{s}/grad{k}.{i}", piece, label="trigger",
                              lane=lane, job=job.name)
                    env.after(prev, t)
                    prev = t
                # no overlap: every bucket waits for the device's whole backward
                row.append(prev if overlap else last_ops[j][2])
            triggers.append(row)
        for i in range(pieces if calls else 0):
            items = [(c, _dp(pc, s, c.dim), c.per_step / launches) for c in calls]
            chain = _chain(pc, f"{job.name}/s{s}/grad{k}.{i}", items, lane)
            if chain is None:
                continue
            for row in triggers:
                env.after(row[i], chain[0])
            if stream is not None:
                env.after(stream, chain[0])
            stream = chain[1]
    _optimizer(pc, s, last_ops, stream, run, lane)


def _optimizer(pc: PassContext, s: int, last_ops: list, stream: Task | None, run: JobRun,
               lane: str) -> None:
    job, env = pc.job, pc.env
    opt = delay(env, f"{job.name}/s{s}/optimizer", job.optimizer_s, label="optimizer",
                lane=lane, job=job.name)
    for _, _, end in last_ops:
        env.after(end, opt)
    if stream is not None:
        env.after(stream, opt)
    run.optimizer_ends.append(opt)
    gathers = [(c, _dp(pc, s, c.dim), c.per_step) for d in ("dp", "dp_expert")
               for c in calls_for(job, d, "step")]
    chain = _chain(pc, f"{job.name}/s{s}/gather", gathers, lane)
    if chain is not None:
        env.after(opt, chain[0])
        window = param_gather_window_s(job.forward_s, job.core_forward_s, job.plan.pp,
                                       job.vpp, job.calibration.dp_overlap) \
            if _on(job.plan.overlap_dp_comm) else 0.0
        run.gathers.append((opt, chain[1], window))


def _pipeline_sends(pc: PassContext, sets: list[np.ndarray], passes: dict) -> None:
    """Activation sends forward and gradient sends backward between virtual stages."""
    job, env = pc.job, pc.env
    stages = job.plan.pp * job.vpp
    calls = {ph: calls_for(job, "pp", ph) for ph in ("forward", "backward")}
    for (kind, v, m, i), (_, _, end) in passes.items():
        nxt = v + 1 if kind == "F" else v - 1
        if not 0 <= nxt < stages:
            continue
        phase = "forward" if kind == "F" else "backward"
        a, b = v % job.plan.pp, nxt % job.plan.pp
        pairs = pc.groups(("pp", a, b, i), partial(pp_pairs, job, a, b, sets[i]))
        items = [(c, pairs, 1.0) for c in calls[phase]]
        lane = f"stage {v % job.plan.pp}"
        chain = _chain(pc, f"{job.name}/pp{kind}{v}.{m}.{i}", items, lane)
        target = passes[(kind, nxt, m, i)][0]
        if chain is None:
            env.after(end, target)
            continue
        env.after(end, chain[0])
        env.after(chain[1], target)
