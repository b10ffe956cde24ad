"""A job's slowdown from its placement, predicted by the step-time model.

A placement is reduced to its **class**: how the job's GPUs split over supernodes and
port groups, which is all the step model can see of it.

* ``domain_piece``: the greatest common divisor of the job's GPU counts per supernode.
  Ranks follow GPU order, so a group of ``k`` consecutive ranks stays inside a supernode
  iff ``k`` divides it; a TP group crosses a supernode iff ``tp`` does not divide it.
* ``split_share``: the share of the job's TP groups (``tp`` consecutive ranks) whose GPUs
  are in more than one supernode.
* ``group_piece``: the same over port groups (0 when the job uses one port group).
* ``pods``: pods used (three-tier fabrics), and the down:up ratio met by traffic leaving
  the port groups (:meth:`~supernode.topology.hierarchy.Hierarchy.crossing_oversubscription`),
  raised by the other jobs that send through the same groups' uplinks
  (:func:`contention`).

The job's fabric is then the cluster's (:func:`supernode.estimate.system.system_from_cluster`)
cut to the job: scale-up tier of ``domain_piece`` ranks, a leaf tier of ``group_piece``
ranks, the scale-out tier over the whole job. ``estimate_plan`` gives the step time; the
slowdown is its ratio to the step time of the **ideal class**, where topology-aware
best-fit puts the job on an empty cluster. Step times are cached by (model, GPUs, TP,
class), so 100,000 jobs cost a few hundred estimates.

Pricing (:data:`PRICINGS`, issue 26): ``all-split`` prices a job whose TP groups do not
all fit as if every TP group were split into ``domain_piece``-rank pieces (the gcd class
alone). ``per-group`` (the default) slows only the groups that straddle: the step time is
the job's step with its TP groups inside (the same class, its piece rounded up to a
multiple of ``tp``) plus ``split_share`` of the extra time the all-split step costs. It
counts the straddling groups' extra communication for the ranks that pay it, so it is
never slower than ``all-split`` and equal to it when every group straddles; it is the
optimistic bound (ranks that wait at the next data-parallel synchronisation for a slow
group are not charged), ``all-split`` the pessimistic one.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from supernode.collectives.fabric import Fabric, FabricTier, with_group_size
from supernode.errors import InputError
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.scheduler.shapes import job_models
from supernode.scheduler.state import Occupancy
from supernode.spec.plan import ParallelPlan
from supernode.spec.resolved import Cluster
from supernode.topology.hierarchy import Hierarchy
from supernode.workload.batch import default_global_batch

#: Effective oversubscription is rounded up to this step (keeps the cache small).
OVERSUBSCRIPTION_STEP = 0.25
#: How a placement whose TP groups do not all fit a supernode is priced (module doc).
PRICINGS = ("per-group", "all-split")


@dataclass(frozen=True)
class PlacementClass:
    """What the step model sees of a placement (see the module doc)."""

    domain_piece: int
    domains: int
    group_piece: int
    groups: int
    pods: int
    oversubscription: float
    #: Share of the job's TP groups that span two supernodes (1: priced as all of them).
    split_share: float = 1.0

    def tp_crosses(self, tp: int) -> bool:
        """True when some TP group of size ``tp`` spans two supernodes."""
        return self.domain_piece % tp != 0


def classify(gpus: np.ndarray, state: Occupancy, oversubscription: float = 1.0,
             tp: int = 1) -> PlacementClass:
    """The class of a placement on ``gpus`` (sorted GPU indices) of a job of TP ``tp``."""
    first, last = gpus[0], gpus[-1]
    if state.gpu_domain[first] == state.gpu_domain[last] and \
            state.gpu_group[first] == state.gpu_group[last]:
        return PlacementClass(len(gpus), 1, 0, 1, 1, 1.0)
    domains = state.gpu_domain[gpus]
    groups = state.gpu_group[gpus]
    d_counts = _run_lengths(domains)
    g_counts = _run_lengths(groups)
    pods = len(np.unique(state.hierarchy.group_pod[groups])) if len(g_counts) > 1 else 1
    piece = math.gcd(*d_counts.tolist())
    return PlacementClass(
        domain_piece=piece, domains=len(d_counts),
        group_piece=math.gcd(*g_counts.tolist()) if len(g_counts) > 1 else 0,
        groups=len(g_counts), pods=pods,
        oversubscription=_quantise(oversubscription) if len(g_counts) > 1 else 1.0,
        split_share=split_share(domains, tp) if piece % tp else 0.0)


def split_share(domains: np.ndarray, tp: int) -> float:
    """Share of the TP groups (``tp`` consecutive entries of ``domains``, the supernode of
    each rank's GPU in rank order) whose ranks are in more than one supernode."""
    n = len(domains) // tp * tp
    if tp <= 1 or n == 0:
        return 0.0
    rows = domains[:n].reshape(-1, tp)
    return float(np.mean(rows[:, 0] != rows[:, -1]))


def _run_lengths(sorted_labels: np.ndarray) -> np.ndarray:
    """Counts of each label in a sorted array."""
    edges = np.diff(sorted_labels).nonzero()[0] + 1
    return np.diff(np.concatenate([[0], edges, [len(sorted_labels)]]))


def _quantise(value: float) -> float:
    return max(1.0, math.ceil(value / OVERSUBSCRIPTION_STEP - 1e-9) * OVERSUBSCRIPTION_STEP)


def contention(state: Occupancy, gpus: np.ndarray, pods: int) -> float:
    """Down:up ratio met by a job's cross-group traffic: the fabric's, or, when more of the
    groups' GPUs send up than the uplinks carry, the demand over the uplink capacity (the
    job's own GPUs counted; every cross-group job's GPUs assumed to send at line rate)."""
    ratio = state.hierarchy.crossing_oversubscription(pods)
    groups = np.unique(state.gpu_group[gpus])
    own = np.bincount(state.gpu_group[gpus], minlength=len(state.group_size))[groups]
    sending = (state.group_crossing[groups] + own) / state.group_size[groups]
    return max(1.0, float(ratio * sending.max()))


class SlowdownModel:
    """Step times per (model, GPUs, TP, class), cached; slowdowns against the ideal class."""

    def __init__(self, cluster: Cluster, hierarchy: Hierarchy, pricing: str = "per-group"
                 ) -> None:
        self.pricing = self.check_pricing(pricing)
        self.system = system_from_cluster(cluster)
        self.hierarchy = hierarchy
        tiers = {t.name: t for t in self.system.fabric.tiers}
        self.up: FabricTier | None = tiers.get("scale_up")
        self.out: FabricTier | None = tiers.get("scale_out")
        self._steps: dict[tuple, float] = {}
        self._pp: dict[tuple[int, int, int], int] = {}
        self._ideal: dict[tuple[int, int], PlacementClass] = {}
        self.estimates = 0

    @staticmethod
    def check_pricing(pricing: str, path: str = "--pricing") -> str:
        """``pricing`` when it is one of :data:`PRICINGS`; InputError naming ``path``."""
        if pricing not in PRICINGS:
            raise InputError(path, f"unknown pricing {pricing!r}; known: {', '.join(PRICINGS)}")
        return pricing

    def step_keys(self) -> list[tuple]:
        """Keys (model, GPUs, TP, class) of the step times computed so far."""
        return list(self._steps)

    def ideal_class(self, gpus: int, tp: int) -> PlacementClass:
        """Class of the best-fit placement of the job on an empty cluster."""
        key = (gpus, tp)
        if key not in self._ideal:
            from supernode.scheduler.policies import BestFitPolicy

            empty = Occupancy(self.hierarchy)
            chosen = BestFitPolicy().place(gpus, tp, empty, np.random.default_rng(0))
            if chosen is None:
                raise InputError("trace", f"a job of {gpus} GPUs (TP {tp}) cannot be placed "
                                          f"on an empty {self.hierarchy.name}")
            self._ideal[key] = classify(chosen, empty)
        return self._ideal[key]

    def slowdown(self, model: int, gpus: int, tp: int, cls: PlacementClass) -> float:
        """Step time of the job in ``cls`` over its step time in the ideal class (≥ 1 for
        any placement the model ranks no better than best fit on an empty cluster)."""
        if gpus == 1:
            return 1.0
        ideal = self.ideal_class(gpus, tp)
        return self.priced_step_s(model, gpus, tp, cls) / self.step_time_s(model, gpus, tp,
                                                                           ideal)

    def priced_step_s(self, model: int, gpus: int, tp: int, cls: PlacementClass) -> float:
        """Step time (s) of the job in ``cls`` under the model's pricing (module doc)."""
        split = self.step_time_s(model, gpus, tp, cls)
        if self.pricing == "all-split" or not cls.tp_crosses(tp) or cls.split_share >= 1:
            return split
        piece = tp * max(1, cls.domain_piece // tp)
        inside = min(split, self.step_time_s(model, gpus, tp,
                                             dataclasses.replace(cls, domain_piece=piece)))
        return inside + cls.split_share * (split - inside)

    def step_time_s(self, model: int, gpus: int, tp: int, cls: PlacementClass) -> float:
        """Predicted step time (s) of the job's plan on the fabric of ``cls``."""
        key = (model, gpus, tp, cls.domain_piece, cls.group_piece, cls.groups > 1,
               cls.oversubscription)
        if key not in self._steps:
            w = job_models()[model].workload
            system = dataclasses.replace(self.system, gpus=gpus,
                                         scale_up_size=max(1, cls.domain_piece),
                                         fabric=self.job_fabric(gpus, cls), notes=())
            pp = self.pipeline_stages(model, gpus, tp)
            plan = _plan(w, gpus, tp, pp)
            self._steps[key] = estimate_plan(w, plan, system).step_time_s
            self.estimates += 1
        return self._steps[key]

    def pipeline_stages(self, model: int, gpus: int, tp: int) -> int:
        """Fewest power-of-two pipeline stages with which the job fits in memory (ideal
        class); the most legal stages when none fits."""
        key = (model, gpus, tp)
        if key not in self._pp:
            w = job_models()[model].workload
            ideal = self.ideal_class(gpus, tp)
            system = dataclasses.replace(self.system, gpus=gpus, notes=(),
                                         fabric=self.job_fabric(gpus, ideal))
            stages = [p for p in (1, 2, 4, 8, 16, 32, 64)
                      if (gpus // tp) % p == 0 and p <= w.layers]
            chosen = stages[-1]
            for p in stages:
                est = estimate_plan(w, _plan(w, gpus, tp, p), system)
                self.estimates += 1
                if est.fits_in_memory:
                    chosen = p
                    break
            self._pp[key] = chosen
        return self._pp[key]

    def job_fabric(self, gpus: int, cls: PlacementClass) -> Fabric:
        """The cluster's fabric cut to a job of ``gpus`` GPUs placed as ``cls``."""
        piece = max(1, cls.domain_piece)
        tiers: list[FabricTier] = []
        if piece > 1 and self.up is not None:
            tiers.append(with_group_size(self.up, piece))
        if gpus > piece:
            if self.out is None:
                raise InputError("scale_out", "jobs cannot span supernodes: the cluster has "
                                              "no scale-out fabric")
            inner = tiers[-1].group_size if tiers else 1
            if cls.groups <= 1:
                tiers.append(dataclasses.replace(with_group_size(self.out, gpus),
                                                 oversubscription=1.0))
            else:
                g = cls.group_piece
                if inner < g < gpus and g % inner == 0:
                    tiers.append(dataclasses.replace(with_group_size(self.out, g),
                                                     oversubscription=1.0))
                tiers.append(dataclasses.replace(with_group_size(self.out, gpus),
                                                 oversubscription=cls.oversubscription))
        if not tiers:
            tier = self.up or self.out
            assert tier is not None  # a cluster's fabric has a scale-up or a scale-out tier
            tiers.append(with_group_size(tier, gpus))
        return Fabric(tuple(tiers))


def _plan(w, gpus: int, tp: int, pp: int) -> ParallelPlan:
    """The job's plan: TP and PP as given, DP filling, the planner's default batch, the
    distributed optimizer on (Megatron practice)."""
    return ParallelPlan(tp=tp, pp=pp, dp=gpus // (tp * pp),
                        global_batch_sequences=default_global_batch(w, gpus),
                        distributed_optimizer=True)

