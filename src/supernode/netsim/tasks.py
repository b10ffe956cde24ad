"""The nodes of the simulator's work DAG and the flows they move (times in seconds).

A :class:`Task` is a *delay* (compute), a *transfer* (the flows of its :class:`FlowSpec`
s) or a *join*; :class:`~supernode.netsim.engine.Environment` runs the DAG and keeps
one :class:`FlowClass` per class of flows in flight.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class FlowSpec:
    """Flows ``src[i] -> dst[i]`` (accelerator indices) of ``bytes`` each.

    ``coupled``: the flows move in lockstep as one class (a pipelined ring, one step of
    a collective, identical replicas); else each flow is its own class. ``hops``: path
    latencies paid in sequence (the steps a fused class stands for). ``reduce``: switches
    merge the flows (in-network reduction or multicast), so a link carries the largest
    share of any one flow instead of their sum. ``efficiency``: per link tier (indexed as
    :data:`~supernode.topology.graph.LINK_TIERS`), the fraction of a link's capacity the
    protocol turns into data (a collective's schedule gives it); a flow moving ``b`` bytes
    takes ``b / efficiency`` of the link. Empty: line rate.
    """

    src: np.ndarray
    dst: np.ndarray
    bytes: float
    hops: float = 1.0
    coupled: bool = True
    label: str = ""
    reduce: bool = False
    efficiency: tuple[float, ...] = ()


@dataclass(eq=False)
class Task:
    """A node of the work DAG (times in seconds; ``label`` groups tasks in reports)."""

    name: str
    kind: str
    duration_s: float = 0.0
    flows: tuple[FlowSpec, ...] = ()
    label: str = ""
    lane: str = ""
    job: str = ""
    succ: list[Task] = field(default_factory=list)
    waiting: int = 0
    pending: int = 0
    start_s: float = float("nan")
    end_s: float = float("nan")


@dataclass(eq=False)
class FlowClass:
    """Active state of one flow class (rate and remaining bytes are per flow)."""

    vid: int
    flows: int
    bytes: float
    latency_s: float
    task: Task
    label: str
    remaining: float
    rate: float = 0.0
    t_update: float = 0.0
    version: int = 0
    sent: float = 0.0
    start_s: float = 0.0
    end_s: float = float("nan")
