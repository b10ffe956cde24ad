"""YAML has one home: read by the strict loader, written by one dump function, one style."""

from __future__ import annotations

import re
from pathlib import Path

from supernode.spec.documents import YAML_STYLE, dump_yaml, parse_text

SRC = Path(__file__).resolve().parents[1] / "src" / "supernode"
DIRECT = re.compile(r"\byaml\.(safe_)?(load|dump)(_all)?\(|\bimport yaml\b")


def test_only_spec_documents_calls_pyyaml():
    callers = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                     if DIRECT.search(p.read_text(encoding="utf-8")))
    assert callers == ["spec/documents.py"]


def test_dump_yaml_is_one_style_and_reads_back():
    data = {"z": 1, "note": "§ " + "long " * 40, "rows": [[1, 2], {"a": None}]}
    text = dump_yaml(data)
    assert text.index("z:") < text.index("note:") and "§" in text
    assert len(text.splitlines()) == 6 and YAML_STYLE["default_flow_style"] is False
    assert parse_text(text) == data
    assert dump_yaml(data, data) == f"{text}---\n{text}"
