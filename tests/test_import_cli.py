"""``supernode import nvidia-smi-topo``: output, --json, atomic --output, exit code 2."""

from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.spec.cluster import HostSpec
from supernode.spec.loader import validate_document

SAMPLE = str(resources.files("supernode") / "data" / "samples" / "nvidia-smi-topo-m_8xB300.txt")
ACC = ["--accelerator", "h100-sxm-80gb"]


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, ["import", "nvidia-smi-topo", *args])


def assert_bad_input(result, fragment: str) -> None:
    """Exit 2, one ``error:`` line on stderr naming the problem, nothing on stdout."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert fragment in lines[0]
    assert "Traceback" not in result.stderr


def test_yaml_output_is_a_host_block() -> None:
    result = run(SAMPLE, *ACC)
    assert result.exit_code == 0, result.stderr
    block = yaml.safe_load(result.stdout)
    host = validate_document(block["host"], HostSpec)
    assert host.accelerators_per_host == 8 and host.nics.count == 8
    assert "# 8 GPUs, 9 NICs" in result.stdout
    assert "28 x NV18" in result.stdout
    assert "mlx5_bond_0" in result.stdout and "not rails" in result.stdout
    assert "400 is assumed" in result.stdout


def test_json_output() -> None:
    result = run(SAMPLE, *ACC, "--json", "--nic-speed-gbit-per-s", "800")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"host", "summary", "notes"}
    assert data["host"]["nics"] == {"count": 8, "speed_gbit_per_s": 800}
    assert data["summary"]["nvlink_bonds"] == {"NV18": 28}
    assert data["summary"]["numa"]["1"] == ["GPU4", "GPU5", "GPU6", "GPU7"]
    validate_document(data["host"], HostSpec)


def test_output_file_written_atomically(tmp_path: Path) -> None:
    target = tmp_path / "host.yaml"
    result = run(SAMPLE, *ACC, "--output", str(target))
    assert result.exit_code == 0, result.stderr
    assert f"wrote {target}" in result.stdout
    assert yaml.safe_load(target.read_text())["host"]["accelerators_per_host"] == 8
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host.yaml"]  # no temp file left
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_output_not_touched_on_error(tmp_path: Path) -> None:
    target = tmp_path / "host.yaml"
    target.write_text("old: content\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n")
    result = run(str(bad), *ACC, "--output", str(target))
    assert_bad_input(result, "ragged row GPU1")
    assert target.read_text() == "old: content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "host.yaml"]


def test_output_into_missing_folder(tmp_path: Path) -> None:
    result = run(SAMPLE, *ACC, "--output", str(tmp_path / "nope" / "host.yaml"))
    assert_bad_input(result, "--output: folder")


def test_output_is_a_folder(tmp_path: Path) -> None:
    assert_bad_input(run(SAMPLE, *ACC, "--output", str(tmp_path)), "is a folder")


def _write(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "topo.txt"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


CASES = {
    "empty file": ("", "empty input"),
    "ragged rows": ("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n", "line 3: ragged row GPU1"),
    "unknown code": ("\tGPU0\tGPU1\nGPU0\t X \tQPI\nGPU1\tQPI\t X \n", "line 2: GPU0/GPU1: "
                     "unknown cell 'QPI'"),
    "binary garbage": (bytes(range(256)), "UTF-8"),
    "not topo output": ("Mon Jan  1 nvidia-smi\n", "line 1: expected the header row"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_files_exit_2(tmp_path: Path, name: str) -> None:
    text, fragment = CASES[name]
    assert_bad_input(run(_write(tmp_path, text), *ACC), fragment)


def test_missing_file() -> None:
    assert_bad_input(run("/nonexistent/topo.txt", *ACC), "no such file")


def test_accelerator_is_required() -> None:
    assert_bad_input(run(SAMPLE), "--accelerator: required")


@pytest.mark.parametrize("speed", ["abc", "0", "-1", "nan", "inf"])
def test_bad_speed(speed: str) -> None:
    assert_bad_input(run(SAMPLE, *ACC, "--nic-speed-gbit-per-s", speed),
                     "--nic-speed-gbit-per-s")


def test_markup_in_message_is_printed_verbatim(tmp_path: Path) -> None:
    """Regression: user text in a message must not be read as rich markup (MarkupError)."""
    text = "\tGPU0\tGPU1\nGPU0\t X \t[/x]\nGPU1\t[/x]\t X \n"
    assert_bad_input(run(_write(tmp_path, text), *ACC), "unknown cell '[/x]'")


DOC = Path(__file__).resolve().parents[1] / "docs" / "import.md"


def test_doc_output_matches_the_command() -> None:
    """docs/import.md shows the sample's output (long lists cut at '...'): it must be real."""
    block = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)[0]
    result = run(SAMPLE, "--accelerator", "gb300", "--nic-speed-gbit-per-s", "800")
    assert result.exit_code == 0, result.stderr
    actual = result.stdout.splitlines()
    position = 0
    for line in block.splitlines():
        if line.strip().startswith("..."):
            continue
        assert line in actual[position:], line
        position = actual.index(line, position) + 1


def test_doc_python_example_runs() -> None:
    """Every Python example of docs/import.md runs, and checks the figures it shows with its own
    asserts (an example without one would prove nothing but that it runs)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        assert re.search(r"^\s*assert ", block, re.M), block
        exec(compile(block, str(DOC), "exec"), {})  # noqa: S102 - our own documentation
