"""One forward or backward pass of one pipeline device as a small DAG.

``start -> [compute outside attention || TP part A] -> [attention core || CP ring hops]
-> CP all-gathers / all-to-alls -> TP part B -> EP all-to-all + expert-TP gathers -> end``

TP collectives of the pass (all of one kind fused, ``repeat`` = calls per pass) are split
by the calibrated TP overlap share: part A runs under the GEMMs, part B is exposed, as in
the analytic model (``tp_overlap`` of TP time hidden); under congestion part A can outlast
the compute and part B grows. Context-parallel K/V hops hide under the attention core they
feed (the share :func:`~supernode.workload.cp_exchange.hidden_shares` of it per pass: the
ring's, or PyTorch's context_parallel's rounds; the rest of the core after them); the
all-gather and all-to-all exchanges on the critical path run after the core, exposed, as
in the analytic model. The expert all-to-all (and expert-TP gathers) is exposed, unless
the plan overlaps it (``moe_a2a_overlap``) and the pass has a partner micro-batch (not a
pipeline warm-up or cool-down pass): then it runs beside the pass's compute, as the
analytic model hides it under the partner's. Compute is scaled to the device's own stage
(first, middle and last stages differ).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from supernode.errors import InputError
from supernode.netsim.collectives import Ctx
from supernode.netsim.dag import add_collective, delay, join
from supernode.netsim.engine import Environment
from supernode.netsim.groups import cp_groups, cp_pairs, ep_groups, etp_groups, tp_groups
from supernode.netsim.jobs import Call, JobModel
from supernode.netsim.limits import TooLarge
from supernode.netsim.network import Network
from supernode.netsim.schedule import Op
from supernode.netsim.tasks import Task


@dataclass(frozen=True)
class PassContext:
    """What every pass of a job shares: job, network, decomposition and overlap."""

    env: Environment
    job: JobModel
    net: Network
    mode: str
    coupled: bool
    tp_hidden: float
    memo: dict = field(default_factory=dict)

    def ctx(self, label: str, repeat: float) -> Ctx:
        """Decomposition context for a collective of ``repeat`` fused calls."""
        return Ctx(repeat, self.mode, self.coupled, self.net, label, self.job.fabric,
                   self.job.tables)

    def groups(self, key: tuple, make: Callable[[], np.ndarray]) -> np.ndarray:
        """Group arrays built once per key (the same object each time: flows are reused)."""
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]


def calls_for(job: JobModel, dim: str, phase: str) -> list[Call]:
    """The job's collectives of ``dim`` issued in ``phase``."""
    return [c for c in job.calls if c.dim == dim and c.phase == phase]


def _chain(pc: PassContext, name: str, items: list[tuple[Call, np.ndarray, float]],
           lane: str) -> tuple[Task, Task] | None:
    """Collectives one after the other (one NCCL stream); None if there are none."""
    first: Task | None = None
    last: Task | None = None
    for i, (call, groups, repeat) in enumerate(items):
        if repeat <= 0 or groups.size == 0:
            continue
        label = f"{call.dim} {call.op}"
        task, ctx = f"{name}/{call.dim}{i}", pc.ctx(label, repeat)
        try:
            a, b = add_collective(pc.env, task, call.op, call.algorithm, groups,
                                  call.message_bytes, ctx, lane=lane, job=pc.job.name,
                                  cache=pc.memo)
        except TooLarge:
            raise
        except InputError as exc:  # the estimate's choice does not fit this placement
            note = (f"{pc.job.name}: {label} by {call.algorithm} does not fit the groups "
                    f"({exc.message}); simulated with the default algorithm")
            if note not in pc.env.notes:
                pc.env.notes.append(note)
            a, b = add_collective(pc.env, task, call.op, None, groups, call.message_bytes, ctx,
                                  lane=lane, job=pc.job.name, cache=pc.memo)
        if last is None:
            first = a
        else:
            pc.env.after(last, a)
        last = b
    return None if first is None or last is None else (first, last)  # both or neither


def _parallel(env: Environment, before: Task, name: str, branches: list, lane: str,
              job: str) -> Task:
    """Run ``branches`` (tasks or (first, last) chains) after ``before``; return their join."""
    end = join(env, f"{name}/join", lane=lane, job=job)
    for br in branches:
        if br is None:
            continue
        first, last = br if isinstance(br, tuple) else (br, br)
        env.after(before, first)
        env.after(last, end)
    if end.waiting == 0:
        env.after(before, end)
    return end


def _cp_members(pc: PassContext, call: Call, device: int, ds: np.ndarray,
                set_index: int) -> np.ndarray:
    """The groups a CP call runs in: ring hops (pairs ``cp / group_size`` CP ranks apart)
    or groups of ``group_size`` consecutive CP ranks (all-gather, all-to-all)."""
    job, size = pc.job, int(call.group_size)
    if call.op == "p2p":
        stride = max(job.plan.cp // max(size, 1), 1)
        return pc.groups(("cp", device, set_index, stride),
                         lambda: cp_pairs(job, device, ds, stride))
    return pc.groups(("cpg", device, set_index, size),
                     lambda: cp_groups(job, device, ds, size))


def build_pass(pc: PassContext, op: Op, device: int, ds: np.ndarray, lane: str,
               set_index: int = 0, paired: bool = False) -> tuple[Task, Task, Task]:
    """Tasks of one pass for replicas ``ds`` (replica set ``set_index``):
    (start, compute done, end). ``paired``: the pass runs beside another micro-batch's
    (its expert all-to-all may hide under compute when the plan overlaps it)."""
    job, env = pc.job, pc.env
    per_pass = job.microbatches * job.vpp
    phase = "forward" if op.kind == "F" else "backward"
    scale = job.compute_scale(device) / job.vpp
    total = (job.forward_s if op.kind == "F" else job.backward_s) * scale
    core = (job.core_forward_s if op.kind == "F" else job.core_backward_s) * scale
    name = f"{job.name}/{op.kind}{op.stage}.{op.microbatch}/{lane}"
    start = join(env, f"{name}/start", lane=lane, job=job.name)
    tp = pc.groups(("tp", device, set_index), lambda: tp_groups(job, device, ds))
    calls = calls_for(job, "tp", phase)
    part_a = [(c, tp, c.per_step / per_pass * pc.tp_hidden) for c in calls]
    part_b = [(c, tp, c.per_step / per_pass * (1.0 - pc.tp_hidden)) for c in calls]
    compute = delay(env, f"{name}/compute", total - core, lane=lane, job=job.name)
    j1 = _parallel(env, start, f"{name}/a", [compute, _chain(pc, f"{name}/tpA", part_a, lane)],
                   lane, job.name)
    ring = [(c, _cp_members(pc, c, device, ds, set_index), c.per_step / per_pass)
            for c in calls_for(job, "cp", phase) if c.hidden]
    serial = [(c, _cp_members(pc, c, device, ds, set_index), c.per_step / per_pass)
              for c in calls_for(job, "cp", phase) if not c.hidden]
    share = job.cp_hidden_shares[0 if phase == "forward" else 1]
    beside = delay(env, f"{name}/core", core * share, lane=lane, job=job.name)
    j_ring = _parallel(env, j1, f"{name}/b", [beside, _chain(pc, f"{name}/cp", ring, lane)],
                       lane, job.name)
    last_step = delay(env, f"{name}/core-last", core * (1.0 - share), lane=lane, job=job.name)
    env.after(j_ring, last_step)
    j2 = _parallel(env, last_step, f"{name}/cpx", [_chain(pc, f"{name}/cps", serial, lane)],
                   lane, job.name)
    tail = _chain(pc, f"{name}/tpB", part_b, lane)
    epg = pc.groups(("ep", device, set_index), lambda: ep_groups(job, device, ds))
    etg = pc.groups(("etp", device, set_index), lambda: etp_groups(job, device, ds))
    expert = [(c, epg, c.per_step / per_pass) for c in calls_for(job, "ep", phase)]
    expert += [(c, etg, c.per_step / per_pass) for c in calls_for(job, "etp", phase)]
    ep_chain = _chain(pc, f"{name}/ep", expert, lane)
    end = join(env, f"{name}/end", lane=lane, job=job.name)
    hidden = paired and bool(job.plan.moe_a2a_overlap) and ep_chain is not None
    if hidden and ep_chain is not None:  # beside this pass's compute, for the partner's
        env.after(start, ep_chain[0])
        env.after(ep_chain[1], end)
    prev = j2
    for chain in (tail, None if hidden else ep_chain):
        if chain is not None:
            env.after(prev, chain[0])
            prev = chain[1]
    env.after(prev, end)
    return start, j2, end
