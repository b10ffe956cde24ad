"""Disaggregated pools are whole instances that fit in the cluster together."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from supernode.serve.disagg import whole_pools

rates = st.floats(10.0, 1e5)
sizes = st.sampled_from([1, 2, 4, 8, 16, 24, 36, 72])


@given(p=rates, gp=sizes, d=rates, gd=sizes, ratio=st.floats(0.05, 20.0),
       gpus=st.sampled_from([8, 16, 64, 72, 144]))
def test_pools_fit_and_never_beat_the_fluid_balance(p, gp, d, gd, ratio, gpus):
    rate, n_pre, n_dec = whole_pools(np.array([p]), np.array([gp]), np.array([d]), float(gd),
                                     ratio, gpus)
    fluid = 1.0 / (1.0 / d + ratio / p)
    if gp + gd > gpus:
        assert n_dec[0, 0] == 0 and rate[0, 0] == 0.0
        return
    used = n_pre[0, 0] * gp + n_dec[0, 0] * gd
    assert n_pre[0, 0] >= 1 and n_dec[0, 0] >= 1 and used <= gpus
    assert rate[0, 0] <= fluid * (1 + 1e-9)
    served = min(n_dec[0, 0] * gd * d, n_pre[0, 0] * gp * p / ratio)
    assert np.isclose(rate[0, 0], served / used)


def test_a_decode_instance_filling_the_cluster_is_no_pair():
    rate, n_pre, n_dec = whole_pools(np.array([5e3]), np.array([8]), np.array([800.0]),
                                     72.0, 4.0, 72)
    assert n_dec[0, 0] == 0 and n_pre[0, 0] == 0 and rate[0, 0] == 0.0


def test_balanced_pools_reach_the_fluid_rate_when_they_divide_evenly():
    """P = 4,000 input tok/s/GPU, D = 1,000 output, isl/osl = 4: one prefill GPU per
    decode GPU balances exactly, 500 tokens/s per GPU."""
    rate, n_pre, n_dec = whole_pools(np.array([4000.0]), np.array([8]), np.array([1000.0]),
                                     8.0, 4.0, 64)
    assert np.isclose(rate[0, 0], 500.0) and n_pre[0, 0] == n_dec[0, 0]
