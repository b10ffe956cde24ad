"""Measurement sets: what a benchmark run measured, and on which job, in SI units.

A :class:`MeasurementSet` is the importers' output and the input of ``compare`` (and of
``calibrate``): the tool and its version, the job it ran (:class:`JobContext`: ranks,
hosts, devices — from the tool's own header, from the user, or inferred, and said so),
collective results (nccl-tests/rccl-tests rows), link results (perftest), copy results
(nvbandwidth) and what NCCL's debug log said it chose (:class:`NcclRuntime`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Timing:
    """One measured placement of a collective row (seconds, bytes/s)."""

    time_s: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    wrong: int | None = None
    iteration_min_s: float | None = None
    iteration_max_s: float | None = None
    iteration_p99_s: float | None = None


@dataclass(frozen=True)
class CollectiveResult:
    """One nccl-tests row: a message size and its out-of-place and in-place timings.

    ``message_bytes`` follows nccl-tests (``supernode.collectives.busbw``): the buffer per
    rank for all_reduce, the total output for all_gather, each rank's total send for
    all_to_all. ``line`` is the row's line in the source file.
    """

    message_bytes: int
    count: int | None
    dtype: str | None
    redop: str | None
    root: int | None
    out_of_place: Timing | None
    in_place: Timing | None
    line: int | None = None

    def timing(self, placement: str = "out_of_place") -> Timing | None:
        """The timing of ``placement`` (``out_of_place`` or ``in_place``)."""
        return self.out_of_place if placement == "out_of_place" else self.in_place


@dataclass(frozen=True)
class RankInfo:
    """One line of nccl-tests' ``# Using devices`` list."""

    rank: int
    host: str
    device: int
    bus_id: str
    device_name: str
    group: int = 0


@dataclass(frozen=True)
class JobContext:
    """The job a measurement ran on, as far as the output (or the user) tells.

    ``ranks_source`` says where ``ranks`` came from (``rank list``, ``--ranks``,
    ``count column``, ``busbw/algbw``, ``NCCL log``); ``hosts`` are the host names the
    output shows, in rank order (an elided device list shows only some), ``host_count``
    how many hosts the job had (shown or inferred). ``ranks_per_domain``: ranks of the
    job in each scale-up domain, when given. With ``NCCL_TESTS_SPLIT`` the job's
    ``processes`` run ``groups`` concurrent collectives of ``ranks`` each, the members of
    one group ``group_stride`` ranks apart (1: consecutive).
    """

    ranks: int | None = None
    ranks_source: str = "unknown"
    hosts: tuple[str, ...] = ()
    host_count: int | None = None
    ranks_per_host: int | None = None
    device_names: tuple[str, ...] = ()
    ranks_listed: tuple[RankInfo, ...] = ()
    ranks_per_domain: int | None = None
    processes: int | None = None
    groups: int = 1
    group_stride: int | None = 1
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TuningChoice:
    """What NCCL's tuner picked for one call (``NCCL_DEBUG_SUBSYS=TUNING``)."""

    op: str | None
    message_bytes: int
    algorithm: str
    protocol: str
    channels: int | None = None
    line: int | None = None


@dataclass(frozen=True)
class NcclRuntime:
    """What an ``NCCL_DEBUG=INFO`` log says about the run (empty fields: not logged)."""

    version: str | None = None
    ranks: int | None = None
    nodes: int | None = None
    local_ranks: int | None = None
    mnnvl: bool | None = None
    coll_channels: int | None = None
    nvls_channels: int | None = None
    p2p_channels: int | None = None
    rings: tuple[tuple[int, ...], ...] = ()
    trees: int = 0
    network: str | None = None
    hcas: tuple[str, ...] = ()
    sharp: bool | None = None
    nvls_available: bool | None = None
    transports: Any = field(default_factory=lambda: MappingProxyType({}))
    gdr: bool | None = None
    env: Any = field(default_factory=lambda: MappingProxyType({}))
    tuning: tuple[TuningChoice, ...] = ()
    warnings: tuple[str, ...] = ()
    lines: int = 0

    @property
    def empty(self) -> bool:
        """True when the log held no NCCL line at all."""
        return self.lines == 0


@dataclass(frozen=True)
class LinkResult:
    """One perftest row (``ib_write_bw`` / ``ib_write_lat`` and kin); SI units."""

    test: str
    message_bytes: int
    iterations: int
    bw_peak_bytes_per_s: float | None = None
    bw_average_bytes_per_s: float | None = None
    message_rate_per_s: float | None = None
    t_min_s: float | None = None
    t_max_s: float | None = None
    t_typical_s: float | None = None
    t_avg_s: float | None = None
    t_stdev_s: float | None = None
    t_p99_s: float | None = None
    t_p999_s: float | None = None
    line: int | None = None


@dataclass(frozen=True)
class CopyResult:
    """One nvbandwidth test case: its matrix and SUM line in SI (``unit``: ``bytes_per_s``
    for bandwidth cases, ``s`` for latency cases; None for N/A cells)."""

    test: str
    description: str | None
    row_labels: tuple[str, ...]
    column_labels: tuple[str, ...]
    values: tuple[tuple[float | None, ...], ...]
    sum_value: float | None
    unit: str = "bytes_per_s"
    line: int | None = None


@dataclass(frozen=True)
class MeasurementSet:
    """Everything one results file (or one test block of it) measured."""

    source: str
    tool: str
    tool_version: str | None = None
    library_version: str | None = None
    op: str | None = None
    op_source: str = "unknown"
    job: JobContext = field(default_factory=JobContext)
    collectives: tuple[CollectiveResult, ...] = ()
    links: tuple[LinkResult, ...] = ()
    copies: tuple[CopyResult, ...] = ()
    nccl: NcclRuntime = field(default_factory=NcclRuntime)
    attributes: Any = field(default_factory=lambda: MappingProxyType({}))
    notes: tuple[str, ...] = ()
