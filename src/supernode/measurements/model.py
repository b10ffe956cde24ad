"""Measurement sets: what a benchmark run measured, and on which job, in SI units.

A :class:`MeasurementSet` is the importers' output and the input of ``compare`` (and of
``calibrate``): the tool and its version, the job it ran (:class:`JobContext`: ranks,
hosts, devices — from the tool's own header, from the user, or inferred, and said so),
collective results (nccl-tests/rccl-tests rows), link results (perftest), copy results
(nvbandwidth) and what NCCL's debug log said it chose (:class:`NcclRuntime`).

Each record is declared once, here: a field's :func:`saved` metadata says how the
measurement-set file (:mod:`supernode.measurements.setfile`) stores it — under which
name, in which unit, within which bounds — and that file's schema and both conversions
are derived from these declarations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from supernode.units import GBIT_PER_S, GBYTE_PER_S, NS, US

#: Key of a field's :class:`Saved` entry in its ``dataclasses.field`` metadata.
SAVED = "supernode.saved"
#: ``Saved.file_default`` of a field whose file default is the record's.
RECORD_DEFAULT: Any = object()


@dataclass(frozen=True)
class Saved:
    """How the set file stores one field of a record.

    ``name``: the key in the file (default: the field's name). ``scale``: SI units per
    file unit (``US`` for a ``*_us`` key: file value x scale = the field's value); a
    mapping is keyed by the record's ``by`` field (the unit of a copy matrix). ``values``:
    the field's values -> the file's (its file type is then their ``Literal``). ``ge``,
    ``doc``: the file field's lower bound and description (in file units). ``kept``: False
    for a field the file leaves out (the file refuses it as unknown). ``omit_none``: the
    key is written only when the value is not None. ``file_default``: the file's default
    for a field the record requires.
    """

    name: str | None = None
    scale: float | Mapping[str, float] | None = None
    by: str | None = None
    values: Mapping[str, str] | None = None
    ge: float | None = None
    doc: str | None = None
    kept: bool = True
    omit_none: bool = False
    file_default: Any = RECORD_DEFAULT


def saved(name: str | None = None, scale: float | Mapping[str, float] | None = None, *,
          default: Any = MISSING, default_factory: Any = MISSING, **how: Any) -> Any:
    """A record field (``dataclasses.field``) with its :class:`Saved` entry; ``default``
    and ``default_factory`` are the record's (and the file's) default."""
    return field(default=default, default_factory=default_factory,
                 metadata={SAVED: Saved(name, scale, **how)})


def _optional_us(name: str, doc: str, **how: Any) -> Any:
    """An optional non-negative time field (seconds), saved as ``name`` in microseconds."""
    return saved(name, US, default=None, ge=0, doc=doc, **how)


def _frozen_map() -> Mapping[str, Any]:
    return MappingProxyType({})


#: SI units per file unit of a copy matrix, by its unit.
COPY_SCALE = MappingProxyType({"bytes_per_s": GBYTE_PER_S, "s": NS})


@dataclass(frozen=True)
class Timing:
    """One measured placement of a collective row (seconds, bytes/s)."""

    #: Measured figures: a small message's 0.00 GB/s is kept (no lower unit limit).
    measured_figures: ClassVar[bool] = True

    time_s: float = saved("time_us", US, ge=0, doc="Time per operation, microseconds.")
    algbw_bytes_per_s: float = saved("algbw_gbyte_per_s", GBYTE_PER_S, ge=0,
                                     doc="Algorithm bandwidth, GB/s.")
    busbw_bytes_per_s: float = saved("busbw_gbyte_per_s", GBYTE_PER_S, ge=0,
                                     doc="Bus bandwidth, GB/s.")
    wrong: int | None = saved(default=None, ge=0, doc="Wrong elements (null: not checked).")
    iteration_min_s: float | None = _optional_us("iteration_min_us", "Fastest iteration, us.",
                                                 omit_none=True)
    iteration_max_s: float | None = _optional_us("iteration_max_us", "Slowest iteration, us.",
                                                 omit_none=True)
    iteration_p99_s: float | None = _optional_us("iteration_p99_us", "p99 iteration, us.",
                                                 omit_none=True)


@dataclass(frozen=True)
class CollectiveResult:
    """One nccl-tests row: a message size and its out-of-place and in-place timings.

    ``message_bytes`` follows nccl-tests (``supernode.collectives.busbw``): the buffer per
    rank for all_reduce, the total output for all_gather, each rank's total send for
    all_to_all. ``line`` is the row's line in the source file.
    """

    message_bytes: int = saved(ge=0, doc="nccl-tests size column, bytes.")
    count: int | None = saved(default=None, ge=0, doc="nccl-tests count column, elements.")
    dtype: str | None = saved(default=None, doc="Data type.")
    redop: str | None = saved(default=None, doc="Reduction (none for data movement).")
    root: int | None = saved(default=None, doc="Root rank (-1: none).")
    out_of_place: Timing | None = saved(default=None, doc="Out-of-place run.")
    in_place: Timing | None = saved(default=None, doc="In-place run.")
    line: int | None = saved(default=None, ge=1, doc="Line in the original output.")

    def timing(self, placement: str = "out_of_place") -> Timing | None:
        """The timing of ``placement`` (``out_of_place`` or ``in_place``)."""
        return self.out_of_place if placement == "out_of_place" else self.in_place


@dataclass(frozen=True)
class RankInfo:
    """One line of nccl-tests' ``# Using devices`` list (not saved: the set keeps the
    job's hosts and devices)."""

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

    ranks: int | None = saved(default=None, ge=1, doc="Ranks of the job.")
    ranks_source: str = saved(default="unknown", doc="Where the rank count came from.")
    hosts: tuple[str, ...] = saved(default=(), doc="Host names in rank order.")
    host_count: int | None = saved(default=None, ge=1, doc="Hosts of the job.")
    ranks_per_host: int | None = saved(default=None, ge=1, doc="Ranks on each host.")
    device_names: tuple[str, ...] = saved(default=(), doc="Devices reported.")
    ranks_listed: tuple[RankInfo, ...] = saved(default=(), kept=False)
    ranks_per_domain: int | None = saved(default=None, ge=1,
                                         doc="Ranks per scale-up domain.")
    processes: int | None = saved(default=None, ge=1, doc="All ranks of the run.")
    groups: int = saved(default=1, ge=1, doc="Concurrent groups (NCCL_TESTS_SPLIT).")
    group_stride: int | None = saved(default=1, ge=1, doc="Rank distance inside a group.")
    notes: tuple[str, ...] = saved(default=(), doc="How the job was inferred.")


@dataclass(frozen=True)
class TuningChoice:
    """What NCCL's tuner picked for one call (``NCCL_DEBUG_SUBSYS=TUNING``)."""

    op: str | None = saved(file_default=None, doc="Collective.")
    message_bytes: int = saved(ge=0, doc="Bytes of the call.")
    algorithm: str = saved(doc="NCCL algorithm.")
    protocol: str = saved(doc="NCCL protocol.")
    channels: int | None = saved(default=None, ge=0, doc="Channels used.")
    line: int | None = saved(default=None, kept=False)


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
    transports: Mapping[str, int] = field(default_factory=_frozen_map)
    gdr: bool | None = None
    env: Mapping[str, str] = field(default_factory=_frozen_map)
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

    measured_figures: ClassVar[bool] = True

    test: str = saved(doc="perftest program (ib_write_bw ...).")
    message_bytes: int = saved(ge=0, doc="Message size, bytes.")
    iterations: int = saved(ge=0, doc="Iterations.")
    bw_peak_bytes_per_s: float | None = saved("bw_peak_gbit_per_s", GBIT_PER_S, default=None,
                                              ge=0, doc="Peak bandwidth, Gb/s.")
    bw_average_bytes_per_s: float | None = saved("bw_average_gbit_per_s", GBIT_PER_S,
                                                 default=None, ge=0, doc="Average, Gb/s.")
    message_rate_per_s: float | None = saved("message_rate_mpps", 1e6, default=None, ge=0,
                                             doc="Messages, millions/s.")
    t_min_s: float | None = _optional_us("t_min_us", "Minimum latency, us.")
    t_max_s: float | None = _optional_us("t_max_us", "Maximum latency, us.")
    t_typical_s: float | None = _optional_us("t_typical_us", "Typical (median), us.")
    t_avg_s: float | None = _optional_us("t_avg_us", "Mean latency, us.")
    t_stdev_s: float | None = _optional_us("t_stdev_us", "Standard deviation, us.")
    t_p99_s: float | None = _optional_us("t_p99_us", "99th percentile, us.")
    t_p999_s: float | None = _optional_us("t_p999_us", "99.9th percentile, us.")
    line: int | None = saved(default=None, ge=1, doc="Line in the original output.")


@dataclass(frozen=True)
class CopyResult:
    """One nvbandwidth test case: its matrix and SUM line in SI (``unit``: ``bytes_per_s``
    for bandwidth cases, ``s`` for latency cases; None for N/A cells). Saved in GB/s, or
    ns for latency cases."""

    measured_figures: ClassVar[bool] = True

    test: str = saved(doc="nvbandwidth test case.")
    description: str | None = saved(default=None, doc="Matrix title.")
    row_labels: tuple[str, ...] = saved(default=(), doc="Row labels.")
    column_labels: tuple[str, ...] = saved(default=(), doc="Column labels.")
    values: tuple[tuple[float | None, ...], ...] = saved(scale=COPY_SCALE, by="unit",
                                                         default=(), doc="Matrix.")
    sum_value: float | None = saved("sum", COPY_SCALE, by="unit", default=None,
                                    doc="SUM line value.")
    unit: Literal["bytes_per_s", "s"] = saved(
        default="bytes_per_s", values=MappingProxyType({"bytes_per_s": "gbyte_per_s",
                                                        "s": "ns"}), doc="Value unit.")
    line: int | None = saved(default=None, ge=1, doc="Line in the original output.")


@dataclass(frozen=True)
class MeasurementSet:
    """Everything one results file (or one test block of it) measured."""

    source: str = saved(doc="Results file it came from.")
    tool: str = saved(doc="nccl-tests, rccl-tests, perftest, nvbandwidth, nccl-debug.")
    tool_version: str | None = None
    library_version: str | None = None
    op: str | None = None
    op_source: str = "unknown"
    job: JobContext = field(default_factory=JobContext)
    collectives: tuple[CollectiveResult, ...] = ()
    links: tuple[LinkResult, ...] = ()
    copies: tuple[CopyResult, ...] = ()
    nccl: NcclRuntime = field(default_factory=NcclRuntime)
    attributes: Mapping[str, Any] = field(default_factory=_frozen_map)
    notes: tuple[str, ...] = ()
