"""Regression tests for issues 29 and 31 (the hostile-input fuzz run), one per reproducer.

Each was an internal error (exit 70), a hang or a blow-up; each must now be exit 2 with one
``error:`` line naming the field or option and its limit, or a correct result, quickly
and with nothing left behind. The input files under ``tests/data/reproducers/`` come from
that fuzz run (see its README); the 1 MB deep XML is generated here.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from test_robust_defects import assert_bad_input, run

from supernode.bounds import MAX_WORKERS, number_problem
from supernode.jsontext import json_text
from supernode.monitor import promtool

REPRODUCERS = Path(__file__).resolve().parent / "data" / "reproducers"
JOB = ("--cluster", "hgx-h100", "--workload", "llama3-8b")
#: The issues' time bound for a refusal or an answer (in-process, imports done).
QUICK_S = 5.0


def timed(*args: str, cwd: Path | None = None):
    """(result, seconds) of one in-process invocation."""
    start = time.perf_counter()
    result = run(*args, cwd=cwd)
    return result, time.perf_counter() - start


def refused(fragments: tuple[str, ...], *args: str, cwd: Path | None = None) -> str:
    """Exit 2 with one error line holding every fragment, within :data:`QUICK_S`; and
    ``cwd`` left as it was."""
    before = sorted(os.listdir(cwd)) if cwd is not None else None
    result, seconds = timed(*args, cwd=cwd)
    line = assert_bad_input(result)
    for fragment in fragments:
        assert fragment in line, line
    assert seconds < QUICK_S, (seconds, line)
    if cwd is not None:
        assert sorted(os.listdir(cwd)) == before
    return line


# -- issue 29 ---------------------------------------------------------------------------

def test_29_1_a_subnormal_write_bandwidth_is_refused_with_its_range() -> None:
    refused(("--checkpoint-write-gbyte-per-s", "0.001..100,000 GB/s"), "reliability", *JOB,
            "--checkpoint-write-gbyte-per-s", "1e-320")


def test_29_2_a_checkpoint_interval_past_two_to_the_63_is_refused() -> None:
    refused(("--interval-s", "315,360,000"), "reliability", *JOB, "--interval-s", "60",
            "--interval-s", str(2**63))


def test_29_3_an_xml_integer_beyond_float_range_names_its_attribute(tmp_path: Path) -> None:
    shutil.copy(REPRODUCERS / "xml_hugeint.xml", tmp_path / "t.xml")
    refused(("gpu.dev", "64 bits"), "import", "nccl-xml", "t.xml", "--accelerator",
            "h100-sxm-80gb", "--output", "h.yaml", cwd=tmp_path)


def test_29_4_a_deep_one_megabyte_xml_is_refused_at_once(tmp_path: Path) -> None:
    depth = 90_000  # 11 bytes a level: about 1 MB, under the 1 MiB file limit
    text = ('<system version="1"><cpu numaid="0">' + "<pci>" * depth + "</pci>" * depth
            + "</cpu></system>")
    (tmp_path / "deep.xml").write_text(text)
    assert 0.9e6 < len(text) < 2**20
    refused(("system", "64 levels"), "import", "nccl-xml", "deep.xml", "--accelerator",
            "h100-sxm-80gb", "--output", "h.yaml", cwd=tmp_path)


def test_29_5_every_switch_down_is_a_clear_no_path_refusal() -> None:
    refused(("no path", "cannot run with these failures"), "simulate", "--cluster",
            "dgx-h100-superpod-su", "--workload", "llama3-8b", "--fail", "switch:*/*/*")


def test_29_6_a_huge_name_format_is_refused_before_any_name_is_built(tmp_path: Path
                                                                      ) -> None:
    shutil.copy(REPRODUCERS / "monitor-huge-format.yaml", tmp_path / "m.yaml")
    refused(("names.host", "is not allowed"), "monitor", "rules", "--cluster", "gb200-nvl72",
            "--config", "m.yaml", "--out", "out", cwd=tmp_path)


@pytest.mark.parametrize("text, where", [("!!bool maybe\n", "!!bool"),
                                         ("cases: [!!int x]\n", "cases[0]")])
def test_29_7_a_yaml_tag_is_refused_at_its_field(tmp_path: Path, text: str, where: str
                                                 ) -> None:
    (tmp_path / "v.yaml").write_text(text)
    refused((where, "is not supported"), "validate", "v.yaml", cwd=tmp_path)


def test_29_8_a_job_count_past_the_limit_is_refused_before_allocation() -> None:
    refused(("--jobs", "1..1,000,000"), "schedule", "--cluster", "gb200-nvl72", "--trace",
            "synthetic", "--jobs", str(2**63))


# -- issue 31 ---------------------------------------------------------------------------

def test_31_1_a_one_host_mi300x_rule_pack_ships_tests_that_hold(tmp_path: Path) -> None:
    """The generated scenario gave its three hosts one name (the cluster could not grow
    for the test series with ``hostnames: [a]``): the test, not the rule, was wrong."""
    for name in ("mi300x-cluster.yaml", "monitor-one-host.yaml"):
        shutil.copy(REPRODUCERS / name, tmp_path / name)
    binary = promtool.find_promtool()
    check = ["--check", "--prometheus-major", str(promtool.promtool_version(binary)[0]),
             "--json"] if binary else []
    result, seconds = timed("monitor", "rules", "--cluster", "mi300x-cluster.yaml",
                            "--config", "monitor-one-host.yaml", "--out", "out", *check,
                            cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert seconds < QUICK_S * (4 if binary else 1)  # promtool's own runs on top
    tests = (tmp_path / "out" / "rules-tests.yaml").read_text()
    assert "GpuCommunicationBottleneck" in tests and "hostname: a" in tests
    if binary:  # promtool agrees: both test files pass
        assert [r["ok"] for r in json.loads(result.stdout)["promtool"]] == [True, True]


def test_31_2_a_fractional_gpu_pod_trace_replays_in_seconds(tmp_path: Path) -> None:
    """The pre-empting policy re-checked every waiting job every 600 s of simulated time
    over waits of ~10^7 s; the 600 earliest pods of the fuzz run's trace (head file)
    stalled the same way."""
    shutil.copy(REPRODUCERS / "openb-trace-head.csv", tmp_path / "t.csv")
    result, seconds = timed("schedule", "--cluster", "gb200-nvl72", "--trace", "t.csv",
                            "--policy", "best-fit", "--policy", "preempt", "--policy",
                            "slurm-block", "--jobs", "500", "--json", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert seconds < QUICK_S
    data = json.loads(result.stdout)
    assert [p["policy"] for p in data["policies"]] == ["best-fit", "preempt", "slurm-block"]
    assert data["trace"]["jobs"] == 500


@pytest.mark.parametrize("command", [
    ("reliability", *JOB), ("schedule", "--cluster", "hgx-h100", "--trace", "synthetic"),
    ("plan", *JOB), ("design", *JOB), ("sweep", "s.yaml")])
@pytest.mark.parametrize("workers", [str(2**63 - 1), str(2**31), str(MAX_WORKERS + 1), "0"])
def test_31_3_worker_counts_are_bounded_on_every_command(command: tuple[str, ...],
                                                         workers: str) -> None:
    refused(("--workers", f"1..{MAX_WORKERS}"), *command, "--workers", workers)


def test_31_4_a_message_past_one_tib_is_refused() -> None:
    refused(("--message-bytes", "1,099,511,627,776"), "link", "ethernet-400g", "--ber",
            "0.5", "--message-bytes", str(2**63 - 1), "--post-fec", "--json")


def test_31_4_an_infinite_answer_is_null_in_json() -> None:
    """At a post-FEC BER of 0.5 a 1 TiB message never gets through: the table says inf,
    the JSON null (the one JSON writer), never ``Infinity``."""
    result = run("link", "ethernet-400g", "--ber", "0.5", "--message-bytes", str(2**40),
                 "--post-fec", "--json")
    assert result.exit_code == 0, result.stderr

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in JSON output")

    data = json.loads(result.stdout, parse_constant=refuse)
    assert data["performance"]["added_latency_mean_s"] is None


# -- found by the fuzz suite's new classes ----------------------------------------------

def test_a_bench_plan_output_name_too_long_for_the_os_is_refused() -> None:
    refused(("--out", "255 bytes per name"), "bench-plan", "--cluster", "hgx-h100",
            "--out", "a" * 300)


def test_a_snapshot_path_too_long_for_the_os_is_refused() -> None:
    refused(("SNAPSHOT", "255 bytes per name"), "health", "a" * 300, "--interval", "60")


def test_a_trace_whose_rows_are_all_skipped_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("timestamp,duration,num_gpus,gpu_time,cluster\n"
                                    "3600,60,1,60,0\n")
    refused(("--trace", "all 1 rows were skipped", "line 2"), "schedule", "--cluster",
            "hgx-h100", "--trace", "p.csv", "--skip-bad-rows", cwd=tmp_path)


# -- the layers behind them -------------------------------------------------------------

@pytest.mark.parametrize("value, low, high, fragment", [
    (float("inf"), None, None, "finite"), (float("nan"), 0, 1, "finite"),
    (1e-320, None, None, "0 or 1e-30..1e+30"), (1e308, None, None, "0 or 1e-30..1e+30"),
    (2**63, None, None, "64-bit"), (-(2**63) - 1, None, None, "64-bit"),
    (5, 1, 4, "in 1..4"), (0.0, 0, 1, None), (2**63 - 1, None, None, None),
    (2**53 + 1, None, None, None)])
def test_number_problem(value: float, low: float | None, high: float | None,
                        fragment: str | None) -> None:
    problem = number_problem(value, low, high)
    assert (problem is None) if fragment is None else (fragment in (problem or "")), problem


def test_the_json_writer_writes_non_finite_numbers_as_null() -> None:
    text = json_text({"a": float("inf"), "b": [float("-inf"), float("nan"), 1.5],
                      "c": (2, {"d": float("nan")})})
    assert json.loads(text) == {"a": None, "b": [None, None, 1.5], "c": [2, {"d": None}]}


def _numeric_options() -> list[tuple[tuple[str, ...], str, str]]:
    sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
    from fuzz_commands import commands

    return [(c.path, p.name, p.kind) for c in commands() for p in c.params
            if p.is_option and p.kind in ("int", "float")]


@pytest.mark.parametrize("path, option, kind", _numeric_options(),
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_every_numeric_option_refuses_unusable_numbers(path: tuple[str, ...], option: str,
                                                       kind: str) -> None:
    """The one rule reaches every int and float option of every command, before it runs."""
    bad = "1e999" if kind == "float" else str(2**64)
    line = assert_bad_input(run(*path, option, bad))
    assert option in line, line
