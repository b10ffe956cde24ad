"""Placement policies: invariants over every policy, and the topology-aware guarantees."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster
from supernode.errors import InputError
from supernode.scheduler import POLICIES, build_hierarchy
from supernode.scheduler.policies import PolicyRegistry
from supernode.scheduler.segments import best_window, divisors_desc, segment_size
from supernode.scheduler.slowdown import classify
from supernode.scheduler.state import Occupancy

PRESETS = ("gb200-nvl72-superpod", "dgx-h100-superpod-su")
HIERARCHIES = {name: build_hierarchy(load_cluster(name)) for name in PRESETS}
JOB = st.tuples(st.sampled_from([1, 2, 4, 8, 12, 16, 24, 32, 64, 128]),
                st.sampled_from([1, 2, 4, 8]))


def _legal(job):
    gpus, tp = job
    return (gpus, tp if gpus % tp == 0 else 1)


@settings(max_examples=25)
@given(preset=st.sampled_from(PRESETS), policy=st.sampled_from(POLICIES.names()),
       jobs=st.lists(JOB.map(_legal), min_size=1, max_size=40),
       releases=st.lists(st.integers(0, 39), max_size=15), seed=st.integers(0, 2**16))
def test_placements_are_disjoint_free_and_exact(preset, policy, jobs, releases, seed):
    """Every policy: a placement has exactly the GPUs asked for, all free, sorted; counts
    per host, domain and port group stay equal to the free array."""
    state = Occupancy(HIERARCHIES[preset])
    p = POLICIES.create(policy)
    rng = np.random.default_rng(seed)
    held: list[np.ndarray] = []
    for i, (gpus, tp) in enumerate(jobs):
        chosen = p.place(gpus, tp, state, rng)
        if chosen is None:
            continue
        assert len(chosen) == gpus
        assert np.all(np.diff(chosen) > 0)
        assert state.free[chosen].all()
        state.take(chosen)
        held.append(chosen)
        if i in releases and held:
            state.release(held.pop(0))
    assert state.total_free == int(state.free.sum())
    np.testing.assert_array_equal(state.domain_free,
                                  np.bincount(state.gpu_domain[state.free],
                                              minlength=len(state.domain_free)))
    np.testing.assert_array_equal(state.group_free,
                                  np.bincount(state.gpu_group[state.free],
                                              minlength=len(state.group_free)))
    np.testing.assert_array_equal(state.host_free,
                                  np.bincount(state.gpu_host[state.free],
                                              minlength=len(state.host_free)))


@settings(max_examples=25)
@given(preset=st.sampled_from(PRESETS), policy=st.sampled_from(["best-fit", "slurm-block"]),
       jobs=st.lists(JOB.map(_legal), min_size=1, max_size=30), seed=st.integers(0, 99))
def test_topology_aware_policies_never_split_a_tp_group(preset, policy, jobs, seed):
    """best-fit and slurm-block keep every TP group inside one supernode, always."""
    state = Occupancy(HIERARCHIES[preset])
    p = POLICIES.create(policy)
    rng = np.random.default_rng(seed)
    for gpus, tp in jobs:
        chosen = p.place(gpus, tp, state, rng)
        if chosen is None:
            continue
        assert not classify(chosen, state).tp_crosses(tp)
        state.take(chosen)


def test_first_fit_and_random_ignore_the_topology():
    """On a cluster with one free GPU in each of 8 NVL72 racks, first-fit and random place
    an 8-GPU TP-8 job across racks; best-fit waits."""
    h = HIERARCHIES["gb200-nvl72-superpod"]
    state = Occupancy(h)
    busy = np.setdiff1d(np.arange(h.gpus), state.domain_start + 5)
    state.take(busy)
    rng = np.random.default_rng(0)
    for name in ("first-fit", "random"):
        chosen = POLICIES.create(name).place(8, 8, state, rng)
        assert classify(chosen, state).domains == 8
    assert POLICIES.create("best-fit").place(8, 8, state, rng) is None


def test_best_fit_packs_small_jobs_into_the_fullest_supernode():
    """A 4-GPU job goes to the supernode with the fewest free GPUs that holds it."""
    h = HIERARCHIES["gb200-nvl72-superpod"]
    state = Occupancy(h)
    state.take(np.arange(h.domain_size * 3, h.domain_size * 3 + 66))   # domain 3: 6 free
    chosen = POLICIES.create("best-fit").place(4, 4, state, np.random.default_rng(0))
    assert set(state.gpu_domain[chosen]) == {3}


def test_best_fit_keeps_a_multi_supernode_job_in_one_port_group_when_it_can():
    """A 128-GPU job on the DGX H100 SU (one port group of 32 hosts) spans 16 whole hosts."""
    h = HIERARCHIES["dgx-h100-superpod-su"]
    state = Occupancy(h)
    chosen = POLICIES.create("best-fit").place(128, 8, state, np.random.default_rng(0))
    cls = classify(chosen, state)
    assert (cls.domains, cls.groups, cls.domain_piece) == (16, 1, 8)


def test_slurm_block_uses_the_smallest_aligned_aggregate():
    """Two 72-GPU racks' worth of segments go to an aligned pair of blocks."""
    h = HIERARCHIES["gb200-nvl72-superpod"]
    state = Occupancy(h)
    state.take(np.arange(0, 8))                           # block 0 no longer whole
    chosen = POLICIES.create("slurm-block").place(144, 8, state, np.random.default_rng(0))
    assert set(state.gpu_domain[chosen]) == {2, 3}        # blocks 0-1 cannot, 2-3 can


@given(gpus=st.integers(1, 4096), tp=st.sampled_from([1, 2, 4, 8]),
       size=st.sampled_from([4, 8, 16, 72, 384]), domains=st.integers(1, 64))
def test_segment_size_divides_the_job_and_fits(gpus, tp, size, domains):
    if gpus % tp or size % tp or gpus > size * domains:
        return
    seg = segment_size(gpus, tp, size, domains)
    assert gpus % seg == 0 and seg % tp == 0
    assert seg <= size or seg == gpus <= size
    if gpus > size:
        assert domains * (size // seg) >= gpus // seg


def test_divisors_and_windows():
    assert divisors_desc(12) == [12, 6, 4, 3, 2, 1]
    cap = np.array([1, 0, 2, 1, 1])
    groups = np.array([0, 0, 1, 1, 2])
    assert best_window(cap, cap * 8, groups, groups, np.arange(5), 3, one_group=True) == (2, 4)
    assert best_window(cap, cap * 8, groups, groups, np.arange(5), 4, one_group=True) is None
    # 4 segments: runs [0, 4) and [2, 5) both span 2 groups; [2, 5) spans fewer domains
    assert best_window(cap, cap * 8, groups, groups, np.arange(5), 4, one_group=False) == (2, 5)


def test_registry_refuses_duplicates_and_unknown_names():
    registry = PolicyRegistry()

    class A:
        name = "a"

    registry.register(A)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(A)
    with pytest.raises(InputError, match="unknown policy"):
        POLICIES.create("nope")
    assert POLICIES.names() == ["random", "first-fit", "node-pack", "best-fit", "slurm-block",
                                "preempt"]


def test_classify_matches_brute_force():
    h = HIERARCHIES["gb200-nvl72-superpod"]
    state = Occupancy(h)
    rng = np.random.default_rng(3)
    for _ in range(50):
        gpus = np.sort(rng.choice(h.gpus, size=int(rng.integers(2, 100)), replace=False))
        cls = classify(gpus, state)
        _, d_counts = np.unique(state.gpu_domain[gpus], return_counts=True)
        _, g_counts = np.unique(state.gpu_group[gpus], return_counts=True)
        assert cls.domain_piece == math.gcd(*d_counts.tolist())
        assert cls.domains == len(d_counts) and cls.groups == len(g_counts)
