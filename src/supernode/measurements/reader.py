"""Read any results file into measurement sets: the format is recognised from the content.

Recognised, in this order: a saved measurement set (``schema: supernode-measurements/1``,
YAML or JSON), nccl-tests / rccl-tests output (with any ``NCCL_DEBUG`` lines in it),
perftest output, nvbandwidth output, and a bare ``NCCL_DEBUG=INFO`` log. ``op``,
``ranks`` and ``ranks_per_domain`` fill in what the output does not print (see
:mod:`supernode.measurements.nccl_tests_job`); they are refused where the output says
otherwise. Files are read through :func:`supernode.inputs.read_text_file`, at most
:data:`~supernode.measurements.benchtext.MAX_RESULTS_BYTES`.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from supernode.errors import InputError
from supernode.inputs import read_text_file
from supernode.measurements.benchtext import (
    MAX_RESULTS_BYTES,
    MAX_RESULTS_FILES,
    MAX_RESULTS_TOTAL_BYTES,
)
from supernode.measurements.model import MeasurementSet
from supernode.measurements.nccl_debug import (
    looks_like_nccl_debug,
    nccl_messages,
    parse_nccl_messages,
)
from supernode.measurements.nccl_tests import looks_like_nccl_tests, parse_nccl_tests_text
from supernode.measurements.nccl_tests_job import collective_rows, infer_op, job_context
from supernode.measurements.nvbandwidth import looks_like_nvbandwidth, parse_nvbandwidth
from supernode.measurements.perftest import looks_like_perftest, parse_perftest
from supernode.measurements.setfile import SCHEMA, sets_from_document

FORMATS = ("supernode-measurements/1", "nccl-tests", "rccl-tests", "perftest", "nvbandwidth",
           "NCCL_DEBUG=INFO log")


def check_results_files(paths: Sequence[str | Path]) -> None:
    """Refuse (``RESULTS``) no files, more than :data:`MAX_RESULTS_FILES`, or files that
    hold more than :data:`MAX_RESULTS_TOTAL_BYTES` together (sizes read before any text;
    a path that is not a regular file is left to the reader's own message)."""
    if not paths:
        raise InputError("RESULTS", "give at least one results file")
    if len(paths) > MAX_RESULTS_FILES:
        raise InputError("RESULTS", f"{len(paths)} files; the limit is {MAX_RESULTS_FILES}")
    total = 0
    for path in paths:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(info.st_mode):
            total += info.st_size
    if total > MAX_RESULTS_TOTAL_BYTES:
        raise InputError("RESULTS", f"{total:,} bytes of results in all; the limit is "
                                    f"{MAX_RESULTS_TOTAL_BYTES:,} bytes together "
                                    f"({MAX_RESULTS_BYTES:,} per file)")


def read_results(path: str | Path, *, op: str | None = None, ranks: int | None = None,
                 ranks_per_domain: int | None = None, option: str = "RESULTS"
                 ) -> list[MeasurementSet]:
    """The measurement sets of one results file (see the module docstring)."""
    text = read_text_file(path, option, MAX_RESULTS_BYTES)
    return results_from_text(text, str(path), op=op, ranks=ranks,
                             ranks_per_domain=ranks_per_domain)


def results_from_text(text: str, source: str, *, op: str | None = None,
                      ranks: int | None = None, ranks_per_domain: int | None = None
                      ) -> list[MeasurementSet]:
    """Measurement sets of ``text`` (named ``source`` in messages)."""
    if ranks is not None and ranks < 1:
        raise InputError("--ranks", f"got {ranks}; a rank count is an integer >= 1")
    if ranks_per_domain is not None and ranks_per_domain < 1:
        raise InputError("--ranks-per-domain", f"got {ranks_per_domain}; an integer >= 1")
    head = text.lstrip()[:2000]
    if SCHEMA in head:
        sets = sets_from_document(text, source)
    elif looks_like_nccl_tests(text):
        sets = collective_sets(text, source, op=op, ranks=ranks)
    elif looks_like_perftest(text):
        sets = parse_perftest(text, source)
    elif looks_like_nvbandwidth(text):
        sets = [parse_nvbandwidth(text, source)]
    elif looks_like_nccl_debug(text):
        sets = [MeasurementSet(source=source, tool="nccl-debug",
                               nccl=parse_nccl_messages(nccl_messages(text)))]
    else:
        raise InputError("", f"not a results file this toolkit reads ({', '.join(FORMATS)})",
                         source=source)
    if ranks_per_domain is not None:
        sets = [dataclasses.replace(s, job=dataclasses.replace(
            s.job, ranks_per_domain=ranks_per_domain)) for s in sets]
    return sets


def collective_sets(text: str, source: str, *, op: str | None = None,
                    ranks: int | None = None) -> list[MeasurementSet]:
    """One measurement set per nccl-tests/rccl-tests block of ``text``."""
    parsed = parse_nccl_tests_text(text, source, require_rows=False)
    runtime = parse_nccl_messages(parsed.nccl_messages)
    if not parsed.blocks:
        if runtime.empty:
            parse_nccl_tests_text(text, source)  # raises: no rows and no NCCL log either
        return [MeasurementSet(source=source, tool="nccl-debug", nccl=runtime,
                               notes=("an nccl-tests table header without rows",))]
    sets = []
    previous_ranks = None
    for block in parsed.blocks:
        notes = []
        if not block.ranks and previous_ranks:
            block.ranks, block.elided = previous_ranks, True
            notes.append("device list taken from the previous test in the file")
        previous_ranks = block.ranks or previous_ranks
        rows = collective_rows(block, source)
        block_op, how = infer_op(block, rows, op, source)
        job = job_context(block, block_op, rows, ranks, source)
        if job.ranks is None and runtime.ranks:
            job = dataclasses.replace(job, ranks=runtime.ranks, ranks_source="NCCL log")
        notes += _row_notes(block, rows)
        library = block.library_version or runtime.version
        sets.append(MeasurementSet(
            source=source, tool="rccl-tests" if block.rccl else "nccl-tests",
            tool_version=block.tests_version, library_version=library, op=block_op,
            op_source=how, job=job, collectives=tuple(rows), nccl=runtime,
            attributes={"program": block.program, **block.params,
                        "average_busbw_gbyte_per_s": block.average_busbw,
                        "out_of_bounds": block.out_of_bounds},
            notes=tuple(notes)))
    return sets


def _row_notes(block, rows) -> list[str]:
    notes = []
    if block.truncated:
        notes.append("smaller message sizes were cut from the output by its author")
    if block.reduced_max_bytes is not None:
        notes.append(f"nccl-tests reduced maxBytes to {block.reduced_max_bytes:,} (memory)")
    if block.out_of_bounds:
        notes.append(f"nccl-tests reports {block.out_of_bounds} out-of-bounds values: the "
                     "run is invalid")
    wrong = [r.line for r in rows for t in (r.out_of_place, r.in_place)
             if t is not None and t.wrong]
    if wrong:
        notes.append(f"#wrong > 0 on line(s) {', '.join(map(str, sorted(set(wrong))[:8]))}: "
                     "results were corrupted")
    return notes
