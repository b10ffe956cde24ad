"""The package layers as a contract (docs/architecture.md, "Layers").

``pyproject.toml`` states the contract for import-linter: the top-level packages of
``supernode`` in layers (a package imports only the layers below it, never one above nor a
sibling of its own layer) and no import cycle between the modules of any package. CI runs
``lint-imports`` (``.ci/run``); these tests run the same check on the installed package
and show that it catches a violation: on a copy of the package with one deliberate upward
import, and with one deliberate cycle between two modules of a package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = ROOT / "src" / "supernode"


def _lint_imports() -> str:
    """The ``lint-imports`` script of this interpreter's environment."""
    here = Path(sys.executable).parent / "lint-imports"
    found = str(here) if here.exists() else shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports is not installed (pip install -e '.[dev]')")
    return found


def _contract_names() -> list[str]:
    """Names of the contracts in ``pyproject.toml``."""
    config = tomllib.loads(PYPROJECT.read_text("utf-8"))
    return [c["name"] for c in config["tool"]["importlinter"]["contracts"]]


def run_check(python_path: Path | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``lint-imports`` with the project's contracts; ``python_path`` first on the path
    (a copy of the package), else the installed package."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if python_path is not None:
        env["PYTHONPATH"] = str(python_path)
    return subprocess.run([_lint_imports(), "--no-cache", "--no-logo", str(PYPROJECT)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def package_copy(tmp_path: Path, edits: dict[str, str]) -> Path:
    """A copy of ``src/supernode`` (Python files only) under ``tmp_path`` with ``edits``
    (module path -> line) appended; returns the folder to put on the path."""
    shutil.copytree(PACKAGE, tmp_path / "supernode",
                    ignore=lambda folder, names: [
                        n for n in names if n == "__pycache__"
                        or (not n.endswith(".py") and not (Path(folder) / n).is_dir())])
    for module, line in edits.items():
        path = tmp_path / "supernode" / module
        path.write_text(path.read_text("utf-8") + f"\n{line}\n", "utf-8")
    return tmp_path


def test_the_package_keeps_every_contract(tmp_path):
    result = run_check(None, tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    names = _contract_names()
    assert len(names) >= 2
    for name in names:
        assert f"{name} KEPT" in out, out
    assert f"Contracts: {len(names)} kept, 0 broken." in out


def test_an_upward_import_breaks_the_layers(tmp_path):
    copy = package_copy(tmp_path, {
        "spec/base.py": "import supernode.design  # noqa: E402,F401  deliberate upward import"})
    result = run_check(copy, tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    layers = _contract_names()[0]
    assert f"{layers} BROKEN" in out, out  # (design imports spec: a package cycle as well)
    assert "supernode.spec is not allowed to import supernode.design" in out, out
    assert "supernode.spec.base -> supernode.design" in out, out


def test_a_cycle_between_modules_of_a_package_is_caught(tmp_path):
    # schedule.py imports levels.py; the reverse import closes a cycle
    copy = package_copy(tmp_path, {
        "collectives/levels.py": "import supernode.collectives.schedule  # noqa: E402,F401"})
    result = run_check(copy, tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    layers, acyclic = _contract_names()[:2]
    assert f"{layers} KEPT" in out, out
    assert f"{acyclic} BROKEN" in out, out
    assert "No cycles are allowed in supernode.collectives" in out, out
    assert ".levels -> .schedule" in out or ".schedule -> .levels" in out, out
