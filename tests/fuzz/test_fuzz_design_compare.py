"""Fuzz of ``supernode design A B [C]`` (the side-by-side form, issue 24 item 5): one to
five positional clusters (presets, typos, missing or special paths, mutated cluster files,
duplicates, the same file twice under two spellings), mixed with ``--cluster``,
``--example``, no ``--workload``, ``--json`` and hostile output folders. Every case keeps
the CLI's promises (:func:`fuzz_harness.problems`): exit 0 or 2, one ``error:`` line, no
traceback, nothing left behind, inputs untouched. Cases that pass the checks run without
simulation on the smallest presets, so the whole test stays within a few seconds a case."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fuzz_cases import OUTPUT_PATHS, Case, file_value
from fuzz_harness import Worker, problems, run_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_cli import report

#: The smallest presets (8-GPU servers, one NVL72 rack): a valid case is a quick run.
SMALL = ["hgx-h100", "gb200-nvl72", "mi300x-8"]


@pytest.fixture(scope="module")
def worker():
    """One worker process for the module."""
    process = Worker()
    yield process
    process.close()


@st.composite
def cluster_argument(draw: st.DrawFn, case: Case, preset: str) -> str:
    """One positional cluster: ``preset`` mostly, else a typo, a bad path or a file."""
    pick = draw(st.sampled_from(["preset"] * 6 + ["typo", "missing", "file", "hostile-file",
                                                   "dir"]))
    if pick == "preset":
        return preset
    if pick == "typo":
        return preset + draw(st.sampled_from(["x", "[/]", " "]))
    if pick == "missing":
        return "no-such-cluster.yaml"
    if pick == "dir":
        case.files["a-dir"] = "dir"
        return "a-dir"
    return draw(file_value(case, "cluster", pick == "hostile-file"))


@st.composite
def compare_case(draw: st.DrawFn) -> tuple[Case, list[str]]:
    """An argv of the positional form of ``design``, and its positional clusters."""
    case = Case(["design"])
    count = draw(st.sampled_from([1, 2, 2, 2, 3, 4, 5]))
    presets = draw(st.permutations(SMALL * 2))[:count]  # distinct for up to 3
    clusters = [draw(cluster_argument(case, p)) for p in presets]
    if len(clusters) > 1 and draw(st.integers(0, 4)) == 0:
        clusters[-1] = clusters[0]  # a duplicate
    if case.inputs and len(clusters) > 1 and draw(st.integers(0, 4)) == 0:
        clusters[-1] = "./" + sorted(case.inputs)[0]  # the same file, spelled another way
    case.argv += clusters
    if draw(st.integers(0, 5)):
        case.argv += ["--workload", draw(st.sampled_from(["llama3-8b", "llama3-8b", "nope"]))]
    extra = draw(st.sampled_from(["none"] * 6 + ["cluster", "example", "json", "plan"]))
    if extra == "cluster":
        case.argv += ["--cluster", SMALL[0]]
    elif extra == "example":
        case.argv += ["--example", "flawed"]
    elif extra == "json":
        case.argv.append("--json")
    elif extra == "plan":
        case.argv += ["--plan", draw(file_value(case, "plan", True))]
    out = draw(st.sampled_from(["out"] * 4 + OUTPUT_PATHS))
    if out == "existing-dir":
        case.files[out] = "dir"
        case.files[f"{out}/keep.txt"] = b"keep me\n"
    elif out == "link-to-dir":
        case.files["real-dir"] = "dir"
        case.files[out] = "symlink:real-dir"
    elif out == "existing-file":
        case.files[out] = b"keep me\n"
    case.argv += ["--out", out, "--no-simulate", "--quiet", "--workers", "1"]
    return case, clusters


@settings(max_examples=24, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_design_positional_clusters(data, worker: Worker, tmp_path: Path) -> None:
    """Every case keeps the CLI's promises; four or more clusters and duplicates are
    refused with one error line that names the argument."""
    case, clusters = data.draw(compare_case(), label="case")
    folder = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    outcome, before, after = run_case(worker, case, folder)
    found = problems(case, outcome, before, after)
    assert not found, report(case, outcome, found)
    if len(clusters) >= 4 and "--plan" not in case.argv:
        assert outcome.code == 2 and "CLUSTER" in outcome.stderr, report(case, outcome, [])
    if outcome.code == 0 and len(clusters) > 1:
        assert (folder / "out" / "compare.json").exists() or "out" not in case.argv, \
            report(case, outcome, [])
    shutil.rmtree(folder, ignore_errors=True)
