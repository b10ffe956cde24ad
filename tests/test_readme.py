"""The README's examples are run, and the figures they show must be in the real output."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all

README = Path(__file__).resolve().parents[1] / "README.md"
NUMBER = re.compile(r"\d[\d,]*\.?\d*%?")


def _examples() -> list[tuple[str, list[str]]]:
    """(command, shown output lines) for every `$ supernode ...` line in a code block."""
    out: list[tuple[str, list[str]]] = []
    blocks: list[list[str]] = []
    inside = False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside:
            blocks[-1].append(line)
    for lines in blocks:
        for i, line in enumerate(lines):
            if line.startswith("$ supernode "):
                shown = []
                for after in lines[i + 1:]:
                    if after.startswith("$ "):
                        break
                    shown.append(after)
                out.append((line[2:], shown))
    return out


EXAMPLES = _examples()


def test_readme_has_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("command, shown", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_runs_and_its_figures_are_real(command, shown, tmp_path):
    register_all()
    args = [a if a != "out/" else str(tmp_path) for a in shlex.split(command)[1:]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    output = result.output.replace(" ", "")
    figures = [n for line in shown if "..." not in line for n in NUMBER.findall(line)
               if len(n.strip(",.%")) >= 3]
    missing = [f for f in figures if f.rstrip(",.") not in output]
    assert len(missing) <= 0.2 * max(len(figures), 1), (missing, figures)
