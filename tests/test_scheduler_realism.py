"""Issue 26: job TP from memory, the Slurm node-packing baseline, per-group pricing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster
from supernode.errors import InputError
from supernode.scheduler import build_hierarchy
from supernode.scheduler.node_pack import node_pack
from supernode.scheduler.shapes import (
    DP_SHARDED_BYTES_PER_PARAM,
    STATE_SHARE_OF_MEMORY,
    TP_SHARDED_BYTES_PER_PARAM,
    draw_shapes,
    job_models,
    legal_tp,
    needed_tp,
)
from supernode.scheduler.slowdown import PlacementClass, SlowdownModel, classify, split_share
from supernode.scheduler.state import Occupancy

GB200 = load_cluster("gb200-nvl72-superpod")
H100 = load_cluster("dgx-h100-superpod-su")
HIER = {"gb200": build_hierarchy(GB200), "h100": build_hierarchy(H100)}
MEMORY = H100.accelerator.memory_bytes


def _fits(model: int, gpus: int, tp: int) -> bool:
    params = job_models()[model].params
    need = params * (TP_SHARDED_BYTES_PER_PARAM / tp + DP_SHARDED_BYTES_PER_PARAM / gpus)
    return need <= STATE_SHARE_OF_MEMORY * MEMORY


@given(st.integers(0, len(job_models()) - 1), st.sampled_from([1, 2, 4, 8, 16, 64, 512]))
def test_memory_tp_is_the_smallest_legal_size_that_fits(model, gpus):
    t = needed_tp(model, gpus, 8, MEMORY)
    legal = legal_tp(model, gpus, 8)
    assert t in legal
    smaller = [s for s in legal if s < t]
    assert not any(_fits(model, gpus, s) for s in smaller)
    assert _fits(model, gpus, t) or t == legal[-1]


def test_small_model_on_a_node_gets_tp_1_under_memory_tp_not_under_uniform():
    gpus = np.full(400, 8)
    smallest = np.zeros(400, dtype=np.int64)  # the ladder's smallest model, fixed
    memory = draw_shapes(gpus, 8, MEMORY, seed=3, model=smallest)
    uniform = draw_shapes(gpus, 8, MEMORY, seed=3, model=smallest, rule="uniform-tp")
    assert set(memory.tp.tolist()) == {1}
    assert set(uniform.tp.tolist()) == set(legal_tp(0, 8, 8))  # every legal size drawn
    assert len(set(uniform.tp.tolist())) > 1


def test_shape_rules_share_the_model_draw_and_refuse_unknown_rules():
    gpus = np.array([1, 8, 16, 64, 128, 8, 4])
    a = draw_shapes(gpus, 8, MEMORY, seed=11)
    b = draw_shapes(gpus, 8, MEMORY, seed=11, rule="uniform-tp")
    assert np.array_equal(a.model, b.model)
    with pytest.raises(InputError, match="--shapes"):
        draw_shapes(gpus, 8, MEMORY, seed=11, rule="bogus")


@settings(max_examples=60)
@given(preset=st.sampled_from(sorted(HIER)), used=st.lists(st.integers(0, 10_000),
                                                           max_size=300),
       gpus=st.sampled_from([1, 2, 3, 4, 8, 12, 16, 36, 72, 100, 144]))
def test_node_pack_never_splits_a_job_that_fits_a_free_node(preset, used, gpus):
    state = Occupancy(HIER[preset])
    taken = np.unique(np.array(used, dtype=np.int64) % state.gpus)
    if len(taken):
        state.take(taken)
    chosen = node_pack(gpus, state)
    if gpus > state.total_free:
        assert chosen is None
        return
    assert chosen is not None and len(chosen) == gpus and len(np.unique(chosen)) == gpus
    assert state.free[chosen].all()
    hosts = np.unique(state.gpu_host[chosen])
    size = int(state.host_size[0])
    if gpus <= size and (state.host_free >= gpus).any():
        assert len(hosts) == 1
    whole = int((state.host_free == state.host_size).sum())
    if gpus > size and gpus % size == 0 and whole >= gpus // size:
        assert len(hosts) == gpus // size  # whole free nodes, the fewest
        lowest = np.flatnonzero(state.host_free == state.host_size)[: gpus // size]
        assert np.array_equal(hosts, lowest)


@given(st.lists(st.integers(0, 7), min_size=1, max_size=64), st.sampled_from([1, 2, 4, 8]))
def test_split_share_counts_the_groups_across_supernodes(domains, tp):
    d = np.sort(np.array(domains))
    share = split_share(d, tp)
    n = len(d) // tp
    expected = 0.0 if tp == 1 or n == 0 else np.mean(
        [d[i * tp] != d[i * tp + tp - 1] for i in range(n)])
    assert share == pytest.approx(expected)


PER_GROUP = SlowdownModel(GB200, HIER["gb200"])
ALL_SPLIT = SlowdownModel(GB200, HIER["gb200"], "all-split")
MODEL = len(job_models()) - 2


@settings(max_examples=20)
@given(piece=st.sampled_from([1, 2, 4, 6, 12, 20, 36]), share=st.floats(0.0, 1.0),
       gpus=st.sampled_from([64, 128]))
def test_per_group_pricing_is_never_slower_than_all_split_and_equal_when_all_split(
        piece, share, gpus):
    tp = 8
    cls = PlacementClass(piece, max(2, gpus // max(piece, 1)), 0, 1, 1, 1.0, share)
    per, every = PER_GROUP.slowdown(MODEL, gpus, tp, cls), ALL_SPLIT.slowdown(MODEL, gpus,
                                                                               tp, cls)
    assert per <= every * (1 + 1e-12)
    full = PlacementClass(piece, cls.domains, 0, 1, 1, 1.0, 1.0)
    assert PER_GROUP.slowdown(MODEL, gpus, tp, full) == pytest.approx(
        ALL_SPLIT.slowdown(MODEL, gpus, tp, full))
    if cls.tp_crosses(tp) and share < 1.0:
        inside = PER_GROUP.slowdown(MODEL, gpus, tp, PlacementClass(
            8 * max(1, piece // 8), cls.domains, 0, 1, 1, 1.0, 0.0))
        assert per == pytest.approx(min(inside, every) + share * (every - min(inside, every)))


def test_one_straddling_group_costs_less_than_all_split():
    """72 + 56 GPUs of a 128-GPU TP-8 job, shifted by 4: one TP group of 16 straddles."""
    state = Occupancy(HIER["gb200"])
    chosen = np.arange(68, 68 + 128)  # 4 GPUs in rack 0, 72 in rack 1, 52 in rack 2
    cls = classify(chosen, state, tp=8)
    assert cls.tp_crosses(8) and 0 < cls.split_share < 1
    assert cls.split_share == pytest.approx(2 / 16)  # groups at 68-75 and 140-147
    per, every = PER_GROUP.slowdown(MODEL, 128, 8, cls), ALL_SPLIT.slowdown(MODEL, 128, 8, cls)
    assert 1.0 <= per < every


def test_unknown_pricing_is_an_input_error():
    with pytest.raises(InputError, match="--pricing"):
        SlowdownModel(GB200, HIER["gb200"], "bogus")
