"""Bad input through the CLI: exit code 2, one ``error:`` line on stderr, nothing on stdout.

The cluster-file cases of ``test_spec_errors`` run through every command that reads a
cluster file (``supernode topology FILE`` once it exists); the others through ``schema``
and ``import``. A few run in a real subprocess to check that no traceback ever escapes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_spec_errors import CASES, PRESET_TEXT, billion_laughs, mutate
from typer.testing import CliRunner

from supernode.commands import app, register_all

#: Commands that take a cluster file as their only argument.
CLUSTER_COMMANDS = ("topology",)


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def assert_bad_input(result, fragment: str = "") -> None:
    """Exit 2, one line on stderr starting ``error:``, no traceback, nothing on stdout."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr,
                                   result.exception)
    assert result.stdout == "", result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "Traceback" not in result.stderr
    assert fragment in lines[0], lines[0]


def cluster_command(name: str) -> str:
    register_all()
    commands = {c.name for c in app.registered_commands}
    assert name in commands, f"`supernode {name}` is not registered"
    return name


@pytest.mark.parametrize("command", CLUSTER_COMMANDS)
@pytest.mark.parametrize("case", list(CASES))
def test_cluster_file_cases(tmp_path: Path, command: str, case: str) -> None:
    change, path, _ = CASES[case]
    file = tmp_path / "cluster.yaml"
    file.write_text(yaml.safe_dump(mutate(change), sort_keys=False))
    assert_bad_input(run(cluster_command(command), str(file)), f"{file}: {path}")


WHOLE_DOCUMENT = {
    "malformed": ("name: x\nhost: [1, 2\nscale_up: {}\n", "line 3"),
    "empty": ("", "mapping"),
    "a list": ("- 1\n- 2\n", "mapping"),
    "binary": (bytes(range(128, 256)), "cannot read"),
    "control characters": ("name: a\x07b\n", "character"),
    "deep": ("name: " + "[" * 3000 + "]" * 3000 + "\n", "nests too deeply"),
    "alias bomb": (billion_laughs(9, "description:"), "alias"),
    "markup in a value": (PRESET_TEXT.replace("accelerator: h100-sxm-80gb",
                                              "accelerator: '[/bold]'"), "'[/bold]'"),
}


@pytest.mark.parametrize("command", CLUSTER_COMMANDS)
@pytest.mark.parametrize("case", list(WHOLE_DOCUMENT))
def test_cluster_file_whole_document(tmp_path: Path, command: str, case: str) -> None:
    text, fragment = WHOLE_DOCUMENT[case]
    file = tmp_path / "cluster.yaml"
    if isinstance(text, bytes):
        file.write_bytes(text)
    else:
        file.write_text(text)
    assert_bad_input(run(cluster_command(command), str(file)), fragment)


@pytest.mark.parametrize("command", CLUSTER_COMMANDS)
def test_cluster_missing_file(command: str) -> None:
    assert_bad_input(run(cluster_command(command), "/nonexistent/cluster.yaml"),
                     "no such file or preset")


def test_schema_unknown_document() -> None:
    assert_bad_input(run("schema", "clustr"), "unknown document 'clustr'")


def test_markup_is_printed_verbatim() -> None:
    """Regression: printed as rich markup, a ``[/]`` in user input raised MarkupError (a
    traceback, exit 1) and ``[red]`` vanished. The message must be printed as plain text."""
    assert_bad_input(run("schema", "[red]x"), "'[red]x'")
    assert_bad_input(run("schema", "[/]"), "'[/]'")


def test_import_bad_file(tmp_path: Path) -> None:
    file = tmp_path / "topo.txt"
    file.write_text("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n")
    assert_bad_input(run("import", "nvidia-smi-topo", str(file), "--accelerator", "gb300"),
                     "ragged row GPU1")


def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "supernode.cli", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_real_process_bad_input() -> None:
    """A real process: exit 2, exactly one stderr line, empty stdout, no traceback."""
    result = _subprocess("schema", "clustr")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error:")


def test_real_process_import_garbage(tmp_path: Path) -> None:
    file = tmp_path / "garbage.bin"
    file.write_bytes(bytes(range(256)) * 16)
    result = _subprocess("import", "nvidia-smi-topo", str(file), "--accelerator", "gb300")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("error:") and "Traceback" not in result.stderr
