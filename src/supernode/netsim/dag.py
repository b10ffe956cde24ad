"""Small builders for the work DAG: a collective as a chain of phases, delays, joins."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from supernode.netsim.collectives import Ctx, collective_phases
from supernode.netsim.engine import Environment
from supernode.netsim.limits import reserve_flows
from supernode.netsim.tasks import Task


@dataclass(frozen=True)
class CollectiveRecord:
    """One collective instance in a run: what it was and its first and last task."""

    label: str
    op: str
    algorithm: str
    job: str
    first: Task
    last: Task

    @property
    def duration_s(self) -> float:
        """Seconds from the collective's start to its last byte's arrival."""
        return self.last.end_s - self.first.start_s


def add_collective(env: Environment, name: str, op: str, algorithm: str | None,
                   groups: np.ndarray, message_bytes: float, ctx: Ctx, *, lane: str = "",
                   job: str = "", cache: dict | None = None) -> tuple[Task, Task]:
    """Add a collective's phases as a chain of latency delays and transfer tasks; return
    (first, last).

    ``first`` and ``last`` are joins: wire dependencies to them. The instance is recorded
    in ``env.records`` for per-collective completion-time reports. ``cache`` (keyed by the
    identity of ``groups``) reuses the flows of identical collectives.
    """
    label = ctx.label or f"{op}"
    key = (op, algorithm, id(groups), message_bytes, ctx.repeat, ctx.mode, ctx.coupled,
           ctx.label, id(ctx.net), id(ctx.fabric), id(ctx.tables))
    phases = cache.get(key) if cache is not None else None
    if phases is None:
        reserve_flows(env, op, np.shape(groups), name, ctx.mode, ctx.repeat)  # before building
        phases = collective_phases(op, algorithm, groups, message_bytes, ctx)
        if cache is not None:
            cache[key] = phases
    first = env.task(name, "join", label=label, lane=lane, job=job)
    prev = first
    for i, phase in enumerate(phases):
        if phase.delay_s > 0:
            wait = env.task(f"{name}/{i}/latency", "delay", duration_s=phase.delay_s,
                            label=label, lane=lane, job=job)
            env.after(prev, wait)
            prev = wait
        t = env.task(f"{name}/{i}", "transfer", flows=phase.flows, label=label, lane=lane,
                     job=job)
        env.after(prev, t)
        prev = t
    last = env.task(f"{name}/end", "join", label=label, lane=lane, job=job)
    env.after(prev, last)
    env.records.append(CollectiveRecord(label, op, algorithm or "default", job, first, last))
    return first, last


def delay(env: Environment, name: str, seconds: float, *, label: str = "compute",
          lane: str = "", job: str = "") -> Task:
    """A compute (or any fixed) delay of ``seconds``."""
    return env.task(name, "delay", duration_s=max(float(seconds), 0.0), label=label,
                    lane=lane, job=job)


def join(env: Environment, name: str, *, lane: str = "", job: str = "") -> Task:
    """A zero-time task to hang dependencies on."""
    return env.task(name, "join", label="join", lane=lane, job=job)
