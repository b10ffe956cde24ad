"""Limits and the shell's edges: negative seeds, schedule's synthetic bounds, monitor
naming patterns, pre-emption on a long blocked trace, design's size refused up front,
stdout closed or full, Ray shut down after a failed start, and SIGTERM to the worker pools
of ``schedule`` and ``reliability`` (exit within 2 s, no child left)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import yaml
from test_signals import alive, descendants
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.errors import InputError
from supernode.monitor.name_patterns import check_pattern

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "h100-4su.yaml"
CLI = [sys.executable, "-m", "supernode.cli"]


def run(*args: object):
    register_all()
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_refused(result, fragment: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0], lines


@pytest.mark.parametrize("command", [
    ("check", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-8b"),
    ("design",),
    ("reliability", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-8b"),
    ("schedule", "--cluster", "dgx-h100-superpod-su", "--trace", "synthetic"),
    ("simulate", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-8b"),
])
def test_negative_seed_is_refused_everywhere(command) -> None:
    assert_refused(run(*command, "--seed", "-1"), "--seed")


@pytest.mark.parametrize("args, fragment", [
    (("--jobs", "1000001"), "jobs"),
    (("--load", "1e-320"), "load"),
    (("--arrival-rate-per-h", "1e-320"), "arrival-rate-per-h"),
])
def test_schedule_synthetic_bounds(args, fragment) -> None:
    assert_refused(run("schedule", "--cluster", EXAMPLE, "--trace", "synthetic",
                       "--policy", "first-fit", *args), fragment)


@pytest.mark.parametrize("pattern, fragment", [
    ("{host:>99999999}", "width 99,999,999"),
    ("{cluster.__class__.__mro__}", "not allowed"),
    ("{host[0]}", "not allowed"),
    ("{host!r}", "conversion"),
    ("{host:{host}}", "format spec"),
    ("{host:.99}", "precision"),
    ("{cluster:04d}", "cannot format"),
    ("{}", "not allowed"),
])
def test_monitor_name_patterns_refused(pattern: str, fragment: str) -> None:
    with pytest.raises(InputError, match="names.host") as info:
        check_pattern("names.host", pattern, {"cluster", "host"})
    assert fragment in info.value.message


def test_monitor_config_pattern_refused_on_the_command_line(tmp_path: Path) -> None:
    config = tmp_path / "m.yaml"
    config.write_text('names:\n  host: "{host:>99999999}"\n', encoding="utf-8")
    assert_refused(run("monitor", "list", "--cluster", EXAMPLE, "--config", config),
                   "names.host")
    for fine in ("{cluster}-{host:04d}", "n{host1:>32}", "{{x}}{rack}"):
        check_pattern("names.host", fine, {"cluster", "host", "host1", "rack"})


def test_preempt_on_a_long_blocked_trace_is_near_linear(tmp_path: Path) -> None:
    """160 whole-half-cluster jobs of 11.6 days, alternating priority: before, every
    blocked high-priority job retried every 600 s (48 s); now a few seconds."""
    trace = tmp_path / "t.csv"
    trace.write_text("submit_s,duration_s,gpus,priority\n" + "".join(
        f"{i},1000000,512,{i % 2}\n" for i in range(160)), encoding="utf-8")
    start = time.perf_counter()
    result = run("schedule", "--cluster", EXAMPLE, "--trace", trace, "--policy", "preempt",
                 "--json")
    assert result.exit_code == 0, result.output
    assert time.perf_counter() - start < 20


def test_design_past_the_simulator_limit_is_refused_up_front(tmp_path: Path) -> None:
    doc = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    doc["supernodes"] = 131_072  # 1,048,576 GPUs
    doc["scale_out"].update(tiers=3, oversubscription=[1, 1], switch={
        "name": "big", "radix_ports": 256, "port_speed_gbit_per_s": 400})
    cluster = tmp_path / "big.yaml"
    cluster.write_text(yaml.safe_dump(doc), encoding="utf-8")
    start = time.perf_counter()
    assert_refused(run("design", "--cluster", cluster, "--workload", "llama3-70b",
                       "--out", tmp_path / "d", "--quiet"), "131,072")
    assert time.perf_counter() - start < 20
    assert not (tmp_path / "d").exists()


def _shell(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                          check=False, timeout=120, env={**os.environ,
                                                         "PYTHONPATH": os.pathsep.join(
                                                             sys.path)})


def test_table_into_a_closed_pipe_exits_141_quietly() -> None:
    cli = " ".join(CLI)
    done = _shell(f"{cli} catalog list | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}")
    assert done.stdout.strip() == "141", done
    assert done.stderr == ""


@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"])
def test_stdout_full_or_closed_is_one_error_line(redirect: str) -> None:
    if redirect == "> /dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    done = _shell(f"{' '.join(CLI)} catalog list {redirect}")
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: stdout:"), done.stderr


def test_ray_is_shut_down_when_its_start_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def init(**kwargs: object) -> None:
        calls.append("init")
        raise MemoryError("raylet could not start")

    fake = types.SimpleNamespace(is_initialized=lambda: False, init=init,
                                 shutdown=lambda: calls.append("shutdown"))
    monkeypatch.setitem(sys.modules, "ray", fake)
    from supernode.errors import InputError
    from supernode.parallel import run_tasks

    with pytest.raises(InputError) as refused:  # the machine's problem: one error: line
        run_tasks(pow, [(2, 3)], 2, use_ray=True)
    assert refused.value.path == "--ray"
    assert "could not start a local Ray instance: raylet could not start" in str(refused.value)
    assert calls == ["init", "shutdown"]


@pytest.mark.parametrize("args", [
    ("schedule", "--cluster", "gb200-nvl72-superpod", "--trace", "synthetic", "--jobs",
     "200000", "--workers", "2", "--json"),
    ("reliability", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-70b",
     "--runs", "100000", "--days", "365", "--workers", "2", "--json"),
])
def test_sigterm_to_a_worker_pool_exits_within_2_s(tmp_path: Path, args) -> None:
    def defaults() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    process = subprocess.Popen([*CLI, *args], cwd=tmp_path, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, preexec_fn=defaults,
                               env={**os.environ, "OMP_NUM_THREADS": "1",
                                    "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        deadline = time.monotonic() + 120
        while len(descendants(process.pid)) < 2 and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.05)
        time.sleep(1.0)  # the workers are busy
        children = descendants(process.pid)
        assert len(children) >= 2
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        assert time.monotonic() - sent < 2.0
        assert process.returncode == 143
        time.sleep(0.5)
        assert not [c for c in children if alive(c)]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
