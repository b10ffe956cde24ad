"""From parsed nccl-tests blocks to measurement sets: values, the op, the ranks, the hosts.

What the output does not print is inferred, and the set says how:

* the op: from ``# Collective test starting: X_perf``; else ``--op``; else a name in the
  file name (``alltoall_perf.log``); else the columns: nccl-tests' busbw/algbw is
  ``2(n-1)/n`` only for all_reduce, ``1`` for broadcast/reduce/sendrecv (told apart by
  ``redop`` and ``root``), ``(n-1)/n`` for reduce_scatter (a reduction) and for all_gather
  and alltoall (``redop none``: these two cannot be told apart, so ``--op`` is required);
* the ranks: the ``# Using devices`` list (highest rank + 1); else ``--ranks``; else the
  ``count`` column (all_gather, reduce_scatter and alltoall print ``size / (n · dtype)``
  elements); else busbw/algbw, solved for ``n`` over the rounding interval of the printed
  digits — kept only when one integer fits every row;
* the hosts: the device list's host names, ranks per host from each host's rank range.

A ``--ranks`` or ``--op`` that contradicts the output is an :class:`InputError`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from supernode.errors import InputError
from supernode.measurements.benchtext import half_unit
from supernode.measurements.model import CollectiveResult, JobContext, RankInfo, Timing
from supernode.measurements.nccl_tests import RawBlock, RawRow
from supernode.units import GBYTE_PER_S, US

#: nccl-tests program -> the toolkit's collective name (supernode.collectives.busbw.OPS).
PROGRAM_OPS = {
    "all_reduce_perf": "all_reduce", "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter", "alltoall_perf": "all_to_all",
    "sendrecv_perf": "p2p", "broadcast_perf": "broadcast", "reduce_perf": "reduce",
}
#: Programs whose busbw the cost model has no counterpart for.
UNMODELLED_PROGRAMS = ("alltoallv_perf", "gather_perf", "scatter_perf", "hypercube_perf")
_OP_WORDS = {
    "all_reduce": "all_reduce", "allreduce": "all_reduce", "all_gather": "all_gather",
    "allgather": "all_gather", "reduce_scatter": "reduce_scatter",
    "reducescatter": "reduce_scatter", "alltoall": "all_to_all", "all_to_all": "all_to_all",
    "sendrecv": "p2p", "send_recv": "p2p", "p2p": "p2p", "broadcast": "broadcast",
    "reduce": "reduce",
}
#: Element sizes of nccl-tests data types (bytes).
DTYPE_BYTES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
               "half": 2, "float": 4, "double": 8, "bfloat16": 2, "f8e4m3": 1, "f8e5m2": 1,
               "fp8_e4m3": 1, "fp8_e5m2": 1}
#: Collective names a file name may carry (``alltoall_perf.log``, ``gb200-allreduce.txt``).
_NAME_OP = re.compile(r"(all_reduce|allreduce|all_gather|allgather|reduce_scatter|"
                      r"reducescatter|all_to_all|alltoall|sendrecv|broadcast)")
_FACTOR_KIND = {"all_reduce": "two", "all_gather": "frac", "reduce_scatter": "frac",
                "all_to_all": "frac", "broadcast": "one", "reduce": "one", "p2p": "one"}


def normalise_op(text: str, path: str = "--op") -> str:
    """The toolkit's name for ``text`` (``alltoall``, ``all_reduce_perf`` ...)."""
    key = text.strip().lower().removesuffix("_perf").replace("-", "_")
    if key not in _OP_WORDS:
        raise InputError(path, f"unknown collective {text!r}; one of all_reduce, all_gather, "
                               "reduce_scatter, alltoall, broadcast, reduce, sendrecv")
    return _OP_WORDS[key]


def _number(token: str, row: RawRow, name: str, source: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise InputError(f"line {row.line}", f"{name} is {token!r}; a number is required",
                         source=source) from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"line {row.line}", f"{name} is {token}; a finite number >= 0 is "
                                             "required", source=source)
    return value


def _timing(tokens: list[str], row: RawRow, block: RawBlock, source: str) -> Timing:
    time_us = _number(tokens[0], row, "time", source)
    algbw = _number(tokens[1], row, "algbw", source)
    busbw = _number(tokens[2], row, "busbw", source)
    wrong = None if tokens[3].upper() == "N/A" else int(_number(tokens[3], row, "#wrong",
                                                                 source))
    extra: list[float | None] = [None, None, None]
    if block.per_iteration:
        extra = [_number(t, row, name, source) * US
                 for t, name in zip(tokens[4:7], ("i_min", "i_max", "i_p99"), strict=True)]
    return Timing(time_us * US, algbw * GBYTE_PER_S, busbw * GBYTE_PER_S, wrong, *extra)


def collective_rows(block: RawBlock, source: str) -> list[CollectiveResult]:
    """The rows of ``block`` as :class:`CollectiveResult` (SI), checking every field."""
    out = []
    width = block.placement_width
    for row in block.rows:
        t = row.tokens
        for index, name in ((0, "size"), (1, "count"), (4, "root")):
            if re.fullmatch(r"-?\d+", t[index]) is None:
                raise InputError(f"line {row.line}", f"{name} is {t[index]!r}; an integer "
                                                     "is required", source=source)
        size, count = int(t[0]), int(t[1])
        if size < 0 or count < 0:
            raise InputError(f"line {row.line}", "size and count cannot be negative",
                             source=source)
        out.append(CollectiveResult(
            message_bytes=size, count=count, dtype=t[2], redop=t[3], root=int(t[4]),
            out_of_place=_timing(t[5:5 + width], row, block, source),
            in_place=_timing(t[5 + width:5 + 2 * width], row, block, source), line=row.line))
    return out


def _ratio_interval(block: RawBlock) -> tuple[float, float] | None:
    """Interval of busbw/algbw consistent with every printed row (rounding included)."""
    lo, hi = 0.0, math.inf
    width = block.placement_width
    for row in block.rows:
        for start in (5, 5 + width):
            a_tok, b_tok = row.tokens[start + 1], row.tokens[start + 2]
            try:
                a, b = float(a_tok), float(b_tok)
            except ValueError:
                continue
            ha, hb = half_unit(a_tok), half_unit(b_tok)
            if a - ha <= 0 or b <= 0 or not (math.isfinite(a) and math.isfinite(b)):
                continue
            lo, hi = max(lo, (b - hb) / (a + ha)), min(hi, (b + hb) / (a - ha))
    return (lo, hi) if math.isfinite(hi) and lo <= hi else None


def ranks_from_ratio(op: str, block: RawBlock) -> int | None:
    """The one rank count whose busbw factor fits the printed busbw/algbw, else None."""
    interval = _ratio_interval(block)
    kind = _FACTOR_KIND.get(op)
    if interval is None or kind not in ("two", "frac"):
        return None
    lo, hi = interval
    top = 2.0 if kind == "two" else 1.0
    n_lo = top / (top - lo) if lo < top else math.inf
    n_hi = top / (top - hi) if hi < top else math.inf
    if not math.isfinite(n_hi) or n_hi - n_lo > 4096:
        return None
    fits = [n for n in range(max(2, math.ceil(n_lo - 1e-9)), math.floor(n_hi + 1e-9) + 1)]
    return fits[0] if len(fits) == 1 else None


def ranks_from_count(op: str, rows: list[CollectiveResult]) -> int | None:
    """``size / (count · dtype bytes)`` when it is one integer > 1 for every row."""
    if op not in ("all_gather", "reduce_scatter", "all_to_all"):
        return None
    found = set()
    for r in rows:
        width = DTYPE_BYTES.get((r.dtype or "").lower())
        if width is None or not r.count or r.message_bytes % (r.count * width):
            return None
        found.add(r.message_bytes // (r.count * width))
    return found.pop() if len(found) == 1 and min(found) > 1 else None


def infer_op(block: RawBlock, rows: list[CollectiveResult], hint: str | None, source: str
             ) -> tuple[str | None, str]:
    """``(op, how it was found)``; ``op`` None for programs the model has no cost for."""
    program = (block.program or "").lower()
    if program in PROGRAM_OPS:
        op = PROGRAM_OPS[program]
        if hint is not None and normalise_op(hint) != op:
            raise InputError("--op", f"{hint!r} contradicts the output, which ran "
                                     f"{block.program}", source=source)
        return op, "program"
    if program in UNMODELLED_PROGRAMS:
        return None, f"program {block.program} (not modelled)"
    if hint is not None:
        return normalise_op(hint), "--op"
    if (m := _NAME_OP.search(Path(source).name.lower().replace("-", "_"))) is not None:
        return _OP_WORDS[m.group(1)], "file name"
    return _op_from_columns(block, rows, source), "busbw/algbw and redop"


def _op_from_columns(block: RawBlock, rows: list[CollectiveResult], source: str) -> str:
    interval = _ratio_interval(block)
    redop = (rows[0].redop or "").lower()
    root = rows[0].root if rows[0].root is not None else -1
    where = f"line {block.rows[0].line}"
    if interval is None:
        raise InputError(where, "cannot tell which collective ran (no program line, no "
                                "usable busbw/algbw); pass --op", source=source)
    lo, hi = interval
    if lo > 1.0 + 1e-9:
        return "all_reduce"
    if hi >= 1.0 - 1e-9:
        if root >= 0:
            return "broadcast" if redop == "none" else "reduce"
        return "p2p"
    if redop != "none":
        return "reduce_scatter"
    raise InputError(where, "all_gather and alltoall print the same columns (redop none, "
                            "busbw = algbw (n-1)/n); pass --op all_gather or --op alltoall",
                     source=source)


def _split(listed: tuple[RankInfo, ...], processes: int) -> tuple[int, int | None, str]:
    """``(groups, stride, note)`` of an ``NCCL_TESTS_SPLIT`` run (1 group: no split)."""
    groups = max(r.group for r in listed) + 1
    if groups == 1:
        return 1, 1, ""
    first = sorted(r.rank for r in listed if r.group == listed[0].group)
    steps = {b - a for a, b in zip(first, first[1:], strict=False)}
    stride = steps.pop() if len(steps) == 1 and len(first) > 1 else None
    return groups, stride, (f"NCCL_TESTS_SPLIT: {groups} concurrent groups of "
                            f"{processes // groups} ranks (busbw is per group)")


def job_context(block: RawBlock, op: str | None, rows: list[CollectiveResult],
                ranks_hint: int | None, source: str) -> JobContext:
    """The job of ``block``: ranks (and where they came from), hosts, devices."""
    listed = tuple(RankInfo(*r) for r in block.ranks)
    notes = []
    ranks: int | None = None
    stride: int | None = 1
    how, processes, groups = "unknown", None, 1
    if listed:
        processes, how = max(r.rank for r in listed) + 1, "rank list"
        if len(listed) < processes or block.elided:
            notes.append(f"the device list shows {len(listed)} of {processes} ranks (elided "
                         "in the source); hosts are inferred from the ranks shown")
        groups, stride, note = _split(listed, processes)
        notes += [note] if note else []
        ranks = processes // groups
        if ranks_hint is not None and ranks_hint != ranks:
            raise InputError("--ranks", f"{ranks_hint} contradicts the device list, which "
                                        f"names rank {processes - 1}", source=source)
    elif ranks_hint is not None:
        ranks, how = ranks_hint, "--ranks"
    elif op is not None and (n := ranks_from_count(op, rows)) is not None:
        ranks, how = n, "count column"
    elif op is not None and (n := ranks_from_ratio(op, block)) is not None:
        ranks, how = n, "busbw/algbw"
    if how != "rank list" and ranks is not None:
        notes.append(f"{ranks} ranks taken from the {how}")
    _check_ratio(block, op, ranks, source, how)
    hosts, per_host = _hosts(listed)
    host_count = len(hosts) or None
    if listed and processes and per_host and (len(listed) < processes or block.elided):
        host_count = processes // per_host if processes % per_host == 0 else None
        if host_count:
            notes.append(f"{host_count} hosts of {per_host} ranks (ranks fill hosts in order)")
    return JobContext(ranks=ranks, ranks_source=how, hosts=hosts, host_count=host_count,
                      ranks_per_host=per_host,
                      device_names=tuple(sorted({r.device_name for r in listed if r.device_name})),
                      ranks_listed=listed, processes=processes or ranks, groups=groups,
                      group_stride=stride, notes=tuple(notes))


def _check_ratio(block: RawBlock, op: str | None, ranks: int | None, source: str,
                 how: str) -> None:
    """busbw/algbw must fit ``ranks``: nccl-tests computes busbw from the real rank count."""
    interval = _ratio_interval(block)
    kind = _FACTOR_KIND.get(op or "")
    if interval is None or ranks is None or ranks < 2 or kind is None or op is None:
        return
    factor = {"two": 2 * (ranks - 1) / ranks, "frac": (ranks - 1) / ranks, "one": 1.0}[kind]
    lo, hi = interval
    if not lo - 1e-9 <= factor <= hi + 1e-9:
        implied = ranks_from_ratio(op, block)
        said = f"; it implies {implied} ranks" if implied else ""
        raise InputError(f"line {block.rows[0].line}", f"busbw/algbw is "
                         f"{0.5 * (lo + hi):.4f} but {op} over {ranks} ranks (from the "
                         f"{how}) gives {factor:.4f}{said}; the output and its label disagree",
                         source=source)


def _hosts(listed: tuple[RankInfo, ...]) -> tuple[tuple[str, ...], int | None]:
    """Host names in rank order and ranks per host: the widest host's rank range, or its
    highest local device index + 1 (what an elided list still shows)."""
    if not listed:
        return (), None
    spans: dict[str, list[int]] = {}
    for r in listed:
        spans.setdefault(r.host, []).append(r.rank)
    hosts = tuple(sorted(spans, key=lambda h: min(spans[h])))
    per_host = max(max(v) - min(v) + 1 for v in spans.values())
    return hosts, max(per_host, max(r.device for r in listed) + 1)
