"""Validation of the models against the published cases (asserted error bounds)."""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_validation
from supernode.spec.training_case import case_plan
from supernode.spec.workload import workload_from_data
from supernode.validation.harness import run_case, validate_file

PUBLIC = Path(str(resources.files("supernode") / "data/validation/public.json"))
DOCS = Path(__file__).parents[1] / "docs" / "estimate.md"


@pytest.fixture(scope="module")
def results():
    return validate_file(PUBLIC)


def _rounding_tolerance(measured: float) -> float:
    """Half a unit in the last of the 2 significant digits a source may print, relative."""
    exponent = math.floor(math.log10(abs(measured)))
    return 0.5 * 10 ** (exponent - 1) / abs(measured)


def test_no_case_is_unsupported(results):
    cases, _ = results
    assert [c.id for c in cases if c.status != "ok"] == []


def test_training_step_mape_and_worst_case(results):
    """In-sample (the constants were fitted here). The 15 runs of the Megatron-LM README and
    the Megatron-Bridge archive: MAPE <= 7 %, none over 18 % (GPT-OSS). The whole 28-run set: MAPE
    <= 12 % (issue 22's target of 6 % is not met: docs/estimate.md, Known limits). The
    out-of-sample figure is tests/test_estimate_calibration.py's leave-one-source-out."""
    cases, summary = results
    errors = {c.id: c.error_frac for c in cases if c.kind == "training_step"}
    assert summary["training_step"]["n"] == len(errors) >= 28
    assert summary["training_step"]["mape"] <= 0.12, errors
    megatron = [abs(e) for i, e in errors.items() if i.startswith(("megatron_", "mbridge"))]
    assert len(megatron) == 15
    assert sum(megatron) / len(megatron) <= 0.07, errors
    assert max(megatron) <= 0.18, errors


#: Each published training step's bound, and the sign of its error where the model's known
#: limit (docs/estimate.md, "Known limits") says which way it misses: +1 predicted slow,
#: -1 predicted fast, 0 either way. The Megatron-LM runs and the GB200 MoE runs are held to
#: the in-sample figure the constants were fitted for; GB300 (the unexplained 1.22-1.25x
#: over GB200) and FP8 (Transformer Engine's fused casts) to 15 %, GPT-OSS (narrow
#: 2,880-wide GEMMs, attention sinks costed as fused attention) to 20 %; the runs added for
#: issue 22 to their known misses: Automodel's FSDP2 runs either way, the ModelZoo's
#: Megatron-FSDP run slow, the long-context rows slow (etp null read as Megatron's
#: default), the 4K TP/EP rows fast (narrow expert GEMMs: docs/estimate.md, Known limits).
STEP_BOUNDS = {
    "megatron_h100_weak_": (0.08, 0),
    "mbridge2511_dsv3_gb200_": (0.08, 0),
    "mbridge2511_qwen3_235b_gb200_": (0.08, 0),
    "mbridge2511_dsv3_gb300_": (0.15, +1),
    "mbridge2511_qwen3_235b_gb300_": (0.15, +1),
    "mbridge260401_gpt_oss_120b_": (0.20, -1),
    "mbridge260401_llama31_405b_h100_1024gpu_fp8": (0.15, +1),
    "oci_b200_": (0.08, 0),
    "automodel_": (0.30, 0),
    "modelzoo_qwen3_235b_h100_fsdp_": (0.35, +1),
    "modelzoo_qwen3_235b_h100_16k_": (0.50, +1),
    "modelzoo_qwen3_235b_h100_32k_": (0.35, +1),
    "modelzoo_qwen3_235b_h100_128k_": (0.10, +1),
    "modelzoo_qwen3_235b_h100_deepep_": (0.25, -1),
    "modelzoo_qwen3_235b_h100_a2a_": (0.15, -1),
    "modelzoo_qwen3_235b_h100_tp4_": (0.30, -1),
}


def _step_bound(case_id: str) -> tuple[float, int]:
    (bound,) = [v for prefix, v in STEP_BOUNDS.items() if case_id.startswith(prefix)]
    return bound


def test_every_training_step_within_its_bound(results):
    """Measured against predicted, case by case: each published step within its bound,
    on the side its known limit names."""
    cases, _ = results
    steps = [c for c in cases if c.kind == "training_step"]
    assert len(steps) >= 28
    for case in steps:
        bound, sign = _step_bound(case.id)
        assert abs(case.error_frac) <= bound, (case.id, case.error_frac, bound)
        assert case.error_frac * sign >= 0, (case.id, case.error_frac, "wrong side")
        # the error is the prediction's against the publication's own step time
        assert case.error_frac == pytest.approx(case.predicted / case.measured - 1, rel=1e-9)


def _doc_step_table(heading: str = "Public set, in sample") -> dict[str, tuple[str, str, str]]:
    text = DOCS.read_text(encoding="utf-8").split(heading, 1)[1]
    rows = {}
    for line in text.split("\n\n", 2)[1].splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = tuple(cells[1:])
    return rows


def test_documented_step_table_is_the_models_output(results):
    """docs/estimate.md's in-sample table prints each case's published step, the model's
    prediction and the error as the harness computes them now, every case listed."""
    cases, _ = results
    steps = {c.id: c for c in cases if c.kind == "training_step"}
    table = _doc_step_table()
    assert set(table) == set(steps)
    for case_id, (measured, predicted, error) in table.items():
        case = steps[case_id]
        assert measured == f"{case.measured:.3f}", case_id
        assert predicted == f"{case.predicted:.3f}", case_id
        assert error == f"{case.error_frac * 100:+.1f} %".replace("-", "\u2212"), case_id


def test_collective_mape(results):
    """Issue 8's bound: at most two cases off by more than 25 %, each explained in
    docs/collectives.md (tests/test_collectives_validation.py checks the explanation),
    the others within 10 % MAPE; all cases within 15 % (the one outlier, an all-to-all
    across two GB300 racks at a quarter of its NICs' rate, is 10 points of it alone)."""
    cases, summary = results
    errors = [abs(c.error_frac) for c in cases if c.kind == "collective"]
    assert summary["collective"]["n"] == len(errors) >= 30
    kept = [e for e in errors if e <= 0.25]
    assert len(errors) - len(kept) <= 2
    assert sum(kept) / len(kept) <= 0.10
    assert summary["collective"]["mape"] <= 0.15


@pytest.mark.parametrize("kind", ["model_state_memory", "activation_memory"])
def test_memory_cases_within_one_percent(results, kind):
    cases, _ = results
    checked = [c for c in cases if c.kind == kind]
    assert checked
    for case in checked:
        bound = max(0.01, _rounding_tolerance(case.measured))
        assert abs(case.error_frac) <= bound, (case.id, case.error_frac)


def test_validate_json_has_exact_shape(tmp_path):
    register_all()
    result = CliRunner().invoke(app, ["validate", str(PUBLIC), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"cases", "summary"}
    keys = {"id", "kind", "metric", "measured", "predicted", "error_frac", "status", "detail"}
    assert all(set(c) == keys for c in data["cases"])
    assert all(set(s) == {"n", "mape"} for s in data["summary"].values())


def test_unknown_kind_and_unknown_accelerator_are_reported_unsupported(tmp_path):
    doc = json.loads(PUBLIC.read_text())
    case = next(c for c in doc["cases"] if c["kind"] == "training_step")
    odd = dict(case, id="x", system=dict(case["system"], accelerator="no-such-gpu"))
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"schema": doc["schema"],
                                "cases": [odd, {"id": "y", "kind": "telepathy"}]}))
    cases, _ = validate_file(path)
    assert [c.status for c in cases] == ["unsupported", "unsupported"]
    assert "no-such-gpu" in cases[0].detail
    assert "telepathy" in cases[1].detail


def test_interruptions_scale_with_gpus_and_days(tmp_path):
    base = {"kind": "interruptions", "system": {"gpus": 4096}, "duration_days": 10,
            "measured": {"unexpected_interruptions": 20}}
    cases = [dict(base, id="a"), dict(base, id="b", system={"gpus": 8192}),
             dict(base, id="c", duration_days=30)]
    path = tmp_path / "i.json"
    path.write_text(json.dumps({"schema": "supernode-validation/1", "cases": cases}))
    a, b, c = validate_file(path)[0]
    assert a.status == b.status == c.status == "ok" and a.predicted > 0
    assert b.predicted == pytest.approx(2 * a.predicted)
    assert c.predicted == pytest.approx(3 * a.predicted)


@pytest.mark.parametrize("mutation", [
    {"system": [1]}, {"parallelism": [1]}, {"measured": [1]}, {"training": {"global_batch": 1e30}},
])
def test_malformed_case_blocks_are_unsupported_not_crashes(tmp_path, mutation):
    doc = json.loads(PUBLIC.read_text())
    case = dict(next(c for c in doc["cases"] if c["kind"] == "training_step"), **mutation)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"schema": doc["schema"], "cases": [case]}))
    register_all()
    out = CliRunner().invoke(app, ["validate", str(path), "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)["cases"][0]
    assert result["status"] == "unsupported" or mutation == {"measured": [1]}


def test_degenerate_activation_case_is_unsupported(tmp_path):
    doc = json.loads(PUBLIC.read_text())
    case = dict(next(c for c in doc["cases"] if c["kind"] == "activation_memory"), tp=0)
    path = tmp_path / "act.json"
    path.write_text(json.dumps({"schema": doc["schema"], "cases": [case]}))
    register_all()
    out = CliRunner().invoke(app, ["validate", str(path), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["cases"][0]["status"] == "unsupported"


def _megatron_mfu(case: dict, step_s: float) -> float:
    """MFU of ``case`` run in ``step_s`` by the convention its source prints:
    ``72 B s l h^2 (1 + s/(6h) + V/(12 l h))`` FLOPs per step over the stated peak."""
    m, b = case["model"], case["training"]["global_batch"]
    s, layers, h, v = m["seq_len"], m["layers"], m["hidden"], m["vocab"]
    flops = 72 * b * s * layers * h * h * (1 + s / (6 * h) + v / (12 * layers * h))
    return flops / (step_s * case["system"]["gpus"] * case["system"]["peak_dense_bf16_tflops"]
                    * 1e12)


def test_held_out_style_case_generalises(tmp_path):
    """A run that is not in the public file, sized between two published ones (the
    Megatron-LM 1.7B and 7.1B runs; the 7.1B's system, plan and batch, hidden 3,072 and 27
    layers between theirs): its predicted MFU lies between the two published MFUs (the
    table's MFU rises with model size), widened by the error this source's cases are held to."""
    doc = json.loads(PUBLIC.read_text())
    by_id = {c["id"]: c for c in doc["cases"]}
    small, large = by_id["megatron_h100_weak_1.7B"], by_id["megatron_h100_weak_7.1B"]
    # the convention reproduces the published MFU from the published step time
    for case in (small, large):
        assert _megatron_mfu(case, case["measured"]["step_time_s"]) == pytest.approx(
            case["measured"]["mfu"], abs=0.005)
    other = json.loads(json.dumps(large))
    other.update(id="held_out")
    other["model"].update(layers=27, hidden=3072, heads=24, ffn_hidden=12288)
    assert small["model"]["hidden"] < 3072 < large["model"]["hidden"]
    path = tmp_path / "h.json"
    path.write_text(json.dumps({"schema": doc["schema"], "cases": [other]}))
    (case,), _ = validate_file(path)
    assert case.status == "ok", case.detail
    bound, _ = _step_bound(large["id"])
    mfu = _megatron_mfu(other, case.predicted)
    assert small["measured"]["mfu"] / (1 + bound) <= mfu <= large["measured"]["mfu"] / (1 - bound)


#: Held-out error bounds per publication (:func:`case_source`), each the worst error
#: measured on 2026-12-03 rounded up to the next percent, not loosened to pass
#: (docs/estimate.md, "Held out"): the SC'21 1T run is +5.3 % (kept at its 10 %);
#: dgxc-benchmarking's NeMo and MaxText recipes on H100 (all dense ones too slow), worst
#: +19.9 % (dgxc2411_nemo_llama31_8b_h100_128gpu_bf16); the Llama 3 paper's two 8K rows are
#: too fast, worst -6.9 % (llama3_405b_h100_16384gpu_8k); torchtitan's H100 benchmarks,
#: worst -28.9 % (torchtitan_h100_llama31_8b_8gpu_256k_cp8); llm-foundry's MPT tables,
#: worst +31.4 % (llmfoundry_a100_mpt_13b_8gpu_4k). Finer bounds for the two PyTorch-native
#: stacks (by CP degree and length): tests/test_heldout_pytorch_stacks.py.
TORCHTITAN = "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md"
LLM_FOUNDRY = "mosaicml/llm-foundry scripts/train/benchmarking/README.md"
HELD_OUT_BOUNDS = {"Narayanan et al.": 0.10, "NVIDIA/dgxc-benchmarking": 0.20,
                   "Llama Team": 0.07, TORCHTITAN: 0.29, LLM_FOUNDRY: 0.32}
#: MAPE over every held-out training run (12.27 % measured over 44; 9.63 % over the 15
#: Megatron-Core and NeMo/MaxText runs).
HELD_OUT_MAPE = 0.13
#: Held-out runs outside the printed 80 % interval (6 of 44 measured, each a PyTorch-native
#: run missed by more than a fifth: docs/estimate.md "Known limits").
HELD_OUT_OUTSIDE = 6


def test_held_out_cases_within_their_source_bounds():
    """Published runs no calibration reads (heldout.json): none unsupported; every
    publication in the file has a stated bound (a new one needs its own) and every run is
    within it; the file's MAPE within its bound; each measured step inside the printed
    80 % interval of its prediction but for at most the known misses (PyTorch-native runs
    missed by more than 20 %); docs/estimate.md's held-out table is the harness's
    output now."""
    from supernode.estimate.interval import default_interval
    from supernode.spec.casefile import case_source

    path = PUBLIC.with_name("heldout.json")
    doc = json.loads(path.read_text())
    sources = {c["id"]: case_source(c) for c in doc["cases"]}
    cases, summary = validate_file(path)
    assert len(cases) == len(doc["cases"]) >= 15
    assert [c.id for c in cases if c.status != "ok"] == []
    assert set(sources.values()) == set(HELD_OUT_BOUNDS)
    over = [(c.id, round(c.error_frac, 3)) for c in cases
            if abs(c.error_frac) > HELD_OUT_BOUNDS[sources[c.id]]]
    assert over == []
    assert summary["training_step"]["n"] == len(cases)
    assert summary["training_step"]["mape"] <= HELD_OUT_MAPE
    band = default_interval()  # the printed 80 % interval holds the held-out runs
    outside = [c for c in cases
               if not band.step_time_s(c.predicted)[0] <= c.measured
               <= band.step_time_s(c.predicted)[1]]
    assert len(outside) <= HELD_OUT_OUTSIDE
    assert all(sources[c.id] in (TORCHTITAN, LLM_FOUNDRY) and abs(c.error_frac) > 0.20
               for c in outside), [(c.id, c.error_frac) for c in outside]
    table = _doc_step_table("Held out, predicted")
    assert set(table) == {c.id for c in cases}
    for case in cases:
        assert table[case.id] == (f"{case.measured:.3f}", f"{case.predicted:.3f}", (
            f"{case.error_frac * 100:+.1f} %".replace("-", "\u2212"))), case.id


def test_moe_training_case_is_predicted(tmp_path):
    """A Mixtral-like MoE case gets the step the model gives the same workload built from
    the workload format (experts, top_k), whether the case spells the MoE block the
    Megatron way or the Hugging Face way; two routed experts per token make it slower than
    the dense model of the same shape; an unknown MoE field is refused."""
    doc = json.loads(PUBLIC.read_text())
    case = json.loads(json.dumps(next(c for c in doc["cases"] if c["kind"] == "training_step"
                                      and c["system"]["gpus"] == 96)))
    case.update(id="moe")
    case["model"].update(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336,
                         vocab=32000, gated_mlp=True,
                         moe={"num_experts": 8, "router_topk": 2})
    case["parallelism"].update(tp=2, dp=48, ep=8)
    hf = dict(case, id="hf", model=dict(case["model"],
                                        moe={"num_local_experts": 8, "num_experts_per_tok": 2}))
    dense = dict(case, id="dense", model=dict(case["model"], moe=None),
                 parallelism=dict(case["parallelism"], ep=1))
    odd = dict(case, id="odd", model=dict(case["model"], moe={"experts": 8, "warp": 3}))
    path = tmp_path / "moe.json"
    path.write_text(json.dumps({"schema": doc["schema"], "cases": [case, hf, dense, odd]}))
    good, hf_result, dense_result, bad = validate_file(path)[0]
    assert good.status == hf_result.status == dense_result.status == "ok", good.detail

    m = case["model"]
    workload = workload_from_data({
        "name": "moe", "layers": m["layers"], "hidden": m["hidden"], "heads": m["heads"],
        "kv_heads": m["kv_heads"], "ffn_hidden": m["ffn_hidden"], "vocab": m["vocab"],
        "seq_len": m["seq_len"], "gated_mlp": True, "moe": {"experts": 8, "top_k": 2}})
    plan = case_plan(case)
    direct = estimate_plan(workload, plan, system_from_validation(case["system"], "bf16"))
    assert good.predicted == pytest.approx(direct.step_time_s, rel=1e-12)
    assert hf_result.predicted == good.predicted
    assert good.predicted > dense_result.predicted
    assert bad.status == "unsupported" and "warp" in bad.detail


def _case(**changes):
    doc = json.loads(PUBLIC.read_text())
    case = json.loads(json.dumps(next(c for c in doc["cases"] if c["id"].startswith(
        "mbridge2511_dsv3_gb200"))))
    for block, values in changes.items():
        case[block] = {**case[block], **values} if isinstance(values, dict) else values
    return doc["schema"], case


def _run(tmp_path, cases, schema="supernode-validation/1"):
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"schema": schema, "cases": cases}))
    return validate_file(path)[0]


def test_revision_2_fields_are_read(tmp_path):
    """head_dim, attention (MLA), sliding_window, zero_stage, moe_a2a_overlap, etp,
    pp_layout and a throughput-only measurement all reach the model."""
    schema, base = _case()
    variants = [
        dict(base, id="mla"),
        dict(base, id="mha", model={**base["model"], "attention": None}),
        dict(base, id="zero3", training={**base["training"], "distributed_optimizer": False,
                                         "zero_stage": 3}),
        dict(base, id="a2a", training={**base["training"], "moe_a2a_overlap": False}),
        dict(base, id="etp", parallelism={**base["parallelism"], "etp": 1}),
        dict(base, id="layout", parallelism={**base["parallelism"],
                                             "pp_layout": "embedding_and_loss_as_layers"}),
        dict(base, id="rate", measured={"tokens_per_s_per_gpu": 3139}),
    ]
    out = {c.id: c for c in _run(tmp_path, variants, schema)}
    assert all(c.status == "ok" for c in out.values()), {i: c.detail for i, c in out.items()}
    assert out["mla"].predicted != pytest.approx(out["mha"].predicted, rel=0.01)
    assert out["zero3"].predicted != pytest.approx(out["mla"].predicted, rel=1e-6)
    assert "moe_a2a_overlap=False" in out["a2a"].detail
    assert "pp_layout=embedding_and_loss_as_layers" in out["layout"].detail
    # step time derived from throughput: GBS * seq / (tokens/s/GPU * GPUs)
    assert out["rate"].measured == pytest.approx(4096 * 4096 / (3139 * 256), rel=1e-9)
    assert out["rate"].predicted == pytest.approx(out["mla"].predicted, rel=1e-12)


def test_unpublished_heads_default_to_128_dims(tmp_path):
    schema, base = _case()
    doc = json.loads(PUBLIC.read_text())
    dense = json.loads(json.dumps(next(c for c in doc["cases"] if c["kind"] == "training_step")))
    cases = [dict(dense, id="given"), dict(dense, id="null",
                                           model={**dense["model"], "heads": None})]
    given, null = _run(tmp_path, cases, schema)
    assert given.status == null.status == "ok", null.detail
    assert "heads not published: 16 of 128" in null.detail  # hidden 2048 / 128
    assert null.predicted == pytest.approx(given.predicted, rel=1e-9)  # 16 heads either way


def test_fp8_cases_run_at_the_fp8_figures(tmp_path):
    """An FP8 case is predicted well faster than the same run in BF16 (it was 2.2x too slow
    when FP8 used the BF16 peak)."""
    doc = json.loads(PUBLIC.read_text())
    fp8 = next(c for c in doc["cases"] if (c.get("training") or {}).get("precision") == "fp8")
    bf16 = dict(fp8, id="bf16", training={**fp8["training"], "precision": "bf16"})
    a, b = _run(tmp_path, [dict(fp8, id="fp8"), bf16], doc["schema"])
    assert a.status == b.status == "ok"
    assert a.predicted < 0.8 * b.predicted
    assert abs(a.error_frac) <= 0.15


def test_a_null_global_batch_is_chosen_only_for_a_throughput():
    """A case scored on tokens/s per GPU with no published batch is predicted at the
    default batch (said in the detail), close to the prediction at the real batch; one
    scored on its step time, which the batch sets, stays unsupported."""
    doc = json.loads(PUBLIC.read_text())
    case = next(c for c in doc["cases"] if c["kind"] == "training_step")
    rate = (case["training"]["global_batch"] * case["model"]["seq_len"]
            / (case["measured"]["step_time_s"] * case["system"]["gpus"]))
    throughput = json.loads(json.dumps(case))
    throughput["training"]["global_batch"] = None
    throughput["measured"] = {"tokens_per_s_per_gpu": rate}
    real, chosen = run_case(case), run_case(throughput)
    assert chosen.status == "ok" and "global_batch=" in chosen.detail
    assert abs(chosen.error_frac - real.error_frac) < 0.05
    stepped = json.loads(json.dumps(case))
    stepped["training"]["global_batch"] = None
    assert run_case(stepped).status == "unsupported"
