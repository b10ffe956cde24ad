"""The short list of nccl-tests runs that pins the model's parameters on one cluster.

Per tier of the cluster's fabric, innermost first, the runs whose result depends on that
tier's efficiency table (``supernode.collectives.efficiency``: per-step latency α, the
Simple protocol's large-message efficiency η and ramp S_half, LL128's efficiency, the
in-network efficiency):

* scale-up, one whole domain: ``all_reduce_perf`` (NVLS where the switch reduces:
  in-network efficiency; else ring/tree: η, S_half, LL128), ``all_gather_perf`` (rings
  only: η and S_half apart from NVLS — the parameter the packaged tables could not
  identify from NVLS-only data), ``alltoall_perf`` (direct exchange), and
  ``sendrecv_perf`` between two ranks (α and the point-to-point rate);
* each scale-out tier, one rank per domain (``NCCL_TESTS_SPLIT="MOD g"`` on two
  domains, or two leaves for the tier above the leaf): ``all_reduce_perf`` and
  ``sendrecv_perf`` — every rail at once, the way a data-parallel group uses it;
* the whole hierarchy on two domains: ``all_reduce_perf`` on every rank, the check that
  the tiers compose (it pins nothing new).

Sizes run from 8 bytes (latency-bound) by factors of 4 up to 4 × the size at which the
model reaches 95 % of its large-message busbw, at least 64 MiB, at most
``min(8 GiB, memory / 8)`` per buffer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from supernode.collectives import busbw_bytes_per_s, collective_time_s, consecutive_view, group_view
from supernode.collectives.efficiency import FITTABLE, get_table, load_efficiency_tables
from supernode.collectives.fabric import Fabric
from supernode.errors import InputError
from supernode.estimate.system import system_from_cluster
from supernode.spec.resolved import Cluster

MIN_BYTES = 8
FACTOR = 4
SATURATION = 0.95
FLOOR_MAX_BYTES = 64 * 2**20
CAP_MAX_BYTES = 8 * 2**30
PROGRAMS = {"all_reduce": "all_reduce_perf", "all_gather": "all_gather_perf",
            "all_to_all": "alltoall_perf", "p2p": "sendrecv_perf"}


@dataclass(frozen=True)
class BenchRun:
    """One nccl-tests command of the plan."""

    name: str
    op: str
    program: str
    processes: int
    hosts: int
    ranks_per_host: int
    group_ranks: int
    split: str | None
    min_bytes: int
    max_bytes: int
    tier: str
    pins: tuple[str, ...]
    hosts_hint: str
    hostfile: str
    why: str


def _pins(fabric: Fabric, op: str, ranks: int, tier_index: int) -> tuple[str, ...]:
    tables = load_efficiency_tables()
    tier = fabric.tiers[tier_index]
    table = get_table(tables, tier.efficiency)
    names = [p for p in FITTABLE if p != "in_network_efficiency"]
    if op == "all_reduce" and tier.in_network_reduction and table.in_network_efficiency:
        names.append("in_network_efficiency")
    if op == "p2p":
        names = ["step_latency_us", "simple_efficiency", "simple_half_bandwidth_bytes"]
    return tuple(f"{tier.efficiency}.{p}" for p in names)


def _max_bytes(op: str, ranks: int, fabric: Fabric, cap: int) -> int:
    """4 × the smallest power of two reaching 95 % of the model's busbw at ``cap``."""
    sizes = [2**k for k in range(10, cap.bit_length())]
    t, _ = collective_time_s(op, sizes, ranks, fabric)
    busbw = np.asarray(busbw_bytes_per_s(op, sizes, ranks, t))  # an array: sizes is a list
    top = float(busbw[-1])
    reach = next((s for s, b in zip(sizes, busbw, strict=True) if b >= SATURATION * top),
                 sizes[-1])
    return int(min(cap, max(FLOOR_MAX_BYTES, FACTOR * reach)))


def _run(name, op, fabric, group_fabric_, processes, per_host, group, split, tier_index,
         cap, hosts_hint, why, hostfile) -> BenchRun:
    tier = fabric.tiers[tier_index]
    return BenchRun(
        name=name, op=op, program=PROGRAMS[op], processes=processes,
        hosts=max(1, processes // per_host), ranks_per_host=min(per_host, processes),
        group_ranks=group, split=split, min_bytes=MIN_BYTES,
        max_bytes=_max_bytes(op, group, group_fabric_, cap), tier=tier.name,
        pins=_pins(group_fabric_, op, group, min(tier_index, len(group_fabric_.tiers) - 1)),
        hosts_hint=hosts_hint, hostfile=hostfile, why=why)


def bench_plan(cluster: Cluster, *, max_bytes: int | None = None) -> list[BenchRun]:
    """The runs that pin every efficiency-table parameter the cluster's collectives use."""
    system = system_from_cluster(cluster)
    fabric = system.fabric
    cap = int(min(CAP_MAX_BYTES, system.memory_bytes // 8))
    if max_bytes is not None:
        if not FLOOR_MAX_BYTES <= max_bytes <= 2**40:
            raise InputError("--max-bytes", "between 64 MiB and 1 TiB")
        cap = int(max_bytes)
    per_host = cluster.host.accelerators_per_host
    domain = cluster.scale_up.size
    runs: list[BenchRun] = []
    if domain > 1:
        one = consecutive_view(fabric, domain)
        hint = f"{max(1, domain // per_host)} host(s) of one scale-up domain"
        for op, why in (("all_reduce", "one domain, the algorithm NCCL picks"),
                        ("all_gather", "one domain, rings only"),
                        ("all_to_all", "one domain, direct exchange")):
            runs.append(_run(f"scale_up-{op}", op, one, one, domain, per_host, domain, None, 0,
                             cap, hint, why, "one_domain"))
        pair = consecutive_view(fabric, 2)
        runs.append(_run("scale_up-sendrecv", "p2p", pair, pair, 2, per_host, 2, None, 0, cap,
                         "one host (2 GPUs)", "two GPUs of one domain: latency and rate",
                         "one_domain"))
    for index in range(1 if domain > 1 else 0, len(fabric.tiers)):
        tier = fabric.tiers[index]
        inner = fabric.tiers[index - 1].group_size if index else 1
        processes = 2 * inner
        if processes > cluster.accelerators:
            continue
        whole = consecutive_view(fabric, processes)
        stride = inner
        rail = group_view(fabric, ((stride, 2),)) if stride > 1 else whole
        split = f"MOD {stride}" if stride > 1 else None
        first = index == (1 if domain > 1 else 0)
        hint = (f"{processes // per_host} hosts: two scale-up domains" if first else
                f"two groups of {inner} ranks on either side of {tier.name}")
        hostfile = "two_domains" if first else f"across_{tier.name}"
        for op, why in (("all_reduce", "one rank per domain, every rail at once"),
                        ("p2p", "one rank per domain: network latency and rate")):
            runs.append(_run(f"{tier.name}-{'sendrecv' if op == 'p2p' else op}", op, whole,
                             rail, processes, per_host, 2, split, index, cap, hint, why,
                             hostfile))
        if first:
            check = _run(f"{tier.name}-hierarchy-all_reduce", "all_reduce", whole, whole,
                         processes, per_host, processes, None, index, cap, hint,
                         "every rank of two domains: the tiers composed (pins nothing new)",
                         hostfile)
            runs.append(replace(check, pins=()))
    if not runs:
        raise InputError("--cluster", "the cluster has a single accelerator: nothing to run")
    return runs
