"""Every documented size limit (docs/limits.md) is enforced, and the refusal names it.

Each case of :mod:`limit_cases` is one input just past a limit: the command must exit 2
with one ``error:`` line holding the limit as the docs print it. (Their refusal time, in
a fresh process, is measured by ``benchmarks/limits_bench.py``: all within 2 s.) The
docs must state every limit constant the code enforces, so the two cannot drift apart.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from limit_cases import cases, make_files
from test_robust_defects import assert_bad_input, run

CASES = cases()
DOC = Path(__file__).resolve().parents[1] / "docs" / "limits.md"


@pytest.mark.parametrize("name, argv, files, fragment", CASES, ids=[c[0] for c in CASES])
def test_limit_is_refused_with_the_limit(tmp_path: Path, name: str, argv: list[str],
                                         files: dict, fragment: str) -> None:
    make_files(tmp_path, files)
    assert_bad_input(run(*argv, cwd=tmp_path), fragment)
    assert sorted(os.listdir(tmp_path)) == sorted(files)  # nothing written


def _constants() -> dict[str, int | float]:
    from supernode import bounds
    from supernode.collectives.busbw import MAX_MESSAGE_BYTES
    from supernode.commands.collective import MAX_SIZES as COLLECTIVE_SIZES
    from supernode.importers import xml_reader
    from supernode.inputs import DEFAULT_INPUT_LIMIT_BYTES, MAX_NAME_BYTES, MAX_PATH_BYTES
    from supernode.measurements.benchtext import MAX_RESULTS_FILES, MAX_RESULTS_TOTAL_BYTES
    from supernode.monitor import name_patterns, snapshots
    from supernode.netsim import limits
    from supernode.planner.economics import MAX_PRICE_PER_GPU_HOUR
    from supernode.planner.fit import MAX_SIZES as FIT_SIZES
    from supernode.planner.sweep_run import MAX_WORKERS
    from supernode.planner.sweep_spec import MAX_VARIANTS
    from supernode.spec import loader, workload
    from supernode.spec.plan import MAX_GLOBAL_BATCH, MAX_PARALLEL
    from supernode.spec.resolved import MAX_ACCELERATORS

    return {
        "input bytes": DEFAULT_INPUT_LIMIT_BYTES, "document bytes": loader.MAX_DOCUMENT_BYTES,
        "nodes": loader.MAX_NODES, "depth": loader.MAX_DEPTH, "integer": loader.MAX_INTEGER,
        "name bytes": MAX_NAME_BYTES, "path bytes": MAX_PATH_BYTES,
        "accelerators": MAX_ACCELERATORS, "parallel": MAX_PARALLEL,
        "global batch": MAX_GLOBAL_BATCH, "layers": workload.MAX_LAYERS,
        "width": workload.MAX_WIDTH, "heads": workload.MAX_HEADS, "vocab": workload.MAX_VOCAB,
        "seq": workload.MAX_SEQ_LEN, "experts": workload.MAX_EXPERTS,
        "simulated": limits.MAX_SIMULATED_ACCELERATORS, "flows": limits.MAX_FLOWS,
        "passes": limits.MAX_PASSES, "phases": limits.MAX_STEP_PHASES,
        "repeat": limits.MAX_REPEAT, "start": limits.MAX_START_S,
        "message": MAX_MESSAGE_BYTES, "variants": MAX_VARIANTS, "workers": MAX_WORKERS,
        "fit sizes": FIT_SIZES, "collective sizes": COLLECTIVE_SIZES,
        "price": MAX_PRICE_PER_GPU_HOUR, "duration": bounds.MAX_DURATION_S,
        "trace jobs": bounds.MAX_TRACE_JOBS, "runs": bounds.MAX_RUNS,
        "xml depth": xml_reader.MAX_XML_DEPTH, "xml elements": xml_reader.MAX_XML_ELEMENTS,
        "pattern width": name_patterns.MAX_WIDTH,
        "pattern chars": name_patterns.MAX_PATTERN_CHARS,
        "health samples": snapshots.MAX_SAMPLES, "results files": MAX_RESULTS_FILES,
        "results bytes together": MAX_RESULTS_TOTAL_BYTES,
    }


@pytest.mark.parametrize("name, value", list(_constants().items()))
def test_docs_state_every_limit(name: str, value: int | float) -> None:
    text = DOC.read_text(encoding="utf-8").replace("\u202f", ",")
    shown = f"{int(value):,}" if float(value).is_integer() else f"{value:,}"
    assert shown in text, f"docs/limits.md does not state the {name} limit ({shown})"
