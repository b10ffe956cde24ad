"""Running ``promtool`` (Debian package ``prometheus``): find it, read its version, check
and unit-test rule files, and pick the window rules that test values follow. Used by
``supernode monitor rules``, ``supernode health``, ``supernode design`` and the tests."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from supernode.errors import InputError
from supernode.monitor.storage import Semantics

#: Seconds one promtool run may take before it is stopped.
TIMEOUT_S = 300
#: The Prometheus major whose window rules generated test values follow by default: the
#: current one. Fixed, so output never depends on the machine (pass 2 for Prometheus 2.x,
#: e.g. Debian 12's promtool 2.42).
DEFAULT_PROMETHEUS_MAJOR = 3


@dataclass(frozen=True)
class PromtoolResult:
    """The outcome of one promtool command."""

    command: tuple[str, ...]
    returncode: int
    output: str

    @property
    def ok(self) -> bool:
        """True when promtool exited 0."""
        return self.returncode == 0


def find_promtool() -> str | None:
    """The path of ``promtool`` on PATH, or None."""
    return shutil.which("promtool")


def promtool_version(binary: str) -> tuple[int, int, int]:
    """The (major, minor, patch) version ``binary --version`` reports."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                         timeout=60, check=False)
    found = re.search(r"version (\d+)\.(\d+)\.(\d+)", out.stdout + out.stderr)
    if found is None:
        raise RuntimeError(f"cannot read the version of {binary}")
    major, minor, patch = (int(g) for g in found.groups())
    return major, minor, patch


def installed_major(binary: str) -> int:
    """The Prometheus major of ``binary``, for test values that match it (``monitor rules
    --check`` without ``--prometheus-major``); InputError for a major other than 2 or 3."""
    major = promtool_version(binary)[0]
    if major not in (2, 3):
        raise InputError("--check", f"{binary} is Prometheus {major}.x; the test values "
                                    "follow 2.x or 3.x")
    return major


def semantics_for(major: int | None) -> tuple[Semantics, int]:
    """Window rules of Prometheus ``major`` and that major (None:
    :data:`DEFAULT_PROMETHEUS_MAJOR`, whatever is installed); InputError at
    ``--prometheus-major`` for another number."""
    if major is None:
        major = DEFAULT_PROMETHEUS_MAJOR
    if major not in (2, 3):
        raise InputError("--prometheus-major", f"2 or 3, got {major}")
    return Semantics(left_open=major >= 3), major


def check_major(binary: str, major: int) -> None:
    """InputError when ``binary`` is another Prometheus major than the test values follow
    (its unit tests would fail on the window rules, not on the rules)."""
    found = promtool_version(binary)
    if found[0] != major:
        raise InputError("--prometheus-major", f"the test values follow Prometheus {major}.x "
                         f"but {binary} is {'.'.join(map(str, found))}: pass "
                         f"--prometheus-major {found[0]}")


def run(binary: str, args: list[str], cwd: Path) -> PromtoolResult:
    """``promtool args...`` in ``cwd``; output is stdout and stderr together."""
    command = (binary, *args)
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return PromtoolResult(command, 124, f"promtool ran over {TIMEOUT_S} s")
    return PromtoolResult(command, done.returncode, done.stdout + done.stderr)


def check_rules(binary: str, rule_file: Path) -> PromtoolResult:
    """``promtool check rules FILE``."""
    return run(binary, ["check", "rules", rule_file.name], rule_file.parent)


def test_rules(binary: str, test_files: list[Path]) -> PromtoolResult:
    """``promtool test rules FILE...`` (run in the folder of the first file)."""
    return run(binary, ["test", "rules", *[f.name for f in test_files]], test_files[0].parent)
