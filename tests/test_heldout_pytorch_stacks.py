"""PyTorch-native stacks out of sample: torchtitan's and llm-foundry's published H100 runs
(``data/validation/heldout.json``, read by no calibration), and PyTorch's context-parallel
attention as the torchtitan stack runs it (``workload/cp_exchange.py``).

Bounds are the measured errors of 2026-12-03 (docs/estimate.md "Held out"), each with
its worst case named; the CP terms are checked against closed forms counted from
PyTorch's ``_attention.py`` and for monotonicity in the CP degree at fixed tokens per GPU.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.estimate.attention import cp_merge_s
from supernode.estimate.calibration import default_calibration
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_validation
from supernode.spec.plan import as_plan_arrays
from supernode.spec.plan_arrays import CP_COMM_CODES
from supernode.spec.stack import StackSpec
from supernode.spec.training_case import case_plan, case_workload
from supernode.validation.harness import validate_file
from supernode.workload.cp_exchange import cp_exchange, torch_merge_bytes
from supernode.workload.traffic import traffic_per_step

HELDOUT = Path(str(resources.files("supernode") / "data/validation/heldout.json"))


def _cases() -> dict[str, dict]:
    return {c["id"]: c for c in json.loads(HELDOUT.read_text())["cases"]}


@pytest.fixture(scope="module")
def results():
    cases = _cases()
    return [(r, cases[r.id]) for r in validate_file(HELDOUT)[0]]


def _family(results, framework):
    rows = [(r, c) for r, c in results if c["training"].get("framework") == framework]
    assert rows and all(r.status == "ok" for r, _ in rows), [r.detail for r, _ in rows]
    return rows


def test_torchtitan_rows_within_their_bounds(results):
    """Without CP and at CP 2 within 10 % (worst: 405B at 32K, +8.7 %); at CP 4 and 8
    too fast, by at most 30 % (worst: 8B at 256K, CP 8, -28.9 %: Known limits)."""
    rows = _family(results, "torchtitan")
    assert len(rows) == 13
    for r, c in rows:
        if c["parallelism"]["cp"] <= 2:
            assert abs(r.error_frac) <= 0.10, (r.id, r.error_frac)
        else:
            assert -0.30 <= r.error_frac < 0.0, (r.id, r.error_frac)


def test_llm_foundry_rows_within_their_bounds(results):
    """H100 up to 8K tokens within 20 % (worst: MPT-13B at 4K, +19.4 %); H100 from 32K too
    fast, by at most 30 % (worst: MPT-1B at 64K, -29.5 %: the Triton attention kernel the
    runs used is not in the kernel tables); A100 within 32 % (worst: MPT-13B at 4K,
    +31.4 %), its long rows not too fast (the H100 long-row miss is Hopper's)."""
    rows = _family(results, "llm-foundry")
    assert len(rows) == 16
    for r, c in rows:
        long = c["model"]["seq_len"] > 8192
        if c["system"]["accelerator"].startswith("a100"):
            assert abs(r.error_frac) <= 0.32, (r.id, r.error_frac)
            assert not long or r.error_frac > 0.0, (r.id, r.error_frac)
        elif not long:
            assert abs(r.error_frac) <= 0.20, (r.id, r.error_frac)
        else:
            assert -0.30 <= r.error_frac < 0.0, (r.id, r.error_frac)


def _plans(cp: int, code: str) -> SimpleNamespace:
    return SimpleNamespace(cp=np.array([cp]), tp=np.array([1]),
                           cp_comm=np.array([CP_COMM_CODES[code]]))


def _entries(kv: float, cp: int, code: str) -> list[tuple[str, str, bool, float, float]]:
    """Non-empty entries of PyTorch's exchange, (phase, kind, hidden, bytes, calls), sorted."""
    out = []
    for phase, kind, msg, calls, _, hidden in cp_exchange(kv, 0.5 * kv, 0.5 * kv,
                                                         _plans(cp, code), torch=True):
        n = float(np.asarray(calls).ravel()[0])
        if n:
            out.append((phase, kind, hidden, float(np.asarray(msg).ravel()[0]), n))
    return sorted(out)


@settings(max_examples=40, deadline=None)
@given(cp=st.integers(2, 32), kv=st.floats(1e3, 1e10))
def test_torch_exchange_moves_the_closed_form_bytes(cp, kv):
    """All-gather rotater: K, V gathered once per pass (cp kv), beside the rounds; the
    dK/dV accumulators sent cp times in fp32 (2 kv), the last send exposed. All-to-all
    rotater: cp - 1 hops of kv per pass instead of the gathers."""
    dkv = [("backward", "p2p", True, 2 * kv, cp - 1), ("backward", "p2p", False, 2 * kv, 1)]
    gather = [("forward", "all_gather", True, cp * kv, 1),
              ("backward", "all_gather", True, cp * kv, 1)]
    hops = [("forward", "p2p", True, kv, cp - 1), ("backward", "p2p", True, kv, cp - 1)]
    assert _entries(kv, cp, "all_gather") == sorted(gather + dkv)
    assert _entries(kv, cp, "p2p") == sorted(hops + dkv)
    assert _entries(kv, 1, "all_gather") == []


def _merge_by_rounds(o: float, k: float, cp: int) -> tuple[float, float]:
    """The busiest rank's merge bytes re-counted round by round as the source runs them
    (rank r merges round i in full when i <= r, else half its queries)."""
    fwd, bwd = [], []
    for rank in range(cp):
        f = 8 * k + 6 * o + 6 * o  # contiguous K, V; round 0's upcast; the final cast
        b = 4 * o + 8 * k + 8 * k + 6 * o + 12 * k  # zeros, contiguous, final casts
        for i in range(cp):
            if i < cp - 1:
                f += 8 * k  # torch.cat of K, V to send
                b += 8 * k
            b += 16 * k  # the fp32 dK, dV cat sent on
            if i == 0:
                b += 20 * k + 10 * o
                continue
            full = i <= rank
            f += 38 * o if full else 19 * o + 8 * o  # the merge; half of it + the cat
            b += (26 * k + 10 * o) if full else (20 * k + 13 * o)
        fwd.append(f)
        bwd.append(b)
    return max(fwd), max(bwd)


@given(cp=st.integers(1, 32), o=st.floats(1.0, 1e9), ratio=st.sampled_from([1.0, 0.25, 0.125]))
def test_merge_bytes_match_a_round_by_round_count(cp, o, ratio):
    """:func:`torch_merge_bytes` is the busiest rank's count (the last rank, which merges
    every round in full); zero without CP."""
    got = torch_merge_bytes(o, ratio * o, cp)
    if cp == 1:
        assert got == (0.0, 0.0)
        return
    assert got == pytest.approx(_merge_by_rounds(o, ratio * o, cp))


def test_expanded_kv_multiplies_every_cp_exchange_by_the_group_size():
    """torchtitan repeats K and V to the query heads before the attention: every CP call
    carries heads / kv_heads (32 / 8) times the grouped bytes."""
    case = _cases()["torchtitan_h100_llama31_8b_8gpu_256k_cp8"]
    w, plan = case_workload(case), case_plan(case)
    grouped = w.model_copy(update={"stack": StackSpec(framework="torchtitan",
                                                      attention_kv="grouped")})

    def cp_bytes(workload):
        return [float(np.sum(c.bytes_per_step)) for c in traffic_per_step(workload, plan)
                if c.dim == "cp"]

    wide, narrow = cp_bytes(w), cp_bytes(grouped)
    assert len(wide) == len(narrow) and sum(narrow) > 0
    assert wide == pytest.approx([4.0 * x for x in narrow])


@settings(max_examples=12, deadline=None)
@given(k=st.integers(12, 15), pair=st.sampled_from([(1, 2), (2, 4), (4, 8), (1, 8)]))
def test_torch_cp_cost_non_decreasing_in_cp_at_fixed_tokens_per_gpu(k, pair):
    """At fixed tokens per GPU (2^k), PyTorch CP's exposed exchange and its merge seconds
    per layer never fall as cp grows (more rounds, larger gathers, the same local chunk)."""
    case = _cases()["torchtitan_h100_llama31_8b_8gpu_256k_cp8"]

    def cost(cp):
        c = json.loads(json.dumps(case))
        c["model"]["seq_len"] = cp * 2 ** k
        c["parallelism"].update(cp=cp, dp=8 // cp)
        c["training"]["global_batch"] = 8 // cp
        w, plan = case_workload(c), case_plan(c)
        system = system_from_validation(c["system"], plan.precision)
        result = estimate_plan(w, plan, system)
        f, b = cp_merge_s(w, as_plan_arrays(plan), system, default_calibration())
        return result.breakdown_s["cp_comm"], float(np.sum(f) + np.sum(b))

    (comm_a, merge_a), (comm_b, merge_b) = cost(pair[0]), cost(pair[1])
    assert comm_b >= comm_a - 1e-12 and merge_b >= merge_a
    assert merge_b > 0.0
