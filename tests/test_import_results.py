"""Importers of benchmark output: real outputs parse, published figures are reproduced,
malformed or truncated output is one clear error naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from supernode.errors import InputError
from supernode.measurements.reader import read_results, results_from_text
from supernode.measurements.setfile import render_yaml, sets_from_document

DATA = Path(__file__).parent / "data"
SOURCES = yaml.safe_load((DATA / "nccl_tests" / "sources.yaml").read_text())["files"]
PUBLIC = {c["id"]: c for c in json.loads(
    (Path(__file__).parents[1] / "src/supernode/data/validation/public.json").read_text()
)["cases"]}
OPS = {"all_reduce": "all_reduce", "all_to_all": "all_to_all"}


def _read(name: str):
    meta = SOURCES[name]
    return read_results(DATA / "nccl_tests" / name, op=meta["op"], ranks=meta["ranks"])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_every_quoted_output_parses_with_its_stated_job(name):
    """Every nccl-tests/rccl-tests block the sources quote parses; op and ranks agree with
    what the source states (heading, command line) and every row is complete."""
    (measured,) = _read(name)
    meta = SOURCES[name]
    assert measured.op == meta["op"] and measured.job.ranks == meta["ranks"]
    assert measured.collectives, name
    for row in measured.collectives:
        for t in (row.out_of_place, row.in_place):
            assert t.time_s > 0 and t.busbw_bytes_per_s > 0
            # nccl-tests: algbw = size / time (printed to ~4 digits)
            assert row.message_bytes / t.time_s == pytest.approx(t.algbw_bytes_per_s, rel=6e-3)


def test_published_busbw_of_every_traced_case_is_the_parsed_figure():
    """Round trip: the out-of-place busbw of the row at the case's message size equals the
    figure in public.json, for every case whose source prints nccl-tests output."""
    traced = set()
    for name, meta in SOURCES.items():
        (measured,) = _read(name)
        by_size = {r.message_bytes: r for r in measured.collectives}
        for case_id in meta["cases"]:
            case = PUBLIC[case_id]
            row = by_size[case["message_bytes"]]
            assert measured.op == OPS[case["collective"]]
            assert measured.job.ranks == case["ranks"]
            busbw = row.out_of_place.busbw_bytes_per_s / 1e9
            assert busbw == pytest.approx(case["measured"]["busbw_gigabytes_per_s"], abs=5e-3)
            traced.add(case_id)
    # Every case citing Oracle's READMEs, except MI300X whose README gives prose, not output;
    # the Azure pages give Markdown tables, not nccl-tests output.
    cited = {i for i, c in PUBLIC.items() if c["kind"] == "collective"
             and "oci-gpu-quickstarts" in c["source"] and "MI300X" not in c["source"]}
    assert traced == cited and len(traced) == 15


def test_jobs_inferred_from_the_output_alone():
    """Without hints: the op from the program line, file name or columns; ranks from the
    device list, the count column or busbw/algbw; hosts from the device list."""
    (gb300,) = read_results(DATA / "nccl_tests" / "oci-gb300-allreduce-2rack.txt")
    assert (gb300.op, gb300.op_source) == ("all_reduce", "program")
    assert (gb300.job.ranks, gb300.job.ranks_source) == (128, "rank list")
    assert (gb300.job.host_count, gb300.job.ranks_per_host) == (32, 4)
    assert gb300.job.hosts == ("GPU-5705", "GPU-391")        # the two the list shows
    assert gb300.library_version == "2.28.7+cuda13.0"
    (pollara,) = read_results(DATA / "nccl_tests" / "oci-mi355x-pollara-alltoall-4node.txt")
    assert (pollara.job.ranks, pollara.job.ranks_source) == (32, "count column")
    (gb200,) = read_results(DATA / "nccl_tests" / "oci-gb200-allreduce-3rack.txt")
    assert (gb200.job.ranks, gb200.job.ranks_source) == (192, "busbw/algbw")
    (a100,) = read_results(DATA / "nccl_tests" / "oci-hpc-oke-a100-allreduce-2node.txt")
    assert (a100.job.host_count, a100.job.ranks_per_host) == (2, 8)
    assert a100.job.device_names == ("NVIDIA A100-SXM4-40GB",)
    assert [r.message_bytes for r in a100.collectives] == [2**30, 2**31, 2**32, 2**33]


def test_a_label_that_contradicts_the_output_is_refused():
    """The GB200 '2 Nodes' block is a 64-rank run (busbw/algbw = 1.969): --ranks 8 is refused."""
    with pytest.raises(InputError, match="implies 64 ranks"):
        read_results(DATA / "nccl_tests" / "oci-gb200-allreduce-2node.txt", ranks=8)
    with pytest.raises(InputError, match="contradicts the output"):
        read_results(DATA / "nccl_tests" / "oci-gb300-allreduce-2rack.txt", op="alltoall")


def test_all_gather_and_alltoall_need_op_when_nothing_tells_them_apart(tmp_path):
    text = (DATA / "nccl_tests" / "oci-mi355x-pollara-alltoall-2node.txt").read_text()
    path = tmp_path / "run.log"
    path.write_text(text)
    with pytest.raises(InputError, match="pass --op"):
        read_results(path)
    (measured,) = read_results(path, op="all_gather")
    assert measured.op == "all_gather" and measured.job.ranks == 16


ROWS = (DATA / "nccl_tests" / "oci-gb300-allreduce-1rack.txt").read_text().splitlines()


def _row_line() -> int:
    return next(i for i, line in enumerate(ROWS) if line.strip().startswith("8589934592"))


@pytest.mark.parametrize("damage, message", [
    (lambda lines, i: lines[:i] + [lines[i][:60]], "row is cut off"),
    (lambda lines, i: lines[:i] + [lines[i][:60]] + lines[i + 1:], "row is cut off"),
    (lambda lines, i: lines[:i] + [lines[i].replace("930.48", "9x0.4", 1).replace(
        "897.52", "89z.5")] + lines[i + 1:], "busbw is '89z.5'"),
    (lambda lines, i: lines[:i] + [lines[i] + " 7"] + lines[i + 1:], "row has 14 fields"),
])
def test_malformed_or_truncated_output_names_the_line(damage, message):
    i = _row_line()
    text = "\n".join(damage(list(ROWS), i))
    with pytest.raises(InputError) as err:
        results_from_text(text, "gb300.txt")
    assert message in str(err.value) and f"line {i + 1}" in str(err.value)


def test_not_a_results_file():
    with pytest.raises(InputError, match="not a results file"):
        results_from_text("hello\nworld\n", "x.txt")
    with pytest.raises(InputError, match="no nccl-tests/rccl-tests result rows"):
        results_from_text("#  size  count  type  redop  root  time  algbw  busbw  #wrong  "
                          "time  algbw  busbw  #wrong\n", "x.txt")


def test_rows_split_by_nccl_debug_lines_are_joined():
    """mpirun interleaves NCCL INFO lines with nccl-tests rows (NVIDIA/nccl#1453 shows
    '[0]   8192  2048  float  sum  -1[0] host:1:1 [0] NCCL INFO 8192 Bytes -> Algo 0 ...')."""
    header = ("[0] #       size         count      type   redop    root     time   algbw   busbw "
              "#wrong     time   algbw   busbw #wrong")
    text = "\n".join([
        "# Collective test starting: all_reduce_perf", header,
        "[0]         8192          2048     float     sum      -1[0] h100clust-worker-1:497888:"
        "497888 [0] NCCL INFO 8192 Bytes -> Algo 0 proto 0 time 26.549810",
        "[0] h100clust-worker-1:497888:497888 [0] NCCL INFO 8192 Bytes -> Algo 0 proto 0 time "
        "26.549810",
        "[0]     75.38    0.11    0.21      0     75.10    0.11    0.21      0",
    ])
    (measured,) = results_from_text(text, "x.log", ranks=24)
    (row,) = measured.collectives
    assert row.message_bytes == 8192 and row.in_place.time_s == pytest.approx(75.10e-6)
    assert row.line == 3
    (choice,) = measured.nccl.tuning
    assert (choice.message_bytes, choice.algorithm, choice.protocol) == (8192, "TREE", "LL")


def test_nccl_debug_log():
    (log,) = read_results(DATA / "nccl_debug" / "nccl-issue-1453-h100-24rank.txt")
    n = log.nccl
    assert (n.ranks, n.nodes, n.local_ranks, n.mnnvl) == (24, 3, 8, False)
    assert (n.coll_channels, n.nvls_channels, n.p2p_channels) == (16, 16, 16)
    assert n.nvls_available is True and n.env["NCCL_CROSS_NIC"] == "2"
    assert len(n.rings) == 2 and n.rings[0][:4] == (0, 7, 6, 5)
    assert (n.tuning[0].message_bytes, n.tuning[0].algorithm) == (8589934592, "RING")
    (lines,) = read_results(DATA / "nccl_debug" / "nccl-debug-lines.txt")
    m = lines.nccl
    assert m.hcas == ("mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5") and m.sharp is True
    assert m.network == "Socket"                          # the last network line wins
    assert m.nvls_available is False and m.trees == 1
    assert m.transports["NET/IB+GDRDMA"] == 1 and m.transports["P2P/IPC"] == 1
    assert m.transports["NET/Socket"] == 1 and m.gdr is True


def test_perftest_outputs():
    (sweep,) = read_results(DATA / "perftest" / "nvidia-gpu-operator-ib_write_bw-sweep.txt")
    assert sweep.op == "ib_write_bw" and len(sweep.links) == 23
    assert sweep.attributes["link_type"] == "Ethernet" and sweep.attributes["device"] == "mlx5_0"
    big = sweep.links[-1]
    assert big.message_bytes == 8388608 and big.bw_average_bytes_per_s == pytest.approx(
        92.39e9 / 8)
    (oke,) = read_results(DATA / "perftest" / "oci-hpc-oke-ib_write_bw.txt")
    assert oke.attributes["qps"] == "4" and oke.links[0].bw_peak_bytes_per_s == pytest.approx(
        98.01e9 / 8)
    (spark,) = read_results(DATA / "perftest" / "dgx-spark-ib_write_bw-infinite.txt")
    assert all(r.bw_peak_bytes_per_s is None for r in spark.links) and len(spark.links) == 5
    (lat,) = read_results(DATA / "perftest" / "dgx-spark-ib_write_lat.txt")
    row = lat.links[0]
    assert lat.op == "ib_write_lat" and row.message_bytes == 2
    assert (row.t_typical_s, row.t_p99_s, row.t_p999_s) == pytest.approx((1.47e-6, 1.57e-6,
                                                                           1.93e-6))
    broken = (DATA / "perftest" / "dgx-spark-ib_write_lat.txt").read_text().replace(
        "1.57                    1.93", "1.57")
    with pytest.raises(InputError, match="line 19: row has 8 fields"):
        results_from_text(broken, "lat.txt")


def test_nvbandwidth_outputs():
    (matrix,) = read_results(DATA / "nvbandwidth" / "nvbandwidth-readme-d2d-write-ce.txt")
    (case,) = matrix.copies
    assert case.test == "device_to_device_memcpy_write_ce" and len(case.values) == 8
    assert case.values[0][1] == pytest.approx(276.07e9) and case.values[0][0] == 0.0
    (sums,) = read_results(DATA / "nvbandwidth" / "oci-gb300-sum.txt")
    by_test = {c.test: c for c in sums.copies}
    assert by_test["device_to_device_memcpy_read_ce"].sum_value == pytest.approx(9222.82e9)
    assert by_test["device_to_device_latency_sm"].unit == "s"
    broken = (DATA / "nvbandwidth" / "nvbandwidth-readme-d2d-write-ce.txt").read_text(
        ).replace("276.07    276.36", "276.07")
    with pytest.raises(InputError, match="line 4: matrix row has 7 values"):
        results_from_text(broken, "nvb.txt")


def test_measurement_file_round_trip():
    sets = [*_read("oci-gb300-allreduce-2rack.txt"),
            *read_results(DATA / "perftest" / "dgx-spark-ib_write_lat.txt"),
            *read_results(DATA / "nvbandwidth" / "nvbandwidth-readme-h2d.txt"),
            *read_results(DATA / "nccl_debug" / "nccl-issue-1453-h100-24rank.txt")]
    back = sets_from_document(render_yaml(sets), "saved.yaml")
    assert len(back) == 4
    a, b = sets[0], back[0]
    assert (b.op, b.job.ranks, b.job.host_count, b.library_version) == (
        a.op, a.job.ranks, a.job.host_count, a.library_version)
    for x, y in zip(a.collectives, b.collectives, strict=True):
        assert y.message_bytes == x.message_bytes
        assert y.out_of_place.busbw_bytes_per_s == pytest.approx(x.out_of_place.busbw_bytes_per_s)
    assert back[1].links[0].t_p999_s == pytest.approx(1.93e-6)
    assert back[2].copies[0].values[0][0] == pytest.approx(26.03e9)
    assert back[3].nccl.env == sets[3].nccl.env and back[3].nccl.rings == sets[3].nccl.rings
    with pytest.raises(InputError, match="sets"):
        sets_from_document("schema: supernode-measurements/1\nsets: []\n", "x.yaml")



def test_a_set_file_written_before_still_loads():
    """``measurements/saved-sets.yaml`` was written by the set file's earlier, separately
    declared schema (every tool, a tuning log, iteration times): it loads, and is written
    back byte for byte."""
    text = (DATA / "measurements" / "saved-sets.yaml").read_text(encoding="utf-8")
    sets = sets_from_document(text, "saved-sets.yaml")
    assert render_yaml(sets) == text
    assert [s.tool for s in sets] == ["nccl-tests", "perftest", "nvbandwidth", "nvbandwidth",
                                      "nccl-debug", "nccl-debug"]
    assert sets[0].collectives[0].out_of_place.iteration_min_s == pytest.approx(23.9e-3)
    assert sets[0].collectives[0].in_place.iteration_min_s is None
    assert sets[5].nccl.tuning[0].op is None and sets[5].nccl.tuning[0].line is None

def test_non_finite_values_are_refused():
    text = (DATA / "nccl_tests" / "oci-gb300-allreduce-1rack.txt").read_text().replace(
        "897.52", "   inf", 1)
    with pytest.raises(InputError, match="line 16: busbw is inf; a finite number"):
        results_from_text(text, "x.txt")
    with pytest.raises(InputError, match="finite"):
        results_from_text("SUM device_local_copy nan\n", "nvb.txt")
