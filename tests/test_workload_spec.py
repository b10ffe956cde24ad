"""Workload and plan documents: presets load, bad input is an InputError with a path."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from supernode.errors import InputError
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.workload import WorkloadSpec, input_error_from_validation, workload_from_data
from supernode.workload import list_workload_presets, load_workload

BASE = {"name": "t", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256, "vocab": 100,
        "seq_len": 128}


def test_presets_load_and_cite() -> None:
    names = list_workload_presets()
    assert {"gpt3-175b", "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b",
            "deepseek-v3"} <= set(names)
    for name in names:
        w = load_workload(name)
        assert w.name == name
        assert w.source and len(w.source) > 10


def test_resolved_shapes() -> None:
    w = load_workload("llama3-70b")
    assert (w.n_kv_heads, w.qk_head_dim, w.v_head_dim) == (8, 128, 128)
    d = load_workload("deepseek-v3")
    assert (d.n_kv_heads, d.qk_head_dim, d.v_head_dim) == (128, 192, 128)
    assert WorkloadSpec(**BASE).n_kv_heads == 4


@pytest.mark.parametrize(("patch", "path", "words"), [
    ({"kv_head": 2}, "kv_head", "kv_heads"),
    ({"kv_heads": 3}, "kv_heads", "multiple"),
    ({"layers": "many"}, "layers", "integer"),
    ({"layers": 0}, "layers", "greater than 0"),
    ({"hidden": 66}, "head_dim", "divisible"),
    ({"norm": "batchnorm"}, "norm", "rmsnorm"),
    ({"moe": {"experts": 4, "top_k": 5}}, "moe.top_k", "experts"),
    ({"moe": {"experts": 4, "top_k": 2, "first_k_dense_layers": 2}},
     "moe.first_k_dense_layers", "layers"),
    ({"moe": {"experts": 4, "topk": 2}}, "moe.topk", "top_k"),
])
def test_bad_workload_fields(patch: dict, path: str, words: str) -> None:
    with pytest.raises(InputError) as info:
        workload_from_data({**BASE, **patch})
    assert info.value.path == path
    assert words in info.value.message


def test_missing_field_and_not_a_mapping() -> None:
    data = dict(BASE)
    del data["vocab"]
    with pytest.raises(InputError, match="vocab: required"):
        workload_from_data(data)
    with pytest.raises(InputError, match="mapping"):
        workload_from_data([1, 2])


def test_load_from_files(tmp_path: Path) -> None:
    good = tmp_path / "w.yaml"
    good.write_text("name: t\nlayers: 2\nhidden: 64\nheads: 4\nffn_hidden: 256\nvocab: 100\n"
                    "seq_len: 128\n")
    assert load_workload(good).layers == 2
    as_json = tmp_path / "w.json"
    as_json.write_text('{"name": "t", "layers": 2, "hidden": 64, "heads": 4, '
                       '"ffn_hidden": 256, "vocab": 100, "seq_len": 128}')
    assert load_workload(str(as_json)).hidden == 64
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(InputError, match="not valid YAML"):
        load_workload(bad)
    typo = tmp_path / "typo.yaml"
    typo.write_text(good.read_text() + "hiden: 3\n")
    with pytest.raises(InputError) as info:
        load_workload(typo)
    assert info.value.path == "hiden" and "hidden" in info.value.message
    assert str(typo) in str(info.value)
    with pytest.raises(InputError, match="no such file"):
        load_workload(tmp_path / "missing.yaml")


def test_unknown_preset_suggests() -> None:
    with pytest.raises(InputError, match="llama3-70b"):
        load_workload("llama3-70")


def test_plan_document_errors() -> None:
    assert plan_from_data({"tp": 2, "global_batch_sequences": 8}).tp == 2
    cases = [
        ({"global_batch_sequences": 8, "vpp": 2}, "vpp"),
        ({"global_batch_sequences": 8, "zero_stage": 4}, "zero_stage"),
        ({"global_batch_sequences": 8, "recompute": "some"}, "recompute"),
        ({"global_batch_sequences": 8, "tensor_parallel": 2}, "tensor_parallel"),
        ({"tp": 2}, "global_batch_sequences"),
    ]
    for data, path in cases:
        with pytest.raises(InputError) as info:
            plan_from_data(data)
        assert info.value.path == path, (data, info.value)


def test_distributed_optimizer_with_a_stated_stage_means_that_stage() -> None:
    """Megatron-FSDP and NeMo Automodel configs set both: distributed_optimizer with
    zero_stage 2 or 3 is that stage; alone it is stage 1 (validation format revision 3)."""
    both = {"global_batch_sequences": 8, "distributed_optimizer": True}
    assert plan_from_data({**both, "zero_stage": 3}).zero_choices() == (3,)
    assert plan_from_data({**both, "zero_stage": 2}).zero_choices() == (2,)
    assert plan_from_data({**both, "zero_stage": 0}).zero_choices() == (1,)
    assert plan_from_data(both).zero_choices() == (1,)


def test_direct_construction_raises_validation_error() -> None:
    with pytest.raises(ValidationError) as info:
        ParallelPlan(pp=1, vpp=2, global_batch_sequences=4)
    assert input_error_from_validation(info.value, ParallelPlan).path == "vpp"
