"""Published dataset lengths and engine defaults in the ``inference`` validation kind:
a case naming a dataset without its means takes the table's, a stated length is kept; a
case naming an engine without a batch limit runs at the engine's default."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from supernode.serve.case import case_traffic
from supernode.serve.datasets import dataset_lengths, dataset_table
from supernode.serve.engines import default_max_sequences, engine_limits
from supernode.serve.fit import inference_cases_path
from supernode.spec.casefile import read_cases
from supernode.spec.loader import parse_text
from supernode.validation.harness import run_case

PUBLIC = inference_cases_path()


def _case(prefix):
    return copy.deepcopy(next(c for c in read_cases(PUBLIC, kind="inference")
                              if c["id"].startswith(prefix)))


def _data(name):
    from importlib import resources
    text = (resources.files("supernode") / "data" / "serve" / name).read_text("utf-8")
    return parse_text(text, source=name)


def test_every_dataset_entry_is_a_positive_mean_with_its_note():
    raw = _data("datasets.yaml")["datasets"]
    assert set(raw) == set(dataset_table()) and raw
    for name, entry in raw.items():
        lengths = dataset_lengths(name)
        assert lengths is not None and lengths.samples >= 1
        assert lengths.input_tokens > 0 and lengths.output_tokens > 0
        assert entry["note"].strip()


def test_every_named_dataset_of_the_public_set_is_in_the_table():
    named = {c["serving"].get("dataset") for c in read_cases(PUBLIC, kind="inference")}
    named.discard(None)
    assert named and all(dataset_lengths(n) is not None for n in named)


def test_a_null_length_of_a_known_dataset_is_its_mean_and_a_stated_one_is_kept():
    serving = _case("mlperf41_amd_8xmi300x_llama2_70b_offline")["serving"]
    table = dataset_lengths(serving["dataset"])
    assert serving["input_tokens"] is None and serving["output_tokens"] is not None
    traffic = case_traffic(serving)
    assert traffic.isl == table.input_tokens
    assert traffic.osl == serving["output_tokens"] != table.output_tokens
    serving["output_tokens"] = None
    assert case_traffic(serving).osl == table.output_tokens


@given(isl=st.floats(1.0, 1e6), osl=st.floats(1.0, 1e5))
def test_stated_lengths_always_win_over_the_table(isl, osl):
    serving = {"dataset": "mlperf-mixtral-8x7b-mixed", "input_tokens": isl,
               "output_tokens": osl}
    traffic = case_traffic(serving)
    assert (traffic.isl, traffic.osl) == (isl, osl)


def test_an_unknown_dataset_stays_unsupported():
    case = _case("mlperf41_nv_8xh100_mixtral_offline")
    case["serving"]["dataset"] = "some-private-trace"
    r = run_case(case)
    assert r.status == "unsupported"
    assert "workload lengths not given" in r.detail and "some-private-trace" in r.detail


def test_the_engine_default_bounds_the_batch_unless_the_case_states_one():
    limits = engine_limits()
    assert limits and all(v >= 1 for v in limits.values())
    assert default_max_sequences("no-such-engine") is None
    case = _case("oci_mi300x_llama31_405b")
    cap = default_max_sequences(case["serving"]["engine"])
    assert cap is not None and case["serving"]["batch_size"] is None
    held = run_case(case)
    assert held.status == "ok" and f"engine default {cap:,}" in held.detail
    chosen = int(held.detail.split("batch=")[1].split()[0])
    assert chosen <= cap
    case["serving"]["batch_size"] = 4 * cap  # a stated limit is the case's, not the engine's
    stated = run_case(case)
    assert "engine default" not in stated.detail
    assert int(stated.detail.split("batch=")[1].split()[0]) > cap
    case["serving"]["batch_size"], case["serving"]["engine"] = None, "no-such-engine"
    free = run_case(case)
    assert "engine default" not in free.detail
    assert int(free.detail.split("batch=")[1].split()[0]) > cap
