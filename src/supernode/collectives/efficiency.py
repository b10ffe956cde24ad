"""Per-link-generation efficiency tables and NCCL's protocol constants, held as data.

A fabric tier names an efficiency table (``nvlink4``, ``xgmi``, ``infiniband_ndr`` ...,
see ``data/collectives/efficiency.yaml``). The table says what fraction of the tier's
per-rank, per-direction line rate ``B`` a collective moves under each NCCL protocol
(NCCL ``src/graph/tuning.cc``; docs: NCCL_PROTO):

* ``simple`` (bandwidth protocol): ``η`` of the line rate, plus a pipeline fill of
  ``S_half`` bytes at that rate (Hockney's half-performance length): a transfer of ``W``
  wire bytes takes ``(W + S_half) / (B·η)``;
* ``ll128`` (128-byte lines, 8 bytes of flags each): ``η · ll128_ratio`` (NCCL models
  120/128 of Simple as 0.92), optionally capped at ``ll128_max`` per rank; no fill;
* ``ll`` (8-byte lines, 4 bytes of flag each): ``η · ll_ratio`` (NCCL: half of Simple),
  capped at ``ll_max`` per rank (NCCL's ``llMaxBws``); no fill;
* ``in_network``: NVLS / SHARP in-switch reduction efficiency (``None``: the part has no
  such engine), Simple only, with the Simple fill.

Each protocol has a per-step latency (NCCL's ``hwLat`` per hardware type); algorithms add
NCCL's per-algorithm base latency (``base_latency_us`` of the file). The step latencies
are measured totals, wire included, so a step costs the larger of the protocol's and the
tier's own one-way topology latency (links, switches, NICs: :attr:`FabricTier.latency_s`).
Values are fitted by :mod:`supernode.collectives.calibrate` from published measurements,
or sourced (each table's ``source``). The table types (:class:`EfficiencyTable`,
:class:`Tables`, the parameter names) are defined in :mod:`.efficiency_table` and
re-exported here; the file format is :mod:`.efficiency_file`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from supernode.collectives.efficiency_table import FITTABLE as FITTABLE
from supernode.collectives.efficiency_table import PROTOCOLS as PROTOCOLS
from supernode.collectives.efficiency_table import REQUIRED as REQUIRED
from supernode.collectives.efficiency_table import EfficiencyTable as EfficiencyTable
from supernode.collectives.efficiency_table import Tables as Tables
from supernode.errors import InputError


def efficiency_curve(table: EfficiencyTable, wire_bytes: npt.ArrayLike, protocol: str = "simple",
                     line_rate_bytes_per_s: float = 1.0) -> np.ndarray:
    """Fraction of line rate achieved for ``wire_bytes`` per rank: η·W/(W + S_half).

    Dimensionless, vectorised over ``wire_bytes`` (bytes); 0 where the protocol does not
    run. Latencies are not included (they depend on the algorithm's steps).
    """
    eta = table.efficiency(protocol, line_rate_bytes_per_s)
    w = np.asarray(wire_bytes, dtype=float)
    half = table.half_bandwidth_bytes(protocol)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(w > 0, eta * w / (w + half), eta if half == 0 else 0.0)


@lru_cache(maxsize=8)
def _load_cached(path: str | None) -> Tables:
    from supernode.collectives.efficiency_file import read_efficiency_file, tables_from_file_spec

    return tables_from_file_spec(read_efficiency_file(path))


@dataclass(frozen=True)
class InForce:
    """Tables replacing the packaged ones inside :func:`tables_in_force`, with a key that
    identifies them (memo keys) and a sentence saying where they come from (notes)."""

    tables: Tables
    key: str
    label: str


#: The tables in force (None: the packaged ones). A context variable: each thread or task
#: sees its own, and :func:`tables_in_force` restores the previous one on exit.
_IN_FORCE: ContextVar[InForce | None] = ContextVar("supernode_tables_in_force", default=None)


@contextmanager
def tables_in_force(tables: Tables | None, key: str = "", label: str = ""
                    ) -> Iterator[InForce | None]:
    """Within the block, every cost that takes the packaged tables by default
    (:func:`load_efficiency_tables` without a path, ``tables=None`` anywhere) uses
    ``tables`` instead: a cluster's calibration (``--calibration``) reaches the estimate,
    the planner, the simulator and the design this way. ``tables`` must offer the same
    protocols and in-network engines as the packaged ones (cached schedules depend on
    them); None changes nothing."""
    if tables is None:
        yield _IN_FORCE.get()
        return
    token = _IN_FORCE.set(InForce(tables, key, label))
    try:
        yield _IN_FORCE.get()
    finally:
        _IN_FORCE.reset(token)


def in_force() -> InForce | None:
    """The tables in force, or None when the packaged ones are."""
    return _IN_FORCE.get()


def load_efficiency_tables(path: str | Path | None = None) -> Tables:
    """Efficiency tables by name, in SI (read-only; parsed once per path). Without a path:
    the tables in force (:func:`tables_in_force`), else the packaged ones."""
    if path is None:
        active = _IN_FORCE.get()
        if active is not None:
            return active.tables
    return _load_cached(str(path) if path is not None else None)


def packaged_efficiency_tables() -> Tables:
    """The packaged tables, whatever is in force."""
    return _load_cached(None)


def as_tables(tables: Tables | Mapping[str, EfficiencyTable] | None) -> Tables:
    """``tables`` as :class:`Tables` (a plain mapping gets no base latencies)."""
    if tables is None:
        return load_efficiency_tables()
    if isinstance(tables, Tables):
        return tables
    return Tables(MappingProxyType(dict(tables)))


def get_table(tables: Tables | Mapping[str, EfficiencyTable], name: str) -> EfficiencyTable:
    """Look ``name`` up in ``tables``; unknown names are an :class:`InputError`."""
    try:
        return tables[name]
    except KeyError:
        raise InputError("efficiency", f"unknown efficiency table {name!r}; known: "
                         f"{', '.join(sorted(tables))}") from None


def ideal_tables(tables: Tables) -> Tables:
    """Line-rate copies of ``tables``: efficiency 1, no fill, no per-step or base latency,
    the same protocols and in-network engines available (the simulator's line-rate mode)."""
    out = {}
    for name, t in tables.items():
        out[name] = EfficiencyTable(
            name, 1.0, 0.0, 0.0, ll128_ratio=None if t.ll128_ratio is None else 1.0,
            ll_ratio=None if t.ll_ratio is None else 1.0,
            in_network_efficiency=None if t.in_network_efficiency is None else 1.0,
            in_network_half_bandwidth_bytes=0.0)
    return Tables(MappingProxyType(out))
