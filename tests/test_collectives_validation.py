"""The public nccl-tests cases: error bound (MAPE ≤ 10 %) and case handling."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from supernode.collectives.validate import UnsupportedCase, predict_collective_case
from supernode.errors import InputError

MAPE_BOUND = 0.10


def _public_cases() -> list[dict]:
    path = resources.files("supernode") / "data" / "validation" / "public.json"
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cases"]
            if c["kind"] == "collective"]


def test_public_collective_cases_within_mape_bound():
    cases = _public_cases()
    assert len(cases) >= 10
    rows, errors = [], []
    for case in cases:
        pred = predict_collective_case(case)
        measured = case["measured"]["busbw_gigabytes_per_s"]
        err = pred["busbw_gigabytes_per_s"] / measured - 1
        errors.append(abs(err))
        rows.append(f"{case['id']:<42} measured {measured:8.2f} predicted "
                    f"{pred['busbw_gigabytes_per_s']:8.2f} GB/s  {err:+7.2%}  {pred['algorithm']}")
    mape = sum(errors) / len(errors)
    report = "\n".join(rows) + f"\nMAPE {mape:.2%}"
    assert mape <= MAPE_BOUND, report
    assert max(errors) <= 3 * MAPE_BOUND, report


def test_prediction_fields():
    case = _public_cases()[0]
    pred = predict_collective_case(case)
    assert set(pred) == {"busbw_gigabytes_per_s", "time_s", "algorithm", "detail"}
    assert pred["time_s"] > 0 and pred["algorithm"] in pred["detail"]


def test_nvls_chosen_for_large_h200_messages_and_not_for_a100():
    for case in _public_cases():
        algo = predict_collective_case(case)["algorithm"]
        if not case["system"]["in_network_reduction"]:
            assert algo != "nvls"
        elif case["message_bytes"] >= 2**28:
            assert algo == "nvls"


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
