"""Topology-aware placement on real traces (seed 000 §4.1, seed 001 §4.2, §6).

Public API::

    trace = load_trace("philly", TraceRules(max_gpus=cluster.accelerators))
    result = schedule(cluster, trace, ["random", "first-fit", "best-fit"], seed=0)
    result.to_dict()                      # the --json of `supernode schedule`
    plot_schedule(result, folder)         # comparison plots (PNG)

Pieces: :mod:`~supernode.topology.hierarchy` (what a scheduler sees of the cluster, also
used by the exports), :mod:`~supernode.scheduler.trace` and
:mod:`~supernode.scheduler.synthetic` (jobs), :mod:`~supernode.scheduler.shapes` (model and
TP per job), :mod:`~supernode.scheduler.policies` (the ``POLICIES`` registry) and
:mod:`~supernode.scheduler.preempt`, :mod:`~supernode.scheduler.slowdown` (placement →
step-time model), :mod:`~supernode.scheduler.engine` (events) and
:mod:`~supernode.scheduler.metrics`. See ``docs/scheduler.md``.
"""

from supernode.scheduler import preempt as _preempt  # noqa: F401  (registers "preempt")
from supernode.scheduler.engine import EngineOptions
from supernode.scheduler.policies import POLICIES, PlacementPolicy
from supernode.scheduler.run import DEFAULT_POLICIES, ScheduleResult, schedule
from supernode.scheduler.synthetic import SyntheticSpec, synthetic_trace
from supernode.scheduler.trace import Trace, TraceRules, load_trace
from supernode.topology.hierarchy import Hierarchy, build_hierarchy


def plot_schedule(result: ScheduleResult, directory, option: str = "--plot",
                  inputs=()) -> list:
    """Write the comparison plots of ``result`` into ``directory`` (PNG, all or none; never
    over or around one of ``inputs``); see :mod:`supernode.scheduler.plots` (imported here
    lazily: matplotlib is heavy)."""
    from supernode.scheduler.plots import plot_schedule as plot

    return plot(result, directory, option, inputs)


__all__ = [
    "DEFAULT_POLICIES",
    "POLICIES",
    "EngineOptions",
    "Hierarchy",
    "PlacementPolicy",
    "ScheduleResult",
    "SyntheticSpec",
    "Trace",
    "TraceRules",
    "build_hierarchy",
    "load_trace",
    "plot_schedule",
    "schedule",
    "synthetic_trace",
]
