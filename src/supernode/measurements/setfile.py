"""The measurement-set file (``schema: supernode-measurements/1``): saved sets, file units.

``supernode import results`` writes it; every command that reads results reads it back.
Times in microseconds (``*_us``), bandwidths in GB/s (``*_gbyte_per_s``, 1e9 bytes/s) or
Gb/s (``*_gbit_per_s``, perftest), message sizes in bytes; converted to SI on load.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Literal

import yaml
from pydantic import Field

from supernode.measurements.model import (
    CollectiveResult,
    CopyResult,
    JobContext,
    LinkResult,
    MeasurementSet,
    NcclRuntime,
    Timing,
    TuningChoice,
)
from supernode.spec.base import StrictModel
from supernode.spec.loader import parse_text, validate_document
from supernode.units import GBIT_PER_S, GBYTE_PER_S, US

SCHEMA = "supernode-measurements/1"
_NONNEG = {"ge": 0}


class TimingDoc(StrictModel):
    """One placement of a row (measured: a small message's 0.00 GB/s is kept)."""

    measured_figures = True

    time_us: float = Field(ge=0, description="Time per operation, microseconds.")
    algbw_gbyte_per_s: float = Field(ge=0, description="Algorithm bandwidth, GB/s.")
    busbw_gbyte_per_s: float = Field(ge=0, description="Bus bandwidth, GB/s.")
    wrong: int | None = Field(None, ge=0, description="Wrong elements (null: not checked).")
    iteration_min_us: float | None = Field(None, ge=0, description="Fastest iteration, us.")
    iteration_max_us: float | None = Field(None, ge=0, description="Slowest iteration, us.")
    iteration_p99_us: float | None = Field(None, ge=0, description="p99 iteration, us.")


class CollectiveDoc(StrictModel):
    """One nccl-tests row."""

    message_bytes: int = Field(ge=0, description="nccl-tests size column, bytes.")
    count: int | None = Field(None, ge=0, description="nccl-tests count column, elements.")
    dtype: str | None = Field(None, description="Data type.")
    redop: str | None = Field(None, description="Reduction (none for data movement).")
    root: int | None = Field(None, description="Root rank (-1: none).")
    out_of_place: TimingDoc | None = Field(None, description="Out-of-place run.")
    in_place: TimingDoc | None = Field(None, description="In-place run.")
    line: int | None = Field(None, ge=1, description="Line in the original output.")


class JobDoc(StrictModel):
    """The job the measurement ran on."""

    ranks: int | None = Field(None, ge=1, description="Ranks of the job.")
    ranks_source: str = Field("unknown", description="Where the rank count came from.")
    hosts: list[str] = Field(default_factory=list, description="Host names in rank order.")
    host_count: int | None = Field(None, ge=1, description="Hosts of the job.")
    ranks_per_host: int | None = Field(None, ge=1, description="Ranks on each host.")
    device_names: list[str] = Field(default_factory=list, description="Devices reported.")
    ranks_per_domain: int | None = Field(None, ge=1, description="Ranks per scale-up domain.")
    processes: int | None = Field(None, ge=1, description="All ranks of the run.")
    groups: int = Field(1, ge=1, description="Concurrent groups (NCCL_TESTS_SPLIT).")
    group_stride: int | None = Field(1, ge=1, description="Rank distance inside a group.")
    notes: list[str] = Field(default_factory=list, description="How the job was inferred.")


class LinkDoc(StrictModel):
    """One perftest row (measured figures)."""

    measured_figures = True

    test: str = Field(description="perftest program (ib_write_bw ...).")
    message_bytes: int = Field(ge=0, description="Message size, bytes.")
    iterations: int = Field(ge=0, description="Iterations.")
    bw_peak_gbit_per_s: float | None = Field(None, ge=0, description="Peak bandwidth, Gb/s.")
    bw_average_gbit_per_s: float | None = Field(None, ge=0, description="Average, Gb/s.")
    message_rate_mpps: float | None = Field(None, ge=0, description="Messages, millions/s.")
    t_min_us: float | None = Field(None, ge=0, description="Minimum latency, us.")
    t_max_us: float | None = Field(None, ge=0, description="Maximum latency, us.")
    t_typical_us: float | None = Field(None, ge=0, description="Typical (median), us.")
    t_avg_us: float | None = Field(None, ge=0, description="Mean latency, us.")
    t_stdev_us: float | None = Field(None, ge=0, description="Standard deviation, us.")
    t_p99_us: float | None = Field(None, ge=0, description="99th percentile, us.")
    t_p999_us: float | None = Field(None, ge=0, description="99.9th percentile, us.")
    line: int | None = Field(None, ge=1, description="Line in the original output.")


class CopyDoc(StrictModel):
    """One nvbandwidth case (values in GB/s, or ns for latency cases; measured)."""

    measured_figures = True

    test: str = Field(description="nvbandwidth test case.")
    description: str | None = Field(None, description="Matrix title.")
    row_labels: list[str] = Field(default_factory=list, description="Row labels.")
    column_labels: list[str] = Field(default_factory=list, description="Column labels.")
    values: list[list[float | None]] = Field(default_factory=list, description="Matrix.")
    sum: float | None = Field(None, description="SUM line value.")
    unit: Literal["gbyte_per_s", "ns"] = Field("gbyte_per_s", description="Value unit.")
    line: int | None = Field(None, ge=1, description="Line in the original output.")


class TuningDoc(StrictModel):
    """One algorithm/protocol choice from NCCL's tuning log."""

    op: str | None = Field(None, description="Collective.")
    message_bytes: int = Field(ge=0, description="Bytes of the call.")
    algorithm: str = Field(description="NCCL algorithm.")
    protocol: str = Field(description="NCCL protocol.")
    channels: int | None = Field(None, ge=0, description="Channels used.")


class NcclDoc(StrictModel):
    """What the NCCL debug log said."""

    version: str | None = None
    ranks: int | None = None
    nodes: int | None = None
    local_ranks: int | None = None
    mnnvl: bool | None = None
    coll_channels: int | None = None
    nvls_channels: int | None = None
    p2p_channels: int | None = None
    rings: list[list[int]] = Field(default_factory=list)
    trees: int = 0
    network: str | None = None
    hcas: list[str] = Field(default_factory=list)
    sharp: bool | None = None
    nvls_available: bool | None = None
    transports: dict[str, int] = Field(default_factory=dict)
    gdr: bool | None = None
    env: dict[str, str] = Field(default_factory=dict)
    tuning: list[TuningDoc] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    lines: int = 0


class SetDoc(StrictModel):
    """One measurement set."""

    source: str = Field(description="Results file it came from.")
    tool: str = Field(description="nccl-tests, rccl-tests, perftest, nvbandwidth, nccl-debug.")
    tool_version: str | None = None
    library_version: str | None = None
    op: str | None = None
    op_source: str = "unknown"
    job: JobDoc = Field(default_factory=JobDoc)
    collectives: list[CollectiveDoc] = Field(default_factory=list)
    links: list[LinkDoc] = Field(default_factory=list)
    copies: list[CopyDoc] = Field(default_factory=list)
    nccl: NcclDoc = Field(default_factory=NcclDoc)
    attributes: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class MeasurementFile(StrictModel):
    """The whole file."""

    schema_: Literal["supernode-measurements/1"] = Field(alias="schema")
    sets: list[SetDoc] = Field(min_length=1, max_length=10_000)


def _timing_doc(t: Timing | None) -> dict | None:
    if t is None:
        return None
    out = {"time_us": t.time_s / US, "algbw_gbyte_per_s": t.algbw_bytes_per_s / GBYTE_PER_S,
           "busbw_gbyte_per_s": t.busbw_bytes_per_s / GBYTE_PER_S, "wrong": t.wrong}
    for key in ("iteration_min", "iteration_max", "iteration_p99"):
        value = getattr(t, f"{key}_s")
        if value is not None:
            out[f"{key}_us"] = value / US
    return out


def _scaled(value: float | None, unit: float) -> float | None:
    return None if value is None else value / unit


def set_document(s: MeasurementSet) -> dict[str, Any]:
    """One set as plain data in file units (one entry of ``sets``)."""
    links = [{"test": r.test, "message_bytes": r.message_bytes, "iterations": r.iterations,
              "bw_peak_gbit_per_s": _scaled(r.bw_peak_bytes_per_s, GBIT_PER_S),
              "bw_average_gbit_per_s": _scaled(r.bw_average_bytes_per_s, GBIT_PER_S),
              "message_rate_mpps": _scaled(r.message_rate_per_s, 1e6),
              **{f"{k}_us": _scaled(getattr(r, f"{k}_s"), US)
                 for k in ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "t_p99", "t_p999")},
              "line": r.line} for r in s.links]
    copies = []
    for c in s.copies:
        unit = GBYTE_PER_S if c.unit == "bytes_per_s" else 1e-9
        copies.append({"test": c.test, "description": c.description,
                       "row_labels": list(c.row_labels), "column_labels": list(c.column_labels),
                       "values": [[_scaled(v, unit) for v in row] for row in c.values],
                       "sum": _scaled(c.sum_value, unit),
                       "unit": "gbyte_per_s" if c.unit == "bytes_per_s" else "ns",
                       "line": c.line})
    n = s.nccl
    return {
        "source": s.source, "tool": s.tool, "tool_version": s.tool_version,
        "library_version": s.library_version, "op": s.op, "op_source": s.op_source,
        "job": {"ranks": s.job.ranks, "ranks_source": s.job.ranks_source,
                "hosts": list(s.job.hosts), "host_count": s.job.host_count,
                "ranks_per_host": s.job.ranks_per_host,
                "device_names": list(s.job.device_names),
                "ranks_per_domain": s.job.ranks_per_domain, "processes": s.job.processes,
                "groups": s.job.groups, "group_stride": s.job.group_stride,
                "notes": list(s.job.notes)},
        "collectives": [{"message_bytes": r.message_bytes, "count": r.count, "dtype": r.dtype,
                         "redop": r.redop, "root": r.root,
                         "out_of_place": _timing_doc(r.out_of_place),
                         "in_place": _timing_doc(r.in_place), "line": r.line}
                        for r in s.collectives],
        "links": links, "copies": copies,
        "nccl": {"version": n.version, "ranks": n.ranks, "nodes": n.nodes,
                 "local_ranks": n.local_ranks, "mnnvl": n.mnnvl,
                 "coll_channels": n.coll_channels, "nvls_channels": n.nvls_channels,
                 "p2p_channels": n.p2p_channels, "rings": [list(r) for r in n.rings],
                 "trees": n.trees, "network": n.network, "hcas": list(n.hcas),
                 "sharp": n.sharp, "nvls_available": n.nvls_available,
                 "transports": dict(n.transports), "gdr": n.gdr, "env": dict(n.env),
                 "tuning": [{"op": t.op, "message_bytes": t.message_bytes,
                             "algorithm": t.algorithm, "protocol": t.protocol,
                             "channels": t.channels} for t in n.tuning],
                 "warnings": list(n.warnings), "lines": n.lines},
        "attributes": {k: (list(v) if isinstance(v, tuple) else v)
                       for k, v in dict(s.attributes).items()},
        "notes": list(s.notes),
    }


def measurement_document(sets: list[MeasurementSet]) -> dict[str, Any]:
    """The whole file as plain data."""
    return {"schema": SCHEMA, "sets": [set_document(s) for s in sets]}


def render_yaml(sets: list[MeasurementSet]) -> str:
    """The file as YAML text."""
    header = "# Measurement sets written by `supernode import results` (docs/measurements.md).\n"
    return header + yaml.safe_dump(measurement_document(sets), sort_keys=False, width=100)


def _timing(doc: TimingDoc | None) -> Timing | None:
    if doc is None:
        return None
    return Timing(doc.time_us * US, doc.algbw_gbyte_per_s * GBYTE_PER_S,
                  doc.busbw_gbyte_per_s * GBYTE_PER_S, doc.wrong,
                  *(None if v is None else v * US for v in (
                      doc.iteration_min_us, doc.iteration_max_us, doc.iteration_p99_us)))


def _from_doc(d: SetDoc) -> MeasurementSet:
    job = JobContext(ranks=d.job.ranks, ranks_source=d.job.ranks_source,
                     hosts=tuple(d.job.hosts), host_count=d.job.host_count,
                     ranks_per_host=d.job.ranks_per_host,
                     device_names=tuple(d.job.device_names),
                     ranks_per_domain=d.job.ranks_per_domain, processes=d.job.processes,
                     groups=d.job.groups, group_stride=d.job.group_stride,
                     notes=tuple(d.job.notes))
    rows = tuple(CollectiveResult(r.message_bytes, r.count, r.dtype, r.redop, r.root,
                                  _timing(r.out_of_place), _timing(r.in_place), r.line)
                 for r in d.collectives)
    links = tuple(LinkResult(
        test=r.test, message_bytes=r.message_bytes, iterations=r.iterations,
        bw_peak_bytes_per_s=None if r.bw_peak_gbit_per_s is None else r.bw_peak_gbit_per_s
        * GBIT_PER_S,
        bw_average_bytes_per_s=None if r.bw_average_gbit_per_s is None
        else r.bw_average_gbit_per_s * GBIT_PER_S,
        message_rate_per_s=None if r.message_rate_mpps is None else r.message_rate_mpps * 1e6,
        **{f"{k}_s": (None if getattr(r, f"{k}_us") is None else getattr(r, f"{k}_us") * US)
           for k in ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "t_p99", "t_p999")},
        line=r.line) for r in d.links)
    copies = []
    for c in d.copies:
        unit = GBYTE_PER_S if c.unit == "gbyte_per_s" else 1e-9
        copies.append(CopyResult(c.test, c.description, tuple(c.row_labels),
                                 tuple(c.column_labels),
                                 tuple(tuple(None if v is None else v * unit for v in row)
                                       for row in c.values),
                                 None if c.sum is None else c.sum * unit,
                                 "bytes_per_s" if c.unit == "gbyte_per_s" else "s", c.line))
    n = d.nccl
    nccl = NcclRuntime(
        version=n.version, ranks=n.ranks, nodes=n.nodes, local_ranks=n.local_ranks,
        mnnvl=n.mnnvl, coll_channels=n.coll_channels, nvls_channels=n.nvls_channels,
        p2p_channels=n.p2p_channels, rings=tuple(tuple(r) for r in n.rings), trees=n.trees,
        network=n.network, hcas=tuple(n.hcas), sharp=n.sharp,
        nvls_available=n.nvls_available, transports=MappingProxyType(dict(n.transports)),
        gdr=n.gdr, env=MappingProxyType(dict(n.env)),
        tuning=tuple(TuningChoice(t.op, t.message_bytes, t.algorithm, t.protocol, t.channels)
                     for t in n.tuning), warnings=tuple(n.warnings), lines=n.lines)
    return MeasurementSet(source=d.source, tool=d.tool, tool_version=d.tool_version,
                          library_version=d.library_version, op=d.op, op_source=d.op_source,
                          job=job, collectives=rows, links=links, copies=tuple(copies),
                          nccl=nccl, attributes=dict(d.attributes), notes=tuple(d.notes))


def sets_from_document(text: str, source: str) -> list[MeasurementSet]:
    """Measurement sets of a ``supernode-measurements/1`` document (YAML or JSON text)."""
    doc = validate_document(parse_text(text, source=source), MeasurementFile, source=source)
    return [_from_doc(d) for d in doc.sets]
