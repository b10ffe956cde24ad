"""`supernode collective`: nccl-tests-style rows from the cluster's fabric."""

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.collectives import busbw_factor
from supernode.commands import app, register_all
from supernode.commands.collective import parse_size
from supernode.errors import InputError


def _run(*args):
    register_all()
    return CliRunner().invoke(app, ["collective", *args])


def test_busbw_is_algbw_times_the_nccl_factor():
    out = _run("--cluster", "hgx-h100", "--sizes", "1M,1G", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["ranks"] == 8 and data["tiers"] == ["scale_up"]
    for row in data["results"]:
        expected = row["algbw_gigabytes_per_s"] * busbw_factor("all_reduce", 8)
        assert row["busbw_gigabytes_per_s"] == pytest.approx(expected)
    small, large = data["results"]
    assert small["busbw_gigabytes_per_s"] < large["busbw_gigabytes_per_s"]


def test_crossing_the_domain_uses_the_scale_out_tier():
    out = _run("--cluster", "dgx-h100-superpod-su", "--ranks", "64", "--sizes", "1G", "--json")
    data = json.loads(out.stdout)
    assert data["tiers"] == ["scale_up", "scale_out"]
    inside = json.loads(_run("--cluster", "dgx-h100-superpod-su", "--ranks", "8", "--sizes",
                             "1G", "--json").stdout)
    assert (data["results"][0]["busbw_gigabytes_per_s"]
            < inside["results"][0]["busbw_gigabytes_per_s"])


def _assert_refused(out, option: str, fragment: str) -> None:
    """Exit 2, nothing on stdout, one ``error:`` line naming the option and the reason."""
    assert out.exit_code == 2, out.output
    assert out.stdout == "" and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option}: "), out.stderr
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize(("args", "fragment"), [
    (["--ranks", "100000"], "must be 2..8 (the cluster's GPUs)"),  # hgx-h100: 8 GPUs
    (["--op", "gossip"], "unknown collective 'gossip'"),
    (["--sizes", "lots"], "not a message size: 'lots'"),
    (["--sizes", "0"], "'0': sizes must be between 1 byte and 1 TiB"),
])
def test_bad_input_exits_2(args, fragment):
    _assert_refused(_run("--cluster", "hgx-h100", *args), args[0], fragment)


def test_parse_size_binary_units():
    assert parse_size("64K") == 65536 and parse_size("1G") == 2**30 and parse_size("12") == 12
    with pytest.raises(InputError):
        parse_size("2T")


@pytest.mark.parametrize(("args", "fragment"), [
    (["--ranks", "0"], "must be in 1.."),  # the one bound on every rank count
    (["--ranks", "9"], "must be 2..8"),
    (["--sizes", ","], "give at least one size"),
    (["--sizes", "0.5"], "'0.5': sizes must be between 1 byte and 1 TiB"),
])
def test_degenerate_input_exits_2(args, fragment):
    _assert_refused(_run("--cluster", "hgx-h100", *args), args[0], fragment)


def test_each_size_says_its_protocol_tiers_and_binding_tier():
    data = json.loads(_run("--cluster", "gb200-nvl72-superpod", "--ranks", "100", "--op",
                           "all_to_all", "--sizes", "1M,1G", "--json").stdout)
    assert data["tiers"] == ["scale_up", "scale_out"]  # 100 ranks straddle two racks
    for row in data["results"]:
        assert row["algorithm"] == "direct" and row["protocol"] in ("ll", "simple")
        assert row["tiers_crossed"] == ["scale_up", "scale_out"]
        assert row["binding_tier"] == "scale_out"  # the NICs bound an a2a across racks
        assert row["busbw_gigabytes_per_s"] < 50.0  # 400 Gb/s NIC per GPU
    small = json.loads(_run("--cluster", "hgx-h100", "--sizes", "64K,8G", "--json").stdout)
    protocols = [row["protocol"] for row in small["results"]]
    assert protocols[0] in ("ll", "ll128") and protocols[1] == "simple"
    text = _run("--cluster", "gb200-nvl72-superpod", "--ranks", "144", "--sizes", "1G").stdout
    assert "tiers crossed" in text and "binds" in text and "scale_up + scale_out" in text


@pytest.mark.parametrize(("cluster", "algorithm", "why"), [
    ("hgx-h100", "hierarchical", "several parts"),
    ("mi300x-8", "nvls", "in-switch reduction"),
    ("hgx-h100", "nvls_tree", "several NVLink domains"),
    ("mi300x-8", "collnet", "SHARP"),
    ("dgx-a100-selene-like", "nvls", "(nvlink3) has none"),
    ("hgx-h100", "dimension_ordered", "torus")])
def test_forced_algorithm_that_cannot_run_is_an_input_error(cluster, algorithm, why):
    """Never ``inf`` or a crash: exit 2 with one ``error:`` line saying why (also --json)."""
    for extra in ((), ("--json",)):
        out = _run("--cluster", cluster, "--algorithm", algorithm, "--sizes", "1M", *extra)
        assert out.exit_code == 2, out.output
        assert "Traceback" not in out.output and "inf" not in out.stdout
        lines = [line for line in out.output.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and why in lines[0] and algorithm in lines[0], out.output


DOC = Path(__file__).parent.parent / "docs" / "collectives.md"


def _doc_examples() -> list[tuple[str, list[str]]]:
    """(command, shown lines) of every `$ supernode collective` line in docs/collectives.md."""
    out = []
    for block in DOC.read_text(encoding="utf-8").split("```")[1::2]:
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ supernode collective"):
                shown = []
                for after in lines[i + 1:]:
                    if after.startswith("$ "):
                        break
                    shown.append(after)
                out.append((line[2:], shown))
    return out


def test_docs_examples_are_the_commands_real_output():
    """Every example in docs/collectives.md is the command's output (examples are tests,
    docs/architecture.md)."""
    examples = _doc_examples()
    assert len(examples) >= 5
    for command, shown in examples:
        register_all()
        out = CliRunner().invoke(app, shlex.split(command)[1:], terminal_width=200)
        produced = {" ".join(line.split()) for line in out.output.splitlines()}
        for line in shown:
            assert " ".join(line.split()) in produced, (command, line)


def test_docs_python_example_runs(capsys):
    """The Python example of docs/collectives.md prints what its comment says it prints."""
    code = DOC.read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    printed = [line.split("#", 1)[1].strip() for line in code.splitlines()
               if line.startswith("print(") and "#" in line]
    assert printed
    exec(compile(code, str(DOC), "exec"), {})
    assert capsys.readouterr().out.splitlines() == printed


def test_racks_prints_the_curve_over_whole_domains():
    """--racks 2,4,8,20 on the 8-rack SuperPOD: the cluster grows to hold 20 racks, one
    row per rack count and size, ranks = racks x 72, busbw non-increasing in racks."""
    out = _run("--cluster", "gb200-nvl72-superpod", "--racks", "2,4,8,20", "--sizes", "16G",
               "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert [p["racks"] for p in doc["curve"]] == [2, 4, 8, 20]
    assert [p["ranks"] for p in doc["curve"]] == [144, 288, 576, 1440]
    busbw = [p["results"][0]["busbw_gigabytes_per_s"] for p in doc["curve"]]
    assert all(b <= a * 1.002 for a, b in zip(busbw, busbw[1:], strict=False)), busbw
    assert busbw[-1] < busbw[0]
    row = doc["curve"][0]["results"][0]
    assert row["path"].startswith("nvls_tree/simple over scale_up")
    assert "in-network reduction (NVLS)" in row["effects"][0]
    assert any("scaled" in note for note in doc["notes"])
    table = _run("--cluster", "gb200-nvl72-superpod", "--racks", "2,20", "--sizes", "1G")
    assert table.exit_code == 0 and "1,440" in table.output and "effect" in table.output


@pytest.mark.parametrize("racks", ["0", "two", "", "2,-1", "99999999"])
def test_bad_rack_counts_are_one_error_line(racks):
    out = _run("--cluster", "gb200-nvl72-superpod", "--racks", racks)
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "--racks" in lines[0] and "Traceback" not in out.output
    both = _run("--cluster", "gb200-nvl72-superpod", "--racks", "2", "--ranks", "8")
    assert both.exit_code == 2 and "not both" in both.output
