"""The CLI shell around every command: one-line usage errors, help, defects, lazy loading.

Usage errors are rendered once, in the root group, for every command including those
added later: each registered command is tried with an unknown option, a missing value
and an extra argument.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_robust_defects import assert_bad_input, run

from supernode.commands import all_commands, app


def _leaf_commands() -> list[list[str]]:
    out = []
    for name, command in sorted(all_commands().items()):
        subs = getattr(command, "commands", None)
        out += [[name, sub] for sub in sorted(subs)] if subs else [[name]]
    return out


LEAVES = _leaf_commands()


@pytest.mark.parametrize("path", LEAVES, ids=[" ".join(p) for p in LEAVES])
def test_unknown_option_on_every_command_is_one_line(path: list[str]) -> None:
    assert_bad_input(run(*path, "--no-such-option"), "--no-such-option: no such option")


@pytest.mark.parametrize("args, fragment", [
    (["plan", "--clustr", "x"], "--clustr: no such option; did you mean --cluster?"),
    (["plan", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--top", "0"],
     "--top: input should be greater than or equal to 1, got '0' (Distinct layouts"),
    (["estimate", "--tp", "x"], "--tp: input should be a valid integer"),
    (["topology"], "CLUSTER: required (Cluster file (YAML/JSON) or preset name)"),
    (["collective", "--cluster"], "--cluster: needs a value (Cluster file or preset name)"),
    (["simulate", "--json=1", "--cluster", "x"], "--json: takes no value"),
    (["topolgy", "x"], "no such command 'topolgy'; did you mean topology?"),
    (["topology", "a", "b"], "unexpected extra argument"),
    (["catalog", "shw"], "no such command 'shw'; did you mean show?"),
])
def test_usage_errors_name_the_option_and_what_it_takes(args: list[str], fragment: str):
    assert_bad_input(run(*args), fragment)


@pytest.mark.parametrize("args", [[], ["catalog"], ["import"], ["--help"]])
def test_bare_groups_print_help(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 0 and "Usage" in result.stdout and result.stderr == ""


def test_control_characters_stay_on_one_line() -> None:
    """A cluster name with a newline split the error line."""
    line = assert_bad_input(run("topology", "a\nb\x1b[31m"), "no such file or preset")
    assert "a\\nb\\x1b[31m" in line


def test_a_defect_is_one_line_exit_70(monkeypatch) -> None:
    from supernode.commands import schema

    def broken(document: str) -> dict:
        raise RuntimeError("boom")

    monkeypatch.setattr(schema, "json_schema", broken)
    monkeypatch.delenv("SUPERNODE_TRACEBACK", raising=False)
    result = run("schema", "cluster")
    assert result.exit_code == 70 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(
        "error: internal error: RuntimeError at test_cli_shell.py")
    monkeypatch.setenv("SUPERNODE_TRACEBACK", "1")
    shown = run("schema", "cluster")
    assert shown.exit_code == 70 and "Traceback" in shown.stderr and "boom" in shown.stderr


def test_a_command_loads_only_its_module() -> None:
    code = ("import sys; from supernode.commands import load_command; "
            "assert load_command('schema') is not None; "
            "print(sorted(m for m in sys.modules if m.startswith('supernode.commands.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "supernode.commands.schema" in out and "supernode.commands.simulate" not in out


def test_app_knows_every_command_when_listing() -> None:
    names = set(all_commands())
    assert {"topology", "simulate", "sweep", "catalog", "import"} <= names
    assert app.registered_commands  # registered on import


def test_closed_stdout_ends_quietly() -> None:
    proc = subprocess.run(f"{sys.executable} -m supernode.cli catalog list | head -c 10",
                          shell=True, capture_output=True, text=True, check=False)
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
