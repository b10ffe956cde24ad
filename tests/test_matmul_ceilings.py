"""The GEMM ceilings a part's systems run at: a measured figure as measured, every other
precision at the part's own measured share of peak (``estimate.system.compute_rates``)."""

from __future__ import annotations

import pytest

from supernode.catalog import accelerators
from supernode.estimate.system import compute_rates, unmeasured_matmul_share
from supernode.spec.resolved import convert_accelerator
from supernode.units import TFLOPS

PARTS = sorted(accelerators())


@pytest.mark.parametrize("name", PARTS)
def test_measured_ceilings_are_used_as_measured_and_the_rest_at_the_parts_share(name):
    spec = accelerators()[name]
    rates = compute_rates(convert_accelerator(spec))
    peaks, matmul = rates["peak_flops_by_precision"], rates["matmul_flops_by_precision"]
    measured = {p: v * TFLOPS for p, v in spec.achievable_matmul_tflops.items()}
    share = unmeasured_matmul_share(measured, peaks)
    for precision, peak in peaks.items():
        want = measured.get(precision, share * peak)
        assert matmul[precision] == pytest.approx(want, rel=1e-9), precision
        assert matmul[precision] <= peak * (1 + 1e-9), precision


def test_mi300x_fp8_is_its_hipblaslt_figure_not_its_bf16_share():
    """MI300X's measured FP8 GEMM (hipBLASLt, 907 TFLOP/s) is a lower share of its peak
    than its BF16 MAMF: the share rule alone would run its FP8 GEMMs 1.47x faster than
    measured."""
    spec = accelerators()["mi300x"]
    assert "hipBLASLt" in (spec.achievable_matmul_source or "")
    rates = compute_rates(convert_accelerator(spec))
    peaks, matmul = rates["peak_flops_by_precision"], rates["matmul_flops_by_precision"]
    assert matmul["fp8"] / peaks["fp8"] < matmul["bf16"] / peaks["bf16"]
    assert matmul["fp8"] == pytest.approx(
        spec.achievable_matmul_tflops["fp8"] * TFLOPS)
