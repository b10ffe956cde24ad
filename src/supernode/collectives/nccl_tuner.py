"""NCCL's own tuning model for all-reduce across multi-node NVLink domains, as its code has it.

Usage: ``python -m supernode.collectives.nccl_tuner`` (the table docs/collectives.md shows).

NCCL runs the algorithm its own model says is fastest (``src/graph/tuning.cc``
``ncclTopoTuneModel``, ``ncclTopoGetAlgoTime``; the argmin in ``src/enqueue.cc``
``topoGetAlgoInfo``). This module evaluates that model over ``domains`` NVLink domains
(MNNVL: one NCCL node per domain, ``ppn`` GPUs each) from the graphs NCCL's search finds
there (``src/graph/search.cc`` ``ncclTopoCompute``: the speed walk over
``sm100SpeedArrayInter`` within each GPU's NVLink budget). Constants:
``data/collectives/nccl_tuner.yaml``, each with its line; base latencies: ``efficiency.yaml``
(the same NCCL table). It is the reference the collective model's automatic choice is
checked against (docs/collectives.md); it prices nothing itself. Units are NCCL's inside
(GB/s, µs, as the cited lines); the public results are SI.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import Field

from supernode.collectives.efficiency_file import read_efficiency_file
from supernode.spec.base import StrictModel
from supernode.spec.loader import read_document, validate_document
from supernode.units import GBYTE_PER_S, US

PROTOCOLS = ("ll", "ll128", "simple")


class HwLatency(StrictModel):
    """hwLatencies rows (µs, [LL, LL128, Simple]) of one hardware class."""

    tree: tuple[float, float, float]
    ring: tuple[float, float, float]
    nvls_tree: tuple[float, float, float]


class TunerConstants(StrictModel):
    """``data/collectives/nccl_tuner.yaml``: NCCL's constants, each with its source line."""

    schema_: str = Field(alias="schema")
    nccl_commit: str
    speed_array_inter_GBps: tuple[float, ...]
    speed_drop_floor: float
    ring_max_channels: int
    nvls_max_channels: int
    nvlink_bw_per_link_GBps: float
    pcie_gen5_x16_GBps: float
    net_mbps_per_GBps: float
    nvls_efficiency: float
    hw_latency_us: dict[str, HwLatency]
    ll_max_bw_GBps: tuple[float, float, float]
    per_channel_max_ring_ll128_GBps: tuple[float, float, float]
    per_channel_max_tree_ll128_GBps: tuple[float, float, float]
    per_channel_max_tree_GBps: tuple[float, float, float]
    per_channel_max_nvls_tree_GBps: tuple[float, float, float]
    net_overhead_us: float
    ring_plateau_factor: float
    tree_correction: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]


@lru_cache(maxsize=1)
def constants() -> TunerConstants:
    """The packaged tuner constants, validated."""
    path = Path(str(resources.files("supernode") / "data" / "collectives" / "nccl_tuner.yaml"))
    return validate_document(read_document(path), TunerConstants, source=str(path))


@dataclass(frozen=True)
class Graph:
    """One search graph: channels and per-channel bandwidths (GB/s, NCCL's bwIntra/bwInter)."""

    channels: int
    bw_intra_GBps: float
    bw_inter_GBps: float


def _fits(budget_GBps: float, speed_GBps: float) -> int:
    """How many channels of ``speed`` a link of ``budget`` carries (search.cc SUB_ROUND: 1e-3)."""
    return int(math.floor(round(budget_GBps / speed_GBps, 3) + 1e-9))


def _start(speeds: tuple[float, ...], max_bw: float, total_bw: float) -> int:
    """search.cc:1170-1173: the first speed not above maxBw nor totalBw."""
    i = 0
    while (speeds[i] > max_bw or speeds[i] > total_bw) and i < len(speeds) - 1:
        i += 1
    return i


def _first_pass(speeds: tuple[float, ...], i: int, channels_at: Callable[[float], int],
                better: Callable[[int, float, Graph], bool], cap: int, target_GBps: float,
                drop_floor: float) -> Graph:
    """Pass 1 of NCCL's graph search (search.cc:1174-1251) from speed index ``i``: at each
    lower speed the channels that fit (``channels_at``), kept when ``better`` than the best
    so far; stops at ``cap`` channels, at ``target_GBps`` in all, or when the next speed
    falls to ``drop_floor`` of the best's."""
    best: Graph | None = None
    while True:
        n = channels_at(speeds[i])
        if n >= 1 and (best is None or better(n, speeds[i], best)):
            best = Graph(n, speeds[i], speeds[i])
        if best is not None and (best.channels == cap
                                 or best.channels * best.bw_inter_GBps >= target_GBps):
            break
        if i == len(speeds) - 1 or (best is not None
                                    and speeds[i + 1] / best.bw_inter_GBps <= drop_floor):
            break
        i += 1
    assert best is not None
    return best


def ring_graph(nvlink_GBps: float, nic_GBps: float, c: TunerConstants) -> Graph:
    """The ring graph of one domain (search.cc:1152-1285, pattern RING): each channel costs
    ``speed`` on every GPU's NVLink each way; pass 1 keeps the largest ``channels × speed``
    down to ``speed_drop_floor`` of the best, pass 2 tries higher speeds at as many
    channels. ``nvlink_GBps``: a GPU's NVLink to the switch, one way; ``nic_GBps``: maxBw."""
    speeds = c.speed_array_inter_GBps
    best = _first_pass(speeds, _start(speeds, nic_GBps, nvlink_GBps),
                       lambda speed: min(c.ring_max_channels, _fits(nvlink_GBps, speed)),
                       lambda n, speed, b: n * speed > b.channels * b.bw_intra_GBps,
                       c.ring_max_channels, nvlink_GBps, c.speed_drop_floor)
    j = speeds.index(best.bw_inter_GBps)
    while j > 0 and speeds[j - 1] <= nic_GBps and \
            _fits(nvlink_GBps, speeds[j - 1]) >= best.channels:
        j -= 1
        best = Graph(best.channels, speeds[j], speeds[j])
    return best


def nvls_graph(nvlink_GBps: float, nic_GBps: float, gpus: int, c: TunerConstants) -> Graph:
    """The NVLS graph of one domain (search.cc:410-443, 450-454, 1274-1278): a channel per
    head GPU (each with its own NIC), costing ``bwIntra`` on every GPU's NVLink each way and
    twice on the head's; more channels always win (up to NCCL_MAX_NVLS_ARITY); pass 2 then
    raises ``bwInter`` alone while under twice ``bwIntra`` and within the NIC path."""
    speeds = c.speed_array_inter_GBps
    total = nvlink_GBps * gpus / (gpus - 1)  # search.cc:1167-1168, non-ring patterns
    cap = min(c.nvls_max_channels, gpus)
    best = _first_pass(speeds, _start(speeds, nic_GBps, total),
                       lambda speed: min(cap, _fits(nvlink_GBps, speed) - 1),
                       lambda n, speed, b: (n > b.channels
                                            or n * speed > b.channels * b.bw_inter_GBps),
                       cap, total, c.speed_drop_floor)
    j = speeds.index(best.bw_inter_GBps)
    while j > 0 and best.bw_inter_GBps < 2 * best.bw_intra_GBps and speeds[j - 1] <= nic_GBps:
        j -= 1
        best = Graph(best.channels, best.bw_intra_GBps, speeds[j])
    return best


@dataclass(frozen=True)
class Tuned:
    """NCCL's model of one (algorithm, protocol): bandwidth (GB/s of algbw) and latency (µs)."""

    algorithm: str
    protocol: str
    bw_GBps: float
    latency_us: float


def _log2i(n: int) -> int:
    return n.bit_length() - 1


def tune(domains: int, ppn: int, ring: Graph, nvls: Graph, c: TunerConstants) -> list[Tuned]:
    """``ncclTopoTuneModel`` for all-reduce (tuning.cc:259-438), Blackwell, non-x86 host
    (Grace), one node per NVLink domain; the tree graph is the ring's (init.cc:1184-1185
    asks it for the ring's channel count, and NVLink allows no more per channel), a
    balanced tree (no ×0.85, :336); graph latencyInter 0 (InfiniBand: net_ib/init.cc:558)."""
    n_ranks = domains * ppn
    index2 = min(domains, 3) - 1
    nsteps = 2 * (n_ranks - 1)
    n_inter = 0 if domains == 1 else 2 * (domains - 1)
    base = read_efficiency_file().base_latency_us
    hw_intra = c.hw_latency_us["nvlink"]
    hw_net = c.hw_latency_us["net"]
    ll_max = c.ll_max_bw_GBps[index2]
    out: list[Tuned] = []
    for p, proto in enumerate(PROTOCOLS):
        # ring (tuning.cc:306, 324-329, 393-413)
        bw = ring.channels * (ring.bw_intra_GBps if domains <= 2 else ring.bw_inter_GBps)
        if proto == "ll":
            bw = min(ll_max, bw * 0.5)
        elif proto == "ll128":
            bw = min(bw * 0.92, ring.channels * c.per_channel_max_ring_ll128_GBps[index2])
        overhead = c.net_overhead_us * (3 if proto == "simple" else 1) if domains > 1 else 0.0
        intra = max(hw_intra.ring[p], overhead)
        inter = hw_net.ring[p]
        lat = base["ring"][proto] + (nsteps - n_inter) * intra + n_inter * inter
        out.append(Tuned("ring", proto, bw * n_ranks / nsteps, lat))
        # tree (tuning.cc:330-336, 414-417)
        bw = ring.channels * (ring.bw_intra_GBps if domains <= 2 else ring.bw_inter_GBps)
        bw = min(bw * 0.92, ring.channels * c.per_channel_max_tree_GBps[index2])
        if proto == "ll":
            bw = min(bw / 3.8, ll_max)
        elif proto == "ll128":
            bw = min(bw * (7.0 / 9.0 if domains == 1 else 120.0 / 128.0),
                     ring.channels * c.per_channel_max_tree_ll128_GBps[index2])
        lat = base["tree"][proto] + 2 * ((ppn - 1) * hw_intra.tree[p]
                                         + _log2i(domains) * hw_net.tree[p])
        out.append(Tuned("tree", proto, bw * 0.5, lat))
    # NVLS_TREE, Simple only (tuning.cc:301, 307-323, 427-428); needs two domains (:502)
    if domains >= 2 and nvls.channels >= 2:
        intra_bw = nvls.bw_intra_GBps * c.nvls_efficiency * (nvls.channels - 1) / nvls.channels * 2
        inter_bw = nvls.bw_inter_GBps * (2 if domains <= 2 else 1)
        bw = nvls.channels * min(intra_bw, inter_bw, c.per_channel_max_nvls_tree_GBps[index2])
        lat = (base["nvls_tree"]["simple"] + hw_intra.nvls_tree[2]
               + 2 * _log2i(domains) * hw_net.nvls_tree[2])
        out.append(Tuned("nvls_tree", "simple", bw * n_ranks / nsteps, lat))
    return out


def algo_time_us(t: Tuned, message_bytes: int, domains: int, ring_channels: int, ppn: int,
                 c: TunerConstants) -> float:
    """``ncclTopoGetAlgoTime`` (tuning.cc:630-655) for one operation: latency plus
    bytes / bandwidth, with the tree's size correction and the ring's plateau factor."""
    bw, lat = t.bw_GBps, t.latency_us
    log_size = _log2i(message_bytes >> 6) if message_bytes >= 64 else -1
    if t.algorithm == "tree" and 0 <= log_size < 23:
        bw *= c.tree_correction[PROTOCOLS.index(t.protocol)][log_size]
    if t.algorithm == "ring" and t.protocol == "simple" and domains > 1 and \
            message_bytes // (ring_channels * domains * ppn) >= 64:
        lat *= c.ring_plateau_factor
    return lat + message_bytes / (1000.0 * bw)


@dataclass(frozen=True)
class Pick:
    """What NCCL's tuner runs for one size: its choice, its predicted time (s) and busbw
    (B/s, nccl-tests), and the ring's and tree's predictions beside it."""

    domains: int
    message_bytes: int
    algorithm: str
    protocol: str
    time_s: float
    busbw_Bps: float
    times_s: dict[str, float]


def nvl72_graphs(ppn: int = 72, links: int = 18, nic_gbps: float = 400.0) -> tuple[Graph, Graph]:
    """The ring (and tree) graph and the NVLS graph of one NVL72-like domain: ``ppn`` GPUs
    of ``links`` NVLink5 links, one ``nic_gbps`` NIC each behind PCIe Gen5 x16."""
    c = constants()
    nvlink = links * c.nvlink_bw_per_link_GBps
    nic = min(c.pcie_gen5_x16_GBps, nic_gbps * 1000.0 / c.net_mbps_per_GBps)
    return ring_graph(nvlink, nic, c), nvls_graph(nvlink, nic, ppn, c)


def nvl72_picks(domains: int, message_bytes: int, *, ppn: int = 72, links: int = 18,
                nic_gbps: float = 400.0) -> Pick:
    """NCCL's all-reduce choice over ``domains`` GB200 NVL72-like domains of ``ppn`` GPUs,
    ``links`` NVLink5 links per GPU and one ``nic_gbps`` NIC per GPU behind PCIe Gen5 x16:
    the (algorithm, protocol) of least modelled time, as ``topoGetAlgoInfo`` takes it."""
    c = constants()
    ring, nvls = nvl72_graphs(ppn, links, nic_gbps)
    times = {f"{t.algorithm}/{t.protocol}":
             algo_time_us(t, message_bytes, domains, ring.channels, ppn, c) * US
             for t in tune(domains, ppn, ring, nvls, c)}
    name = min(times, key=lambda k: times[k])
    n = domains * ppn
    algbw = message_bytes / times[name]
    algorithm, protocol = name.split("/")
    return Pick(domains, message_bytes, algorithm, protocol, times[name],
                algbw * 2 * (n - 1) / n, times)


def main() -> int:
    """Print NCCL's all-reduce choice on 2-64 NVL72 domains at four sizes (markdown)."""
    ring, nvls = nvl72_graphs()
    print(f"ring/tree graph: {ring.channels} channels x {ring.bw_inter_GBps:g} GB/s; "
          f"NVLS graph: {nvls.channels} channels x {nvls.bw_intra_GBps:g}/"
          f"{nvls.bw_inter_GBps:g} GB/s (intra/inter)\n")
    print("| domains | size | NCCL picks | its busbw GB/s | ring/simple busbw | "
          "tree/simple busbw | without NVLS it picks |")
    print("|---:|---:|---|---:|---:|---:|---|")
    for domains in (2, 3, 4, 8, 20, 64):
        for size in (1 << 20, 1 << 24, 1 << 29, 1 << 34):
            pick = nvl72_picks(domains, size)
            rest = {k: t for k, t in pick.times_s.items() if not k.startswith("nvls")}
            off = min(rest, key=lambda k: rest[k])  # NVLS_TREE off: NCCL_NVLS_ENABLE=0
            label = f"{size >> 30} GiB" if size >= 1 << 30 else f"{size >> 20} MiB"
            print(f"| {domains} | {label} | {pick.algorithm}/{pick.protocol} | "
                  f"{_busbw(pick, pick.time_s)} | {_busbw(pick, rest['ring/simple'])} | "
                  f"{_busbw(pick, rest['tree/simple'])} | {off} ({_busbw(pick, rest[off])}) |")
    return 0


def _busbw(pick: Pick, time_s: float) -> str:
    """nccl-tests busbw (GB/s) of ``pick``'s size over NVL72 domains in ``time_s``."""
    n = pick.domains * 72
    return f"{pick.message_bytes / time_s * 2 * (n - 1) / n / GBYTE_PER_S:,.1f}"


if __name__ == "__main__":
    sys.exit(main())
