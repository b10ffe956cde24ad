"""Where a measured job sat on the cluster: its ranks on accelerators, and the fabric its
collectives see.

nccl-tests prints hosts, not racks. The job's hosts are taken to fill the fewest scale-up
domains that hold them, split evenly (32 hosts on 18-host NVL72 racks: two racks of 16 —
how OCI's published runs were laid out); ``--ranks-per-domain`` overrides it. Ranks
fill hosts in order (mpirun's by-slot mapping), hosts fill each domain from its first
slot. That gives every job rank an accelerator of the cluster (:func:`job_accelerators`);
the ranks of each collective (all of them, or each ``NCCL_TESTS_SPLIT`` group) are then
member lists, and the fabric they see is the cluster's
(:func:`supernode.estimate.system.system_from_cluster`) seen by those members,
:func:`supernode.collectives.groups.view_from_members`: the same rule the planner's
straddling groups and the simulator's collectives use (the worst group binds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from supernode.collectives.fabric import Fabric
from supernode.collectives.groups import view_from_members
from supernode.errors import InputError
from supernode.estimate.system import system_from_cluster
from supernode.measurements.model import JobContext
from supernode.spec.resolved import Cluster


@dataclass(frozen=True)
class JobPlacement:
    """A job on the cluster: ranks, hosts and domains, and the fabric its collectives see
    (a group view: tier 0 holds the members inside one domain)."""

    ranks: int
    ranks_per_host: int
    hosts: int
    ranks_per_domain: int
    domains: int
    fabric: Fabric
    notes: tuple[str, ...] = ()


def _largest_divisor_at_most(n: int, limit: int, step: int) -> int:
    for d in range(min(limit, n), 0, -1):
        if n % d == 0 and (d % step == 0 or d < step):
            return d
    return 1


def _ranks_per_domain(cluster: Cluster, n: int, per_host: int, hosts: int,
                      given: int | None, notes: list[str]) -> int:
    size = cluster.scale_up.size
    if given is not None:
        if given > size or given > n or n % given:
            raise InputError("--ranks-per-domain", f"{given} must divide the job's {n} ranks "
                                                   f"and fit a {size}-accelerator domain")
        return given
    hosts_per_domain = max(1, size // cluster.host.accelerators_per_host)
    domains = math.ceil(hosts / hosts_per_domain)
    balanced = math.ceil(hosts / domains) * per_host
    rpd = min(balanced, size, n)
    if n % rpd:
        rpd = _largest_divisor_at_most(n, rpd, per_host)
        notes.append(f"hosts do not split evenly over {domains} domains: costed as "
                     f"{n // rpd} domains of {rpd} ranks (conservative)")
    if domains > 1:
        notes.append(f"{hosts} hosts split evenly over {n // rpd} scale-up domains of {size}: "
                     f"{rpd} ranks each (--ranks-per-domain to change)")
    return rpd


def job_accelerators(cluster: Cluster, total: int, per_host: int, ranks_per_domain: int
                     ) -> np.ndarray:
    """Accelerator index of every job rank, in rank order.

    ``ranks_per_domain`` ranks in each domain, the domains taken in order; inside one,
    whole hosts from its first slot, ``per_host`` ranks on the first GPUs of each. A
    domain share that is not whole hosts takes the domain's first slots.
    """
    size = max(cluster.scale_up.size, 1)
    per_slot = cluster.host.accelerators_per_host
    domains = -(-total // ranks_per_domain)
    if domains * size > cluster.accelerators:
        raise InputError("--ranks-per-domain", f"{domains} scale-up domains of "
                         f"{ranks_per_domain} ranks needed; {cluster.name} has "
                         f"{cluster.accelerators // size}")
    rank = np.arange(total, dtype=np.int64)
    domain, inside = np.divmod(rank, ranks_per_domain)
    if ranks_per_domain % per_host == 0 and per_slot <= size:
        slot, local = np.divmod(inside, per_host)
        inside = slot * per_slot + local
    return domain * size + inside


def collective_rows(job: JobContext, total: int) -> np.ndarray:
    """Job ranks of each concurrent collective, one row per group (``NCCL_TESTS_SPLIT``:
    ``groups`` rows of ``ranks`` members ``group_stride`` apart; else one row)."""
    n = int(job.ranks or 0)
    if job.groups <= 1:
        return np.arange(n, dtype=np.int64)[None, :]
    if job.group_stride is None:
        raise InputError("RESULTS", "NCCL_TESTS_SPLIT run whose device list is elided: "
                                    "cannot tell which ranks form a group")
    stride = int(job.group_stride)
    start = np.arange(total, dtype=np.int64)
    bases = start[(start // stride) % n == 0]
    rows = bases[:, None] + stride * np.arange(n, dtype=np.int64)[None, :]
    return rows[rows[:, -1] < total]


def place_job(cluster: Cluster, job: JobContext, *, ranks_per_domain: int | None = None
              ) -> JobPlacement:
    """Place the measured job on ``cluster`` (see the module docstring).

    An ``NCCL_TESTS_SPLIT`` run is placed whole (all its processes); each collective then
    sees the fabric of its group, the worst group binding.
    """
    n = job.ranks
    if n is None:
        raise InputError("--ranks", "the output does not say how many ranks ran (no device "
                                    "list, no usable count or busbw column); pass --ranks")
    total = max(job.processes or n, n)
    if total > cluster.accelerators:
        raise InputError("--ranks", f"the job has {total} ranks but {cluster.name} has "
                                    f"{cluster.accelerators} accelerators; describe the "
                                    "cluster it ran on")
    notes: list[str] = []
    host_size = cluster.host.accelerators_per_host
    per_host = job.ranks_per_host or min(host_size, total)
    if job.ranks_per_host is None:
        notes.append(f"ranks per host not in the output: {per_host} assumed (the cluster's "
                     "hosts, filled in order)")
    if per_host > host_size:
        raise InputError("--cluster", f"the output shows {per_host} ranks on one host but "
                                      f"{cluster.name}'s hosts have {host_size} accelerators")
    hosts = job.host_count or math.ceil(total / per_host)
    rpd = _ranks_per_domain(cluster, total, per_host, hosts,
                            ranks_per_domain or job.ranks_per_domain, notes)
    where = job_accelerators(cluster, total, per_host, rpd)
    rows = collective_rows(job, total)
    fabric = view_from_members(system_from_cluster(cluster).fabric, where[rows])
    if job.groups > 1:
        notes.append(f"each group: {n} ranks {job.group_stride} apart")
    return JobPlacement(ranks=n, ranks_per_host=per_host, hosts=hosts, ranks_per_domain=rpd,
                        domains=-(-total // rpd), fabric=fabric, notes=tuple(notes))
