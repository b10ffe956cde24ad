"""The public nccl-tests cases: error bounds, outliers explained, case handling.

In-sample (the committed tables): no case unsupported; at most two cases off by more than
25 %, each named and explained from the system's own figures in docs/collectives.md; the
other cases within 10 % MAPE. The figure to quote is out of sample:
``tests/test_collectives_loso.py``.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path

import pytest

from supernode.collectives.validate import UnsupportedCase, predict_collective_case
from supernode.errors import InputError

MAPE_BOUND = 0.10
OUTLIER = 0.25
MAX_OUTLIERS = 2
DOC = Path(__file__).parent.parent / "docs" / "collectives.md"


def _public_cases() -> list[dict]:
    path = resources.files("supernode") / "data" / "validation" / "public.json"
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cases"]
            if c["kind"] == "collective"]


def _errors() -> dict[str, float]:
    out = {}
    for case in _public_cases():
        pred = predict_collective_case(case)  # raises UnsupportedCase if unsupported
        out[case["id"]] = pred["busbw_gigabytes_per_s"] / case["measured"][
            "busbw_gigabytes_per_s"] - 1
    return out


def test_public_collective_cases_within_bounds_and_outliers_explained():
    errors = _errors()
    assert len(errors) == len(_public_cases()) >= 30  # zero unsupported
    outliers = {k: e for k, e in errors.items() if abs(e) > OUTLIER}
    assert len(outliers) <= MAX_OUTLIERS, outliers
    kept = [abs(e) for k, e in errors.items() if k not in outliers]
    report = "\n".join(f"{k:<44} {e:+7.2%}" for k, e in errors.items())
    assert sum(kept) / len(kept) <= MAPE_BOUND, report
    all_mape = sum(abs(e) for e in errors.values()) / len(errors)
    assert all_mape <= 0.15, report  # the outlier's own share stays what the docs say
    section = DOC.read_text(encoding="utf-8").split("### Outliers", 1)[1].split("\n## ", 1)[0]
    for case_id, error in outliers.items():
        assert f"`{case_id}`" in section, case_id  # named and explained
        assert f"{error:+.0%}" in section, (case_id, error)


def test_prediction_fields():
    pred = predict_collective_case(_public_cases()[0])
    assert set(pred) == {"busbw_gigabytes_per_s", "time_s", "algorithm", "path", "effect",
                         "detail"}
    assert pred["time_s"] > 0 and pred["algorithm"] in pred["detail"]
    assert "binds" in pred["detail"] and pred["path"] in pred["detail"]
    assert f"effect: {pred['effect']}" in pred["detail"]


def test_the_path_and_effect_behind_each_prediction_are_named():
    """Across racks on RoCE the static ECMP hashing is named with its factor; on
    InfiniBand (adaptive routing by default) it is not; NVLS is named where it runs. The
    GB300 case's notes say RoCE; the public case (the reference format) does not carry
    ``system.scale_out_fabric``, so a copy states it."""
    by_id = {c["id"]: c for c in _public_cases()}
    gb300 = dict(by_id["oci_gb300_allreduce_2rack_128gpu@16GiB"])
    gb300["system"] = dict(gb300["system"], scale_out_fabric="roce")
    roce = predict_collective_case(gb300)
    ib = predict_collective_case(by_id["oci_gb200_allreduce_2rack_128gpu@8GiB"])
    assert "roce_800g, ecmp" in roce["path"] and "static ECMP on scale_out: x0." in roce["effect"]
    assert "adaptive" in ib["path"] and "ECMP" not in ib["effect"]
    assert "in-network reduction (NVLS)" in ib["effect"]
    static = dict(by_id["oci_gb200_allreduce_2rack_128gpu@8GiB"])
    static["system"] = dict(static["system"], routing="ecmp")
    slower = predict_collective_case(static)
    assert slower["busbw_gigabytes_per_s"] < ib["busbw_gigabytes_per_s"]
    assert "static ECMP" in slower["effect"]


def test_algorithms_follow_the_hardware():
    """NVLS where the NVSwitch reduces (large H100/H200 messages), NVLS_TREE across GB200
    racks, never in-network reduction on A100 (no NVLS) or AMD parts (xGMI has none)."""
    for case in _public_cases():
        algo = predict_collective_case(case)["algorithm"]
        system = case["system"]
        if system["accelerator"].startswith(("a100", "mi3")):
            assert algo not in ("nvls", "nvls_tree", "collnet"), case["id"]
        elif system["accelerator"].startswith("h") and case["message_bytes"] >= 2**28:
            assert algo == "nvls", case["id"]
        elif case["collective"] == "all_reduce" and case["ranks"] > system["scale_up_gpus"]:
            assert algo == "nvls_tree", case["id"]


def _case(**changes) -> dict:
    case = copy.deepcopy(_public_cases()[0])
    case.update(changes)
    return case


def test_held_out_shapes_are_predicted():
    """Two nodes over InfiniBand, all_gather, H100 without NVLS (a held-out shape)."""
    system = dict(_case()["system"], accelerator="h100-sxm-80gb", gpus=16,
                  in_network_reduction=False)
    small = predict_collective_case(_case(system=system, collective="all_gather", ranks=16,
                                          message_bytes=2**20))
    large = predict_collective_case(_case(system=system, collective="all_gather", ranks=16,
                                          message_bytes=2**33))
    assert 5 < small["busbw_gigabytes_per_s"] < large["busbw_gigabytes_per_s"] < 450
    assert "scale_out" in large["detail"]


@pytest.mark.parametrize("name", ["gather", "scatter", "alltoallv", "hypercube_magic"])
def test_unmodelled_collectives_raise_unsupported(name):
    with pytest.raises(UnsupportedCase, match=name):
        predict_collective_case(_case(collective=name))


def test_unsupported_and_bad_inputs():
    with pytest.raises(UnsupportedCase, match="exceed"):
        predict_collective_case(_case(ranks=64))
    with pytest.raises(UnsupportedCase):
        predict_collective_case(_case(kind="training_step"))
    with pytest.raises(InputError):
        predict_collective_case(_case(ranks="eight"))
    with pytest.raises(InputError):
        predict_collective_case(_case(message_bytes=-1))
    assert issubclass(UnsupportedCase, ValueError)


def test_nccl_names_are_accepted():
    assert predict_collective_case(_case(collective="allreduce"))["algorithm"]
