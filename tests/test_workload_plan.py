"""Plan legality: scalar check_plan and the vectorised mask agree (tier c)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from supernode.errors import InputError
from supernode.spec.plan import ParallelPlan, PlanArrays, check_plan, plan_legal_mask
from supernode.spec.recompute import FULL
from supernode.workload import load_workload


def _plan(**kw: object) -> ParallelPlan:
    return ParallelPlan(**{"global_batch_sequences": 64, "micro_batch": 1, **kw})


@pytest.mark.parametrize(("preset", "kw", "gpus", "path"), [
    ("llama3-8b", {"tp": 3}, None, "plan.tp"),
    ("llama3-8b", {"tp": 16}, None, "plan.tp"),  # 32 heads but only 8 kv heads
    ("llama3-8b", {"pp": 40}, None, "plan.pp"),
    # 32 layers + embedding + loss = 34 slots: pp * vpp = 36 is one virtual stage too many
    ("llama3-8b", {"pp": 12, "vpp": 3, "pp_layout": "embedding_and_loss_as_layers"}, None,
     "plan.pp"),
    ("llama3-8b", {"pp": 17, "vpp": 2}, None, "plan.pp"),  # 34 stages, 32 layers, uniform
    ("llama3-8b", {"ep": 2, "dp": 2}, None, "plan.ep"),  # dense model
    ("mixtral-8x7b", {"ep": 3, "dp": 3, "global_batch_sequences": 63}, None, "plan.ep"),
    ("mixtral-8x7b", {"ep": 4, "dp": 2}, None, "plan.ep"),  # ep must divide dp * cp
    ("llama3-8b", {"cp": 3}, None, "plan.cp"),
    ("llama3-8b", {"dp": 3}, None, "plan.global_batch_sequences"),
    ("llama3-8b", {"micro_batch": 3}, None, "plan.global_batch_sequences"),
    ("llama3-8b", {"tp": 8, "dp": 4}, 64, "plan.dp"),
    ("mixtral-8x7b", {"ep": 8, "etp": 2, "tp": 2, "dp": 4}, None, "plan.ep"),  # 16 > 8 ranks
    ("mixtral-8x7b", {"etp": 3, "dp": 3, "global_batch_sequences": 63}, None, "plan.etp"),
    ("llama3-8b", {"etp": 2}, None, "plan.etp"),  # dense: etp is tp
    ("mixtral-8x7b", {"tp": 2, "sequence_parallel": False}, None, "plan.sequence_parallel"),
    ("mixtral-8x7b", {"ep": 2, "dp": 2, "pp": 2, "moe_a2a_overlap": True}, None,
     "plan.moe_a2a_overlap"),
])
def test_illegal_plans(preset: str, kw: dict, gpus: int | None, path: str) -> None:
    with pytest.raises(InputError) as info:
        check_plan(load_workload(preset), _plan(**kw), gpus)
    assert info.value.path == path


@pytest.mark.parametrize(("preset", "kw", "gpus"), [
    ("llama3-405b", {"tp": 8, "pp": 16, "dp": 4, "vpp": 2}, 512),  # 126 layers: uneven
    ("mixtral-8x7b", {"tp": 2, "dp": 8, "ep": 8, "cp": 2}, 32),
    ("deepseek-v3", {"pp": 16, "dp": 64, "ep": 64}, 1024),
    # Megatron-Core: EP may span TP ranks (EP 32 with TP 2 over DP 16), FSDP with PP
    ("deepseek-v3", {"tp": 2, "pp": 16, "dp": 16, "ep": 32, "etp": 1}, 512),
    ("llama3-405b", {"tp": 8, "pp": 16, "dp": 4, "zero_stage": 3}, 512),
    # Megatron-FSDP / NeMo Automodel: the distributed optimizer with ZeRO-3 is ZeRO-3
    ("llama3-405b", {"tp": 8, "pp": 16, "dp": 4, "zero_stage": 3,
                     "distributed_optimizer": True}, 512),
    # the embedding and the loss count as a slot each: 32 layers on pp 17 x vpp 2 = 34
    ("llama3-8b", {"pp": 17, "vpp": 2, "pp_layout": "embedding_and_loss_as_layers"}, 17),
])
def test_legal_plans(preset: str, kw: dict, gpus: int) -> None:
    """Each plan is accepted by the scalar check and the vectorised mask alike, on exactly
    its own GPU count (tp x pp x dp x cp): on twice as many it is refused."""
    w, plan = load_workload(preset), _plan(**kw)
    assert plan.tp * plan.pp * plan.dp * plan.cp == gpus
    assert check_plan(w, plan, gpus) is None
    assert bool(plan_legal_mask(w, plan, gpus))
    with pytest.raises(InputError) as info:
        check_plan(w, plan, 2 * gpus)
    assert info.value.path == "plan.dp"
    assert not bool(plan_legal_mask(w, plan, 2 * gpus))


def test_mask_equals_scalar_check() -> None:
    """Every plan of a grid: mask element is True exactly when check_plan does not raise."""
    w = load_workload("mixtral-8x7b")
    grid = list(itertools.product([1, 2, 3, 8], [1, 2, 5], [1, 2, 3, 4], [1, 2], [1, 2, 4],
                                  [1, 3], [1, 2], [0, 1, 2]))
    cols = np.array(grid).T
    names = ["tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "zero_stage"]
    arrays = PlanArrays.from_columns(global_batch_sequences=48, **dict(zip(names, cols,
                                                                           strict=True)))
    for gpus in (None, 16):
        mask = plan_legal_mask(w, arrays, gpus)
        assert mask.shape == (len(grid),)
        assert 0 < mask.sum() < len(grid)
        for row, ok in zip(grid, mask, strict=True):
            kw = dict(zip(names, (int(x) for x in row), strict=True))
            if kw["vpp"] > 1 and kw["pp"] == 1:
                assert not ok  # not even a valid ParallelPlan document
                continue
            try:
                check_plan(w, _plan(global_batch_sequences=48, **kw), gpus)
                legal = True
            except InputError:
                legal = False
            assert legal == bool(ok), kw


def test_from_columns_errors_and_strings() -> None:
    with pytest.raises(InputError, match="tp"):
        PlanArrays.from_columns(global_batch_sequences=8, tensor=2)
    with pytest.raises(InputError) as info:
        PlanArrays.from_columns(global_batch_sequences=8, recompute=["none", "most"])
    assert info.value.path == "recompute"
    a = PlanArrays.from_columns(global_batch_sequences=8, recompute=["none", "full"], tp=[1, 2])
    assert a.recompute.tolist() == [0, FULL] and a.tp.tolist() == [1, 2]
