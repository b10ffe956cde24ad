"""Where a measured job sat on the cluster: its ranks per scale-up domain, and its fabric.

nccl-tests prints hosts, not racks. The job's hosts are taken to fill the fewest scale-up
domains that hold them, split evenly (32 hosts on 18-host NVL72 racks: two racks of 16 —
how OCI's published runs were laid out); ``--ranks-per-domain`` overrides it. Ranks
fill hosts in order (mpirun's by-slot mapping). The job's fabric is the cluster's
(:func:`supernode.estimate.system.system_from_cluster`) seen by those ranks: tier ``j``
holds ``min(n, domains_per_group_j × ranks_per_domain)`` of them, the rule of
:func:`supernode.estimate.comm.factored_group_fabric` for a group of consecutive ranks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from supernode.collectives.fabric import Fabric, with_group_size
from supernode.errors import InputError
from supernode.estimate.system import system_from_cluster
from supernode.measurements.model import JobContext
from supernode.spec.resolve import Cluster


@dataclass(frozen=True)
class JobPlacement:
    """A job on the cluster: ranks, hosts and domains, and the fabric its collectives see."""

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


def job_fabric(system: Fabric, domain_size: int, ranks: int, ranks_per_domain: int) -> Fabric:
    """The fabric seen by ``ranks`` consecutive job ranks, ``ranks_per_domain`` per domain."""
    tiers = []
    previous = 1
    for tier in system.tiers:
        domains_per_group = max(1, tier.group_size // max(domain_size, 1))
        members = min(ranks, domains_per_group * ranks_per_domain)
        if tier is system.tiers[-1]:
            members = ranks
        if members > previous:
            tiers.append(with_group_size(tier, members))
            previous = members
        if previous >= ranks:
            break
    if not tiers:
        tiers.append(with_group_size(system.tiers[0], 1))
    return Fabric(tuple(tiers))


def place_job(cluster: Cluster, job: JobContext, *, ranks_per_domain: int | None = None
              ) -> JobPlacement:
    """Place the measured job on ``cluster`` (see the module docstring).

    An ``NCCL_TESTS_SPLIT`` run is placed whole (all its processes); each collective then
    sees the fabric of one group, members ``group_stride`` apart
    (:func:`supernode.estimate.comm.group_fabric`).
    """
    from supernode.estimate.comm import group_fabric

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
    system = system_from_cluster(cluster).fabric
    fabric = job_fabric(system, cluster.scale_up.size, total, rpd)
    if job.groups > 1:
        if job.group_stride is None:
            raise InputError("RESULTS", "NCCL_TESTS_SPLIT run whose device list is elided: "
                                        "cannot tell which ranks form a group")
        fabric = group_fabric(fabric, job.group_stride, n)
        notes.append(f"each group: {n} ranks {job.group_stride} apart")
    return JobPlacement(ranks=n, ranks_per_host=per_host, hosts=hosts, ranks_per_domain=rpd,
                        domains=total // rpd, fabric=fabric, notes=tuple(notes))
