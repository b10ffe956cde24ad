"""User strings in generated files: a hostile cluster name cannot break out of a comment of
the bench-plan script or the monitor rule files (nothing runs, no YAML key appears), and
names are literal text in report.md and decisions.md."""

from __future__ import annotations

import csv
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.report.decisions_md import render_decisions
from supernode.textsafe import comment_safe, markdown_safe

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "h100-4su.yaml"
SHELL_BREAKOUT = "x\ntouch {pwned}\n#"
YAML_BREAKOUT = "x\ninjected: true\nalso\u2028more: 1\r\n#"


def run(*args: object):
    register_all()
    return CliRunner().invoke(app, [str(a) for a in args])


def hostile_cluster(folder: Path, name: str) -> Path:
    doc = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    doc["name"] = name
    path = folder / "cluster.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_comment_safe_leaves_one_line() -> None:
    for text in (SHELL_BREAKOUT, YAML_BREAKOUT, "a\x85b\x1b[31m\udcff"):
        out = comment_safe(text)
        assert len(out.splitlines()) == 1 and out.isprintable()


def test_bench_plan_script_with_a_hostile_name_runs_nothing(tmp_path: Path) -> None:
    pwned = tmp_path / "PWNED"
    cluster = hostile_cluster(tmp_path, SHELL_BREAKOUT.format(pwned=pwned))
    script = tmp_path / "plan.sh"
    result = run("bench-plan", "--cluster", cluster, "--out", script)
    assert result.exit_code == 0, result.output
    assert os.access(script, os.X_OK)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    text = script.read_text(encoding="utf-8")
    for line in text.splitlines():
        assert "touch" not in line or line.startswith("#"), line
    # run it: the host files are unset, so it stops at the first run; the name never runs
    env = {"PATH": os.environ["PATH"], "OUT": str(tmp_path / "logs"),
           "NCCL_TESTS": str(tmp_path / "none")}
    subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True,
                   check=False, timeout=30)
    assert not pwned.exists()


def test_monitor_rule_files_with_a_hostile_name_get_no_extra_keys(tmp_path: Path) -> None:
    cluster = hostile_cluster(tmp_path, YAML_BREAKOUT)
    out = tmp_path / "rules"
    result = run("monitor", "rules", "--cluster", cluster, "--out", out, "--quiet")
    assert result.exit_code == 0, result.output
    assert set(yaml.safe_load((out / "rules.yaml").read_text())) == {"groups"}
    for name in ("rules-tests.yaml", "rules-tests-long.yaml"):
        keys = set(yaml.safe_load((out / name).read_text()))
        assert "injected" not in keys and "more" not in keys and "rule_files" in keys
    for path in out.iterdir():
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")  # the readers' line ends (a U+2028 in a value is text)
        assert not any(line.startswith(("injected", "more")) for line in lines), path
    rows = [r for r in csv.reader((out / "dcgm-counters.csv").read_text().splitlines())
            if r and not r[0].startswith("#")]
    assert all(r[0].startswith(("DCGM_FI_", "DCGM_EXP_")) for r in rows)


def test_markdown_safe_is_literal_on_one_line() -> None:
    text = markdown_safe("a *b* _c_ [l](http://x) <b>|</b> `x`\n# h tp_inside")
    assert "\n" not in text
    assert re.search(r"(?<!\\)[*\[\]<>|`#]", text) is None  # every one escaped
    assert "tp_inside" in text  # an underscore inside a word is never markup


def test_decisions_md_escapes_names() -> None:
    results = {"cluster": {"name": "evil\n# heading <script>"},
               "workload": {"name": "w*x*"},
               "decisions": [{"id": "D1", "title": "t", "status": "proposed",
                              "context": "ctx [link](x)", "decision": "d",
                              "options": [{"name": "o\n## x", "chosen": True,
                                           "figures": [], "note": None}],
                              "consequences": ["<img src=x>"]}]}
    text = render_decisions(results)
    assert re.search(r"(?<!\\)[<\[*]", text.split("\n", 1)[0]) is None
    assert "\n# heading" not in text and "\n## x" not in text
    assert "* \\<img src=x\\>" in text


@pytest.mark.parametrize("command", [
    ("export", "--format", "all"),
    ("monitor", "rules"),
])
def test_hostile_names_in_other_outputs_stay_in_comments(tmp_path: Path,
                                                         command: tuple[str, ...]) -> None:
    cluster = hostile_cluster(tmp_path, YAML_BREAKOUT)
    out = tmp_path / "out"
    result = run(*command, "--cluster", cluster, "--out", out)
    assert result.exit_code == 0, result.output
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".yaml", ".conf", ".csv", ".sh"):
            lines = path.read_text(encoding="utf-8").split("\n")
            assert not any(line.startswith(("injected", "more")) for line in lines), path
