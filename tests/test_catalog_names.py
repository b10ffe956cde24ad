"""Accelerator names beyond the catalog ids, and what a validation case may leave null.

A validation file from another team names parts as its own catalog does (the shared
reference catalog's ``nvidia_h100_sxm``), or names a variant of a catalog die (H800, the
A100 40GB); and a published run often gives TP, PP and CP but not DP. Each is resolved
from the case itself or from a sourced data file, said in the detail, never guessed.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supernode.catalog import accelerators, find_accelerator
from supernode.catalog.names import accelerator_names, case_accelerator, normalised
from supernode.errors import InputError
from supernode.estimate.system import system_from_validation
from supernode.spec.casefile import read_cases
from supernode.spec.training_case import case_plan, derived_sizes, parallel_sizes
from supernode.validation.harness import run_case


@pytest.fixture(scope="module")
def training_cases():
    return read_cases(None, kind="training_step")


def _case(cases, accelerator: str):
    return next(c for c in cases if c["system"]["accelerator"] == accelerator)


def test_every_alias_and_variant_names_a_catalog_part_and_none_shadows_one():
    names, catalog = accelerator_names(), accelerators()
    assert all(target in catalog for target in names.aliases.values())
    assert not set(names.aliases) & set(catalog)
    for variant in names.variants:
        assert variant.like in catalog and variant.name not in catalog
        assert variant.name == normalised(variant.name) and variant.source


@pytest.mark.parametrize("spelling", ["nvidia_h100_sxm", "H100 SXM5", "h100", "H100-SXM"])
def test_aliases_find_the_catalog_part(spelling):
    assert find_accelerator(spelling).name == "h100-sxm-80gb"


def test_a_variant_is_costed_as_its_die_with_its_own_memory():
    part, note = case_accelerator("A100-SXM-40GB")
    assert part.name == "a100-sxm-80gb" and part.memory_gbyte == 40
    assert part.memory_bandwidth_tbyte_per_s == pytest.approx(1.555)
    assert note and "a100-sxm-40gb" in note and "HBM capacity" in note
    same, none = case_accelerator("h100-sxm-80gb")
    assert same.name == "h100-sxm-80gb" and none is None
    with pytest.raises(InputError) as err:
        case_accelerator("h900-imaginary")
    assert err.value.path == "system.accelerator"


def test_an_h800_case_predicts_as_the_h100_case_and_says_why(training_cases):
    """Same die, same peak and links in the case: the same step; the detail names it."""
    h100 = _case(training_cases, "h100-sxm-80gb")
    h800 = copy.deepcopy(h100)
    h800["system"]["accelerator"] = "h800"
    a, b = run_case(h100), run_case(h800)
    assert b.status == "ok" and b.predicted == pytest.approx(a.predicted, rel=1e-12)
    assert "h800 is not a catalog part" in b.detail


def test_a_smaller_memory_variant_gets_its_own_memory(training_cases):
    """The 40 GB variant is modelled with 40 GB at 1.555 TB/s, not the 80 GB part's."""
    case = copy.deepcopy(_case(training_cases, "h100-sxm-80gb"))
    case["system"].update(accelerator="a100-sxm-40gb", peak_dense_bf16_tflops=312.0)
    system = system_from_validation(case["system"])
    assert system.memory_bytes == pytest.approx(40e9)
    assert system.memory_bandwidth_bytes_per_s == pytest.approx(1.555e12)
    big = dict(case["system"], accelerator="a100-sxm-80gb")
    assert system_from_validation(big).memory_bytes == pytest.approx(80e9)
    result = run_case(case)
    assert result.status == "ok" and "a100-sxm-40gb" in result.detail


def test_unknown_part_is_unsupported_with_the_field(training_cases):
    case = copy.deepcopy(training_cases[0])
    case["system"]["accelerator"] = "h900-imaginary"
    result = run_case(case)
    assert result.status == "unsupported" and "system.accelerator" in result.detail


def test_null_dp_is_derived_from_the_gpus_and_predicts_the_same(training_cases):
    for case in training_cases[:6]:
        null = copy.deepcopy(case)
        null["parallelism"]["dp"] = None
        assert parallel_sizes(null) == parallel_sizes(case)
        a, b = run_case(case), run_case(null)
        assert b.status == "ok" and b.predicted == pytest.approx(a.predicted, rel=1e-12)
        assert "dp=" in b.detail and "null: system.gpus" in b.detail


@given(tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]),
       cp=st.sampled_from([1, 2]), dp=st.integers(1, 16),
       hole=st.sampled_from(["tp", "pp", "dp", "cp"]))
def test_a_derived_size_makes_the_product_the_gpus(tp, pp, cp, dp, hole):
    sizes = {"tp": tp, "pp": pp, "dp": dp, "cp": cp}
    gpus = tp * pp * cp * dp
    case = {"system": {"gpus": gpus}, "parallelism": {**sizes, hole: None}}
    assert derived_sizes(case) == {hole: derived_sizes(case)[hole]}
    out = parallel_sizes(case)
    assert out["tp"] * out["pp"] * out["dp"] * out["cp"] == gpus
    assert out == sizes


def test_sizes_that_do_not_divide_are_not_derived():
    case = {"system": {"gpus": 100}, "parallelism": {"tp": 8, "pp": 1, "cp": 1, "dp": None}}
    assert derived_sizes(case) == {}
    plan_case = {"system": {"gpus": 64}, "parallelism": {"tp": 8, "pp": 2, "dp": None},
                 "training": {"global_batch": 64}}
    assert case_plan(plan_case).dp == 4


def test_an_all_moe_model_needs_no_dense_mlp_width(training_cases):
    """``model.ffn_hidden: null`` on a model whose every layer is MoE (no dense MLP) is
    the same prediction; on a model with a dense layer it stays unsupported."""
    moe = next(c for c in training_cases if (c["model"].get("moe") or {})
               and not c["model"]["moe"].get("first_k_dense_layers"))
    null = copy.deepcopy(moe)
    null["id"], null["model"]["ffn_hidden"] = "null-ffn", None
    a, b = run_case(moe), run_case(null)
    assert b.status == "ok" and b.predicted == pytest.approx(a.predicted, rel=1e-9)
    dense = copy.deepcopy(next(c for c in training_cases if not c["model"].get("moe")))
    dense["model"]["ffn_hidden"] = None
    assert run_case(dense).status == "unsupported"
