"""The routing policies' vectorised ``assign_many`` against ``assign`` called group by group
(:func:`supernode.netsim.policies.loop_assign`): the same picks and shares, flow by flow."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from supernode.netsim.policies import ROUTING_POLICIES, loop_assign


@st.composite
def groups(draw):
    """Candidate groups (CSR), their loads and capacities, and flows spread over them."""
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=8))
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(ptr[-1])
    capacity = np.array(draw(st.lists(st.sampled_from([1e9, 2e9, 5e10]), min_size=n,
                                      max_size=n)))
    # loads on a coarse grid, so ties between candidates are common
    load = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))) / 1e9
    group = np.array(draw(st.lists(st.integers(0, len(sizes) - 1), min_size=1,
                                   max_size=30)), dtype=np.int64)
    keys = np.array(draw(st.lists(st.integers(0, 2**64 - 1), min_size=group.size,
                                  max_size=group.size)), dtype=np.uint64)
    salt = np.arange(len(sizes), dtype=np.int64) * 7 + 3
    return ptr, capacity, load, keys, group, salt


def _by_flow(triples) -> list[tuple[int, int, float]]:
    flows, cands, shares = triples
    return sorted(zip(flows.tolist(), cands.tolist(), shares.tolist(), strict=True))


@given(groups(), st.sampled_from(sorted(ROUTING_POLICIES.names())))
def test_assign_many_equals_assign_group_by_group(case, name) -> None:
    policy = ROUTING_POLICIES.get(name)
    ptr, capacity, load, keys, group, salt = case
    fast = policy.assign_many(ptr, capacity, load, keys, group, salt)
    slow = loop_assign(policy, ptr, capacity, load, keys, group, salt)
    assert _by_flow(fast) == _by_flow(slow)
