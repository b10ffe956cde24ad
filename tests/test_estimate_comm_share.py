"""The communication-share rule of the estimate: one definition, judged per tier."""

from __future__ import annotations

import dataclasses

from supernode.cluster.load import load_cluster
from supernode.estimate.model import COMM_SHARE_THRESHOLD, estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.spec.plan import plan_from_data
from supernode.workload.presets import load_workload


def test_comm_share_is_judged_on_each_tier_not_their_sum():
    """Seed 000 §5.2's 20 % line applies to a tier's share of the step: two tiers at 15 %
    each are under it (the old rule summed the tiers and said over), one at 25 % is over;
    the JSON names the definition."""
    cluster = load_cluster("dgx-h100-superpod-su")
    plan = plan_from_data({"tp": 8, "pp": 1, "dp": 2, "global_batch_sequences": 16})
    system = dataclasses.replace(system_from_cluster(cluster, plan.precision), gpus=16)
    est = estimate_plan(load_workload("llama3-8b"), plan, system)
    two = dataclasses.replace(est, comm_share_by_tier={"scale_up": 0.15, "scale_out": 0.15})
    assert sum(two.comm_share_by_tier.values()) > COMM_SHARE_THRESHOLD
    assert not two.comm_share_over_threshold
    one = dataclasses.replace(est, comm_share_by_tier={"scale_up": 0.25, "scale_out": 0.01})
    assert one.comm_share_over_threshold
    d = est.to_dict()
    assert "per tier" in d["comm_share_definition"] and "seed 000 §5.2" in \
        d["comm_share_definition"]
