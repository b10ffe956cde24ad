"""The Prometheus text-format parser: valid input, malformed lines, unknown metrics, huge
label sets, and a writer/parser round trip."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.errors import InputError
from supernode.monitor.exposition import Limits, exposition_text, parse_exposition

VALID = """# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1",hostname="n1"} 52
DCGM_FI_DEV_GPU_TEMP{gpu="1",hostname="n1",} 5.3e1 1700000000000
node_x{path="C:\\\\dir",quote="say \\"hi\\"",nl="a\\nb"} +Inf
weird { a = "1" , b="2" }   NaN
no_labels -0.5
other_metric{x="y"} 3
# EOF
this line is after EOF and ignored
"""


def test_parses_labels_escapes_values_and_timestamps():
    snap = parse_exposition(VALID, "s.prom")
    by_name = {dict(labels)["__name__"]: (dict(labels), v, ts) for labels, v, ts in
               snap.samples}
    temp = [s for s in snap.samples if dict(s[0])["__name__"] == "DCGM_FI_DEV_GPU_TEMP"]
    assert [v for _, v, _ in temp] == [52.0, 53.0]
    assert [ts for _, _, ts in temp] == [None, 1_700_000_000_000]
    labels, value, _ = by_name["node_x"]
    assert labels == {"__name__": "node_x", "path": "C:\\dir", "quote": 'say "hi"',
                      "nl": "a\nb"}
    assert value == math.inf
    assert math.isnan(by_name["weird"][1]) and by_name["weird"][0]["b"] == "2"
    assert by_name["no_labels"][1] == -0.5
    assert snap.has_timestamps


def test_unknown_metrics_are_skipped_and_counted():
    snap = parse_exposition(VALID, "s.prom", keep=lambda n: n.startswith("DCGM_"))
    assert len(snap.samples) == 2
    assert snap.skipped_samples == 4
    assert snap.skipped_names == {"node_x": 1, "weird": 1, "no_labels": 1, "other_metric": 1}


@pytest.mark.parametrize("text, line, message", [
    ('m{a="1"} 1\nm{a="1" 2\n', 2, "malformed sample"),
    ('m{a=1} 1\n', 1, "malformed sample"),
    ("m 1 2 3\n", 1, "malformed sample"),
    ("m one\n", 1, "malformed sample"),
    ("1metric 5\n", 1, "malformed sample"),
    ("# TYPE m maybe\n", 1, "malformed '# TYPE"),
    ("# TYPE m\n", 1, "malformed '# TYPE"),
    ('m{a="1",a="2"} 1\n', 1, "given twice"),
    ('m{a="1"} 1\nm{a="1"} 2\n', 2, "duplicate series (first at line 1)"),
    ("m 1 9999999999999999999\n", 1, "timestamp out of the int64"),
])
def test_malformed_lines_are_clear_errors(text, line, message):
    with pytest.raises(InputError) as err:
        parse_exposition(text, "bad.prom")
    assert err.value.path == f"line {line}"
    assert message in err.value.message
    assert err.value.render().startswith(f"bad.prom: line {line}: ")


def test_huge_label_sets_and_lines_are_refused_with_the_limit():
    many = ",".join(f'l{i}="v"' for i in range(65))
    with pytest.raises(InputError, match="65 labels; the limit is 64"):
        parse_exposition(f"m{{{many}}} 1\n", "big.prom")
    long_value = "x" * 5000
    with pytest.raises(InputError, match="5,000 bytes; the limit is 4,096"):
        parse_exposition(f'm{{a="{long_value}"}} 1\n', "big.prom")
    with pytest.raises(InputError, match="the limit is 65,536"):
        parse_exposition("m 1 " + " " * 70_000 + "\n", "big.prom")
    with pytest.raises(InputError, match="more than 2 kept series"):
        parse_exposition("a 1\nb 2\nc 3\n", "many.prom", limits=Limits(max_series=2))
    # Lines of metrics the rules do not read are syntax-checked, not label-limited.
    snap = parse_exposition(f"m{{{many}}} 1\n", "big.prom", keep=lambda n: False)
    assert snap.skipped_samples == 1


label_values = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


@settings(max_examples=60)
@given(st.lists(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
                                label_values, min_size=1, max_size=4),
                min_size=1, max_size=5,
                unique_by=lambda d: tuple(sorted((k, v) for k, v in d.items() if v))))
def test_writer_and_parser_round_trip(series):
    text = exposition_text([("supernode_test_info", "help \\ text", "gauge", series)])
    snap = parse_exposition(text, "round.prom")
    got = sorted(tuple(sorted((k, v) for k, v in labels if k != "__name__"))
                 for labels, _, _ in snap.samples)
    want = sorted(tuple(sorted((k, v) for k, v in s.items() if v != "")) for s in series)
    assert got == want
