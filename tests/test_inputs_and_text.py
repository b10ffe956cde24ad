"""The one input path and the one way to show user text.

``supernode.inputs``: regular files only, bounded reads, path text the OS can take, probes
that never raise. ``supernode.spec.loader``: one parser per format with the same limits
and messages. ``supernode.textsafe``: what rich and matplotlib show is exactly the text.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.text import Text
from rich.console import Console

from supernode.errors import InputError
from supernode.inputs import check_path_text, exists, is_file, path_kind, read_text_file
from supernode.spec.loader import parse_json, parse_text
from supernode.textsafe import one_line, plot_safe, printable, rich_safe


@pytest.mark.parametrize("path, fragment", [("", "empty path"), ("a\x00b", "NUL"),
                                            ("a" * 256, "255 bytes per name"),
                                            ("a/" * 2100, "the limit is 4,095"),
                                            ("é" * 128, "256 bytes")])
def test_path_text(path: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        check_path_text(path, "--x")
    assert path_kind(path) is None and not is_file(path) and not exists(path)


def test_fifo_is_refused_without_blocking(tmp_path: Path, monkeypatch) -> None:
    """Opening a FIFO that has no writer blocks unless the open is non-blocking: every open
    here must be, and nothing is read from it (the kind is checked first)."""
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    real_open, opened, reads = os.open, [], []

    def non_blocking_open(path, flags, *args, **kwargs):
        opened.append(flags)
        if not flags & os.O_NONBLOCK:
            raise AssertionError(f"{path} opened without O_NONBLOCK: it would block")
        return real_open(path, flags, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", non_blocking_open)
        patch.setattr(os, "read", lambda fd, size: reads.append(size) or b"")
        with pytest.raises(InputError, match="not a regular file"):
            read_text_file(fifo)
    assert opened and reads == [] and path_kind(fifo) == "other"


def test_read_is_bounded_whatever_st_size_says(tmp_path: Path) -> None:
    assert os.stat("/proc/self/maps").st_size == 0  # a regular file that lies about its size
    with pytest.raises(InputError, match="over the limit of 10 bytes"):
        read_text_file("/proc/self/maps", limit_bytes=10)
    small = tmp_path / "s.txt"
    small.write_text("abc")
    with pytest.raises(InputError, match="3 bytes; the limit is 2"):
        read_text_file(small, limit_bytes=2)


@pytest.mark.parametrize("text, fragment", [
    ('{"a": 1, "a": 2}', "'a' is given twice"),
    ('{"a": NaN}', "NaN is not a finite number"),
    ('{"a": [1e999]}', "a[0]: inf is not a finite number"),
    ('{"a": 123456789012345678901234567890}', "a: integer"),
    ("[" * 101 + "]" * 101, "more than 100 levels"),
])
def test_json_limits_and_messages(text: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment.replace("[", r"\[")):
        parse_json(text)


@pytest.mark.parametrize("text, fragment", [
    ("a: 1\na: 2\n", "'a' is given twice"),
    ("a: .inf\n", "a: inf is not a finite number"),
    ("a: !!binary aGk=\n", "a: the YAML tag !!binary is not supported"),
    ("a: !!set {x}\n", "a: the YAML tag !!set is not supported"),
    ("!!bool maybe\n", "the YAML tag !!bool is not supported"),
    ("a: {b: [1, !!int x]}\n", "a.b[1]: the YAML tag !!int is not supported"),
    ("a: &r [*r]\n", "a[0]: refers to a mapping or list that contains it"),
    ("a: 123456789012345678901234567890\n", "a: integer"),
    ("a: " + "[" * 101 + "]" * 101 + "\n", "more than 100 levels"),
])
def test_yaml_limits_and_messages(text: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment.replace("[", r"\[")):
        parse_text(text)


def test_yaml_and_json_count_nodes_alike() -> None:
    """One document, both formats: the same count, the same limit, the same message."""
    keys = {f"k{i}": i for i in range(100_000)}  # 200,001 nodes with the root
    import json

    def as_yaml(mapping: dict[str, int]) -> str:
        # a block mapping written directly: what yaml.safe_dump writes (less its key
        # order), without its pure-Python emitter's seconds
        return "".join(f"{key}: {value}\n" for key, value in mapping.items())

    messages = []
    for parse, text in ((parse_json, json.dumps(keys)), (parse_text, as_yaml(keys))):
        with pytest.raises(InputError) as info:
            parse(text)
        messages.append(info.value.message.split(" by line")[0].split(";")[0])
    assert messages[0] == messages[1] == ("document has more than 200,000 nodes (keys, "
                                          "values, lists and mappings)")
    keys.pop("k0")
    assert parse_json(json.dumps(keys)) == parse_text(as_yaml(keys)) == keys


def test_dates_are_text() -> None:
    assert parse_text("a: 2024-01-01\nb: 2001-13-45\n") == {"a": "2024-01-01",
                                                           "b": "2001-13-45"}


@given(st.text())
def test_rich_prints_user_text_literally(text: str) -> None:
    with open(os.devnull, "w") as sink:
        console = Console(record=True, width=10_000, color_system=None, file=sink,
                          emoji=False)  # as the CLI's consoles
        console.print(rich_safe(text, None), end="", soft_wrap=True, highlight=False)
    assert console.export_text() == printable(text, None)


@given(st.text())
def test_matplotlib_draws_user_text_literally(text: str) -> None:
    label = Text(0, 0, plot_safe(text))
    shown, math = label._preprocess_math(label.get_text())
    assert math is False and shown == printable(text)


@given(st.text())
def test_one_line_is_one_line(text: str) -> None:
    line = one_line(text)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    line.encode("utf-8")  # no lone surrogates left: it can be written anywhere
    assert InputError(text, text, source=text).render().count("\n") == 0


def test_dump_yaml_is_the_pure_python_emitters_text():
    """Differential: the C emitter dump_yaml uses writes exactly what PyYAML's pure-Python
    safe dumper writes, for the packaged documents and strings that need quoting."""
    import json
    from pathlib import Path

    import yaml

    from supernode.spec.documents import YAML_STYLE, dump_yaml

    data = Path(__file__).resolve().parents[1] / "src" / "supernode" / "data"
    docs = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(data.rglob("*.yaml"))]
    docs.append(json.loads((data / "validation" / "public.json").read_text(encoding="utf-8")))
    docs.append({"s": "a\u2028b", "t": "x\ny", "u": "é" * 200, "f": 1e-320, "g": 1e308,
                 "k": "- x", "l": "yes", "m": "0x10", "n": "x: y", "o": None, "p": [1, [2]]})
    assert len(docs) > 20
    for doc in docs:
        assert dump_yaml(doc) == yaml.safe_dump_all([doc], **YAML_STYLE)
    assert dump_yaml({"a": 1}, {"b": 2}) == yaml.safe_dump_all([{"a": 1}, {"b": 2}],
                                                                **YAML_STYLE)
