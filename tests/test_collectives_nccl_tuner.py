"""NCCL's own tuning model across NVL72 domains (collectives/nccl_tuner.py): its graphs
keep the search's NVLink budget, its choice is the argmin of its own times, and the
table docs/collectives.md shows is what the module prints.

Also the reference check docs/collectives.md states: from 16 MiB up, on 2-64 domains of
the GB200 NVL72 SuperPOD preset, the collective model's automatic all-reduce choice is
the algorithm NCCL's tuner picks (the divergence below 16 MiB is documented there).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import scale_cluster
from supernode.collectives import choose, consecutive_view, fabric_from_cluster
from supernode.collectives import nccl_tuner as nt

DOC = Path(__file__).resolve().parents[1] / "docs" / "collectives.md"
C = nt.constants()
NVLINK = 18 * C.nvlink_bw_per_link_GBps
NIC = min(C.pcie_gen5_x16_GBps, 400e3 / C.net_mbps_per_GBps)


def test_graphs_fill_the_nvlink_budget_and_no_more() -> None:
    """Ring: every channel crosses every GPU's NVLink once each way; NVLS: the head twice.
    One more channel at the found speed would not fit (or the channel cap is reached)."""
    ring = nt.ring_graph(NVLINK, NIC, C)
    assert ring.channels * ring.bw_intra_GBps <= NVLINK + 1e-6
    assert ring.bw_inter_GBps <= NIC
    assert ((ring.channels + 1) * ring.bw_intra_GBps > NVLINK
            or ring.channels == C.ring_max_channels)
    nvls = nt.nvls_graph(NVLINK, NIC, 72, C)
    assert (nvls.channels + 1) * nvls.bw_intra_GBps <= NVLINK + 1e-6
    assert nvls.bw_intra_GBps <= nvls.bw_inter_GBps <= min(NIC, 2 * nvls.bw_intra_GBps)
    assert nvls.channels == C.nvls_max_channels or \
        (nvls.channels + 2) * nvls.bw_intra_GBps > NVLINK


def test_fewer_nvlinks_give_fewer_or_slower_channels() -> None:
    """Halving a GPU's NVLink bandwidth never raises the graph's total bandwidth."""
    for build in (lambda v: nt.ring_graph(v, NIC, C), lambda v: nt.nvls_graph(v, NIC, 72, C)):
        full, half = build(NVLINK), build(NVLINK / 2)
        assert half.channels * half.bw_intra_GBps < full.channels * full.bw_intra_GBps


@pytest.mark.parametrize("domains", [2, 3, 8, 20, 64])
@pytest.mark.parametrize("size", [2**20, 2**29, 2**34])
def test_pick_is_the_least_modelled_time(domains: int, size: int) -> None:
    pick = nt.nvl72_picks(domains, size)
    assert pick.time_s == min(pick.times_s.values())
    assert pick.times_s[f"{pick.algorithm}/{pick.protocol}"] == pick.time_s
    assert pick.busbw_Bps > 0


def test_ring_latency_grows_with_ranks_and_nvls_tree_bandwidth_does_not_fall() -> None:
    """tuning.cc: the ring pays 2(n-1) steps, NVLS_TREE 2·log2i(m) network steps; the
    NVLS_TREE bandwidth is the same from 3 domains on (intra-domain bound)."""
    ring_lat, nvls_bw = [], []
    ring, nvls = nt.ring_graph(NVLINK, NIC, C), nt.nvls_graph(NVLINK, NIC, 72, C)
    for domains in (3, 4, 8, 20, 64):
        tuned = {(t.algorithm, t.protocol): t for t in nt.tune(domains, 72, ring, nvls, C)}
        ring_lat.append(tuned["ring", "simple"].latency_us)
        n = domains * 72
        nvls_bw.append(tuned["nvls_tree", "simple"].bw_GBps * 2 * (n - 1) / n)
    assert ring_lat == sorted(ring_lat) and ring_lat[0] < ring_lat[-1]
    assert max(nvls_bw) - min(nvls_bw) < 1e-6 * max(nvls_bw)


def test_doc_table_is_the_module_output() -> None:
    """Golden: when it fails, rerun ``python -m supernode.collectives.nccl_tuner`` and
    paste its output into docs/collectives.md."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert nt.main() == 0
    text = DOC.read_text(encoding="utf-8")
    for line in out.getvalue().strip().splitlines():
        if line.strip():
            assert line in text, f"docs/collectives.md lacks: {line}"


def test_model_picks_nccls_algorithm_from_16_mib() -> None:
    spec = load_cluster_spec("gb200-nvl72-superpod")
    base = fabric_from_cluster(scale_cluster(spec, 64 * 72).cluster)[0]
    sizes = [2**24, 2**29, 2**34]
    for domains in (2, 3, 4, 8, 20, 64):
        n = domains * 72
        ours = choose("all_reduce", [float(s) for s in sizes], n, consecutive_view(base, n))
        for k, size in enumerate(sizes):
            assert str(ours.algorithm[k]) == nt.nvl72_picks(domains, size).algorithm, \
                (domains, size)
