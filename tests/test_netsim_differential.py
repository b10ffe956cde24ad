"""The fast simulator against its reference, and its statistics against first principles.

* End to end: the array-built network with closed-form routing against the converted
  networkx graph with the shortest-path search, on the ``examples/netsim`` scenarios and
  three-tier trees (intact and degraded): every reported number identical.
* Link statistics kept per class of links (:mod:`supernode.netsim.link_classes`) against
  each link's load rebuilt from the vectors' rate histories; max-min solves on one link
  per class against solves on every link, bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from test_netsim_engine import _run, traffic

import supernode.netsim.build as build
import supernode.netsim.routing as routing
import supernode.netsim.scenario as scenario
from supernode.cluster.load import load_cluster
from supernode.cluster.resolve import resolve_cluster
from supernode.netsim import JobInput, SimOptions, TrafficFile, simulate_jobs, simulate_traffic
from supernode.netsim.build import network_from_cluster
from supernode.netsim.fluid import HOT_UTILIZATION
from supernode.netsim.maxmin import max_min_rates
from supernode.netsim.routing import RoutingConfig
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import read_document, validate_document
from supernode.spec.plan import plan_from_data
from supernode.workload.presets import load_workload

EX = Path(__file__).resolve().parents[1] / "examples" / "netsim"


def reference(monkeypatch) -> None:
    """Make the scenario runner use the graph network and the shortest-path search."""
    monkeypatch.setattr(scenario, "network_from_cluster",
                        lambda cluster: network_from_cluster(cluster, via_graph=True))
    monkeypatch.setattr(SimOptions, "routing_config", lambda self: RoutingConfig(
        self.routing, self.scale_up_routing, self.rail_aligned, self.seed, closed_form=False))

    def no_closed_form(*args):
        raise AssertionError("the reference must not use the closed form")

    def no_arrays(*args):
        raise AssertionError("the reference must not build arrays")

    monkeypatch.setattr(routing, "fat_tree_shape", no_closed_form)
    monkeypatch.setattr(build, "network_arrays", no_arrays)


def report(result) -> dict:
    out = result.to_dict()
    out.pop("wall_time_s")
    return out


def three_tier(hosts: int) -> object:
    doc = {"name": f"t{hosts}", "supernodes": hosts,
           "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                    "nics": {"count": 8, "speed_gbit_per_s": 400}},
           "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                        "switch_chips": 4},
           "scale_out": {"tiers": 3, "switch": "quantum2-qm9700", "rail_optimized": True}}
    return resolve_cluster(validate_document(doc, ClusterSpec))


def traffic_run(cluster: str, doc: str, routing: str):
    tf = validate_document(read_document(EX / doc), TrafficFile, source=doc)
    return simulate_traffic(load_cluster(EX / cluster), tf,
                            options=SimOptions(routing=routing, efficiency=False, bins=12))


def job_run(cluster, gpus: int, plan: dict, failures=(), workload: str = "llama3-70b"):
    job = JobInput("j", load_workload(workload), plan_from_data(plan), np.arange(gpus))
    return simulate_jobs(cluster, [job], failures=tuple(failures), options=SimOptions(bins=6))


SCENARIOS = {
    "cross-leaf 2:1 ecmp": lambda: traffic_run("h100-4su-2to1.yaml", "cross-leaf.yaml", "ecmp"),
    "rings burst adaptive": lambda: traffic_run("h100-4su-1to1.yaml", "rings-burst.yaml",
                                                "adaptive"),
    "training step, failures.yaml": lambda: job_run(
        load_cluster(EX / "h100-4su-1to1.yaml"), 1024,
        {"tp": 8, "pp": 4, "dp": 32, "global_batch_sequences": 128},
        [str(EX / "failures.yaml")]),
    "three tiers, 4 pods, a spine down": lambda: job_run(
        three_tier(512), 4096, {"tp": 8, "pp": 16, "dp": 32, "global_batch_sequences": 512},
        ["switch:spine/5"], "llama3-405b"),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fast_path_reports_exactly_what_the_reference_reports(name, monkeypatch) -> None:
    fast = report(SCENARIOS[name]())
    reference(monkeypatch)
    slow = report(SCENARIOS[name]())
    assert fast == slow


def rebuilt_statistics(env) -> tuple[np.ndarray, np.ndarray]:
    """Each link's peak utilisation and seconds at or above the hot threshold, from the
    vectors' rate histories (load = sum of flows x rate over the vectors crossing it)."""
    fluid = env.fluid
    times = sorted({t for h in fluid.history.values() for t, _ in h} | {env.now})
    index = {t: i for i, t in enumerate(times)}
    load = np.zeros((len(times), fluid.capacity.size))
    for vid, hist in fluid.history.items():
        v = fluid.vectors.items[vid]
        total = np.zeros(len(times))
        for t, r in hist:
            total[index[t]:] = r
        load[:, v.links] += total[:, None] * v.mult[None, :]
    util = load / fluid.capacity
    hot = load >= HOT_UTILIZATION * (1 - 1e-9) * fluid.capacity
    dt = np.diff(times)
    return util.max(axis=0), (hot[:-1] * dt[:, None]).sum(axis=0)


@settings(max_examples=25, deadline=None)
@given(traffic())
def test_class_statistics_equal_each_link_rebuilt_from_histories(case) -> None:
    flows, routing = case
    env = _run(flows, routing)
    peak, hot_s = rebuilt_statistics(env)
    assert np.allclose(env.fluid.peak, peak, rtol=1e-9, atol=1e-12)
    assert np.allclose(env.fluid.hot_s, hot_s, rtol=1e-9, atol=1e-12)
    classes = env.fluid.vectors.classes
    for c in range(classes.count):  # every link of a class: the same vectors and flows
        links = np.flatnonzero(classes.cls_of == c)
        assert links.size == classes.size[c]
        for vid, m in classes.members[c].items():
            v = env.fluid.vectors.items[vid]
            assert np.all(v.mult[np.searchsorted(v.links, links)] == m)


@settings(max_examples=25, deadline=None)
@given(traffic())
def test_reduced_max_min_solves_are_bit_identical_to_full_ones(case) -> None:
    flows, routing = case
    env = _run(flows, routing)
    fluid = env.fluid
    for counts, rates in fluid.memo.items():
        items = [fluid.vectors.items[v] for v, _ in counts]
        ptr = np.cumsum([0] + [it.links.size for it in items])
        links = np.concatenate([it.links for it in items])
        mult = np.concatenate([it.mult * c for it, (_, c) in zip(items, counts, strict=True)])
        full, _ = max_min_rates(ptr, links, mult, fluid.capacity)
        assert full.tolist() == [rates[v] for v, _ in counts]
