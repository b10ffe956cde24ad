"""`supernode collective`: nccl-tests-style rows from the cluster's fabric."""

import json

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


@pytest.mark.parametrize("args", [["--ranks", "100000"], ["--op", "gossip"],
                                  ["--sizes", "lots"], ["--sizes", "0"]])
def test_bad_input_exits_2(args):
    out = _run("--cluster", "hgx-h100", *args)
    assert out.exit_code == 2 and "Traceback" not in out.output


def test_parse_size_binary_units():
    assert parse_size("64K") == 65536 and parse_size("1G") == 2**30 and parse_size("12") == 12
    with pytest.raises(InputError):
        parse_size("2T")


@pytest.mark.parametrize("args", [["--ranks", "0"], ["--sizes", ","], ["--sizes", "0.5"]])
def test_degenerate_input_exits_2(args):
    out = _run("--cluster", "hgx-h100", *args)
    assert out.exit_code == 2 and "Traceback" not in out.output
