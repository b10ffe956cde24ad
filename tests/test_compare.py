"""compare: placement of measured jobs, predictions, tier bounds, findings and the gate."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from supernode.cluster.load import load_cluster
from supernode.collectives.validate import predict_collective_case
from supernode.errors import InputError
from supernode.measurements import (
    Gate,
    compare_results,
    compare_set,
    comparison_findings,
    measured_groups,
    place_job,
    read_results,
)
from supernode.measurements.model import JobContext
from supernode.measurements.reader import results_from_text
from supernode.measurements.report import report_dict

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).parents[1] / "examples"
NCCL = DATA / "nccl_tests"
CASES = {c["id"]: c for c in json.loads(
    (Path(__file__).parents[1] / "src/supernode/data/validation/public.json").read_text()
)["cases"]}
SUPERPOD = load_cluster("gb200-nvl72-superpod")


@pytest.mark.parametrize("name, cluster, case", [
    ("oci-gb200-allreduce-2rack.txt", "gb200-nvl72-superpod",
     "oci_gb200_allreduce_2rack_128gpu@8GiB"),
    ("oci-gb200-allreduce-3rack.txt", "gb200-nvl72-superpod",
     "oci_gb200_allreduce_3rack_192gpu@8GiB"),
    ("oci-gb300-allreduce-1rack.txt", "gb300-nvl72", "oci_gb300_allreduce_1rack_64gpu@16GiB"),
    ("oci-gb200-alltoall-1rack.txt", "gb200-nvl72", "oci_gb200_alltoall_1rack_64gpu@8GiB"),
])
def test_prediction_equals_the_validation_path(name, cluster, case):
    """Differential: a measured job placed on a cluster file is costed exactly as the
    validation case describing the same run (two ways to build the same fabric)."""
    (measured,) = read_results(NCCL / name)
    comparison = compare_set(measured, load_cluster(cluster))
    row = next(r for r in comparison.rows if r.message_bytes == CASES[case]["message_bytes"])
    expected = predict_collective_case(CASES[case])
    assert row.predicted_busbw_bytes_per_s / 1e9 == pytest.approx(
        expected["busbw_gigabytes_per_s"], rel=1e-12)
    assert row.algorithm == expected["algorithm"]
    # derived from the printed time (5 digits: "24050" us), within its rounding
    assert row.measured_busbw_bytes_per_s / 1e9 == pytest.approx(
        CASES[case]["measured"]["busbw_gigabytes_per_s"], rel=5e-5)


def test_hosts_fill_the_fewest_domains_evenly():
    (measured,) = read_results(NCCL / "oci-gb300-allreduce-2rack.txt")
    job = place_job(SUPERPOD, measured.job)
    assert (job.ranks, job.hosts, job.domains, job.ranks_per_domain) == (128, 32, 2, 64)
    assert [t.group_size for t in job.fabric.tiers] == [64, 128]
    forced = place_job(SUPERPOD, measured.job, ranks_per_domain=32)
    assert (forced.domains, forced.fabric.tiers[0].group_size) == (4, 32)
    with pytest.raises(InputError, match="must divide"):
        place_job(SUPERPOD, measured.job, ranks_per_domain=48)
    with pytest.raises(InputError, match="accelerators"):
        place_job(load_cluster("gb300-nvl72"), measured.job)
    with pytest.raises(InputError, match="pass --ranks"):
        place_job(SUPERPOD, JobContext())
    with pytest.raises(InputError, match="ranks on one host"):
        place_job(SUPERPOD, JobContext(ranks=16, ranks_per_host=8))


def test_tier_bounds_closed_forms():
    """Ring all-reduce at line rate: busbw = B; NVLS: 2(n-1)/(n+1)·B (one pass through the
    switch, S(n+1)/n per rank); the binding tier of a two-domain job."""
    (mi355,) = read_results(NCCL / "oci-mi355x-allreduce-1node.txt")
    mesh = compare_set(mi355, load_cluster("mi300x-8"))            # xGMI mesh, no switch
    link = load_cluster("mi300x-8").scale_up.bandwidth_per_accelerator_bytes_per_s
    for row in mesh.rows:
        (bound,) = row.bounds
        assert bound.bound_busbw_bytes_per_s == pytest.approx(link, rel=1e-9)
        assert bound.share == pytest.approx(row.measured_busbw_bytes_per_s / link)
    (gb300,) = read_results(NCCL / "oci-gb300-allreduce-1rack.txt")
    rows = compare_set(gb300, load_cluster("gb300-nvl72")).rows
    assert rows[0].bounds[0].bound_busbw_bytes_per_s == pytest.approx(2 * 63 / 65 * 900e9)
    (alltoall,) = read_results(NCCL / "oci-gb200-alltoall-2rack.txt", ranks=128)
    row = compare_set(alltoall, SUPERPOD).rows[-1]
    assert row.binding.tier == "scale_out"     # half the peers are behind the NICs
    # direct exchange: S/2 of each rank crosses its 400 Gb/s NIC -> busbw bound 127/128·2·50 GB/s
    assert row.binding.bound_busbw_bytes_per_s == pytest.approx(127 / 128 * 2 * 50e9)


def test_findings_name_the_binding_tier_and_its_variables():
    """OCI's GB300 all-to-all over two racks: 47.7 GB/s busbw where one 800 Gb/s NIC per GPU
    allows 197: a finding that names the NICs and the NCCL variables for them."""
    racks = load_cluster(EXAMPLES / "gb300-nvl72-3rack.yaml")
    (measured,) = read_results(NCCL / "oci-gb300-alltoall-2rack.txt")
    comparison = compare_set(measured, racks)
    findings = {f.code: f for f in comparison_findings(comparison, racks)}
    below = findings["below_model"]
    assert "reaches 25% of the model's prediction and 24% of the NICs' line rate" in \
        below.message and "2 scale-up domains" in below.message
    names = [v.name for v in below.variables]
    assert names[:3] == ["NCCL_IB_HCA", "NCCL_CROSS_NIC", "NCCL_IB_QPS_PER_CONNECTION"]
    assert all(v.meaning for v in below.variables)
    (fast,) = read_results(NCCL / "oci-gb300-allreduce-1rack.txt")
    quiet = comparison_findings(compare_set(fast, load_cluster("gb300-nvl72")),
                                load_cluster("gb300-nvl72"))
    assert "below_model" not in {f.code for f in quiet}      # 87-90 % of the prediction


def test_wrong_results_are_critical():
    text = (NCCL / "oci-gb300-alltoall-1rack.txt").read_text().replace(
        "13028  659.33  649.03      0", "13028  659.33  649.03      3")
    (measured,) = results_from_text(text, "broken.txt")
    findings = comparison_findings(compare_set(measured, SUPERPOD), SUPERPOD)
    assert findings[0].severity == "critical" and findings[0].code == "wrong_results"
    assert "line(s) 16" in findings[0].message


def test_nccl_log_findings_and_point_to_point():
    report = compare_results(SUPERPOD, [DATA / "nccl_debug" / "nccl-debug-lines.txt",
                                        DATA / "perftest" / "oci-hpc-oke-ib_write_bw.txt",
                                        DATA / "nvbandwidth" / "oci-gb200-sum.txt"])
    data = report_dict(report)
    (log,) = data["logs"]
    codes = [f["code"] for f in log["findings"]]
    assert codes[:2] == ["socket_fallback", "nvls_unavailable"]
    nic = [p for p in data["point_to_point"] if p["reference_name"] == "NIC line rate"]
    assert nic[0]["share"] == pytest.approx(98.01e9 / 400e9)
    d2d = next(p for p in data["point_to_point"] if p["test"] == "device_to_device_memcpy_read_ce")
    assert d2d["share"] == pytest.approx(9216.17e9 / 12 / 900e9)     # 4 GPUs, 12 pairs


def _ratios(name: str, cluster: str) -> list[float]:
    (measured,) = read_results(NCCL / name)
    return [r.ratio for r in compare_set(measured, load_cluster(cluster)).rows]


def test_gate():
    """A threshold between the rows' measured/predicted ratios fails exactly the rows below
    it (the ratios come from the model, so the test holds whatever the tables say)."""
    low, high = _ratios("oci-gb300-allreduce-1rack.txt", "gb300-nvl72")
    assert low < high                                   # 8 GiB below 16 GiB
    between = (low + high) / 2
    strict = report_dict(compare_results(load_cluster("gb300-nvl72"),
                                         [NCCL / "oci-gb300-allreduce-1rack.txt"],
                                         gate=Gate(between)))["gate"]
    assert (strict["rows"], strict["failed_rows"], strict["passed"]) == (2, 1, False)
    assert strict["failures"][0]["message_bytes"] == 8589934592
    assert strict["failures"][0]["measured_over_predicted"] == pytest.approx(low)
    loose = report_dict(compare_results(load_cluster("gb300-nvl72"),
                                        [NCCL / "oci-gb300-allreduce-1rack.txt"],
                                        gate=Gate(0.99 * low)))["gate"]
    assert loose["passed"] and loose["failed_rows"] == 0
    with pytest.raises(InputError, match="--fail-below"):
        Gate(0)


def test_split_groups_are_costed_on_their_strided_fabric():
    """NCCL_TESTS_SPLIT 'MOD 72' on two NVL72 racks: 72 all-reduces of 2 ranks, one per
    rack: each is costed on the scale-out tier alone (the bench-plan's rail run): the group
    view has one member per domain, and a 2-rank ring at line rate reaches one 400 Gb/s
    NIC's 50 GB/s."""
    devices = "\n".join(f"#  Rank {r:3d} Group {r % 72:2d} Pid {r} on host{r // 4:02d} device "
                        f"{r % 4:2d} [0000:01:00] NVIDIA GB200" for r in range(144))
    text = ("# Collective test starting: all_reduce_perf\n# Using devices\n" + devices +
            "\n#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw "
            "#wrong\n 1073741824 268435456 float sum -1 24000 44.74 44.74 0 24000 44.74 "
            "44.74 0\n")
    (measured,) = results_from_text(text, "split.log")
    assert (measured.job.ranks, measured.job.groups, measured.job.group_stride) == (2, 72, 72)
    comparison = compare_set(measured, SUPERPOD)
    assert [(t.name, t.group_size) for t in comparison.job.fabric.tiers] == [
        ("scale_up", 1), ("scale_out", 2)]
    (row,) = comparison.rows
    assert [b.tier for b in row.bounds] == ["scale_out"] and row.model_binding == "scale_out"
    assert row.bounds[0].bound_busbw_bytes_per_s == pytest.approx(50e9)
    (group,) = measured_groups([measured], SUPERPOD)
    assert group.ranks == 2 and group.fabric == comparison.job.fabric


def test_measured_groups_for_calibration():
    sets = [*read_results(NCCL / "oci-hpc-oke-a100-allreduce-2node.txt"),
            *read_results(DATA / "perftest" / "dgx-spark-ib_write_lat.txt")]
    cluster = dataclasses.replace(load_cluster("dgx-a100-selene-like"))
    (group,) = measured_groups(sets, cluster, min_bytes=2**31)
    assert group.op == "all_reduce" and group.ranks == 16
    assert list(group.message_bytes) == [2**31, 2**32, 2**33]
    assert group.busbw_bytes_per_s[-1] == pytest.approx(189.60e9, rel=5e-5)  # from the time


def test_programs_without_a_cost_model_are_read_not_compared(tmp_path):
    path = tmp_path / "gather.log"
    path.write_text("# Collective test starting: gather_perf\n"
                    "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw "
                    " busbw #wrong\n 1048576 262144 float none 0 100.0 10.49 9.18 0 100.0 "
                    "10.49 9.18 0\n")
    data = report_dict(compare_results(load_cluster("hgx-h100"), [path], ranks=8))
    assert data["collectives"] == []
    assert data["logs"][0]["findings"][0]["code"] == "not_modelled"


def test_device_names_are_checked_against_the_description():
    from supernode.measurements.devices import catalog_accelerator

    assert catalog_accelerator("NVIDIA GB200") == "gb200"            # not b200
    assert catalog_accelerator("NVIDIA A100-SXM4-40GB") == "a100-sxm-80gb"
    assert catalog_accelerator("NVIDIA Graphics Device") is None
    (a100,) = read_results(NCCL / "oci-hpc-oke-a100-allreduce-2node.txt")
    h100 = load_cluster("dgx-h100-superpod-su")
    wrong = comparison_findings(compare_set(a100, h100), h100)
    assert wrong[0].code == "device_mismatch" and "A100-SXM4-40GB" in wrong[0].message
    right = load_cluster("dgx-a100-selene-like")
    assert "device_mismatch" not in {
        f.code for f in comparison_findings(compare_set(a100, right), right)}


def test_small_messages_printed_as_zero_are_compared_by_their_time(tmp_path):
    """nccl-tests prints an 8-byte all-reduce's bandwidth as 0.00 GB/s: the row survives a
    saved measurement set, and its ratio to the model comes from its time (not 0, which
    would fail every gate)."""
    from supernode.measurements.setfile import render_yaml, sets_from_document

    text = ("# Collective test starting: all_reduce_perf\n# Using devices\n"
            "#  Rank  0 Group  0 Pid 1 on host0 device  0 [0000:0f:00] NVIDIA H100 80GB HBM3\n"
            "#  Rank  1 Group  0 Pid 2 on host0 device  1 [0000:10:00] NVIDIA H100 80GB HBM3\n"
            "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw "
            "#wrong\n 8 2 float sum -1 10.21 0.00 0.00 0 10.10 0.00 0.00 0\n"
            " 1048576 262144 float sum -1 20.00 52.43 52.43 0 20.00 52.43 52.43 0\n")
    (measured,) = results_from_text(text, "small.log")
    (again,) = sets_from_document(render_yaml([measured]), "small.yaml")
    assert again.collectives[0].out_of_place.busbw_bytes_per_s == 0.0
    rows = compare_set(again, load_cluster("hgx-h100")).rows
    assert rows[0].measured_busbw_bytes_per_s == pytest.approx(8 / 10.21e-6)   # 2(n-1)/n = 1
    assert rows[0].ratio == pytest.approx(rows[0].predicted_time_s / 10.21e-6)
