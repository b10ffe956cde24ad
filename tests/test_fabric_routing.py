"""Routing as a property of the fabric: the cluster file's ``scale_out.routing``, its
sourced defaults, the presets, and the simulator routing as the fabric does."""

from __future__ import annotations

import pytest

from supernode.cluster.load import load_cluster
from supernode.cluster.resolve import default_routing, resolve_cluster
from supernode.collectives import fabric_from_cluster
from supernode.errors import InputError
from supernode.netsim.scenario import SimOptions, with_fabric_routing
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import validate_document

PRESETS = {"gb200-nvl72-superpod": "adaptive", "dgx-h100-superpod-su": "adaptive",
           "dgx-b200-superpod-4su": "adaptive", "dgx-a100-selene-like": "adaptive",
           "cloudmatrix384": "ecmp"}


def _doc(routing=None, switch="quantum2-qm9700"):
    out = {"tiers": 2, "switch": switch, "rail_optimized": True}
    if routing is not None:
        out["routing"] = routing
    return {"name": "r", "supernodes": 4,
            "host": {"accelerator": "gb200", "accelerators_per_host": 4,
                     "nics": {"count": 4, "speed_gbit_per_s": 400}},
            "scale_up": {"kind": "nvswitch", "size": 72, "switch": "nvlink5-switch",
                         "switch_chips": 18},
            "scale_out": out}


def test_defaults_follow_the_fabric_and_the_file_overrides_them():
    assert default_routing(ethernet=False) == "adaptive"
    assert default_routing(ethernet=True) == "ecmp"
    ib = resolve_cluster(validate_document(_doc(), ClusterSpec))
    eth = resolve_cluster(validate_document(_doc(switch="spectrum4-sn5600-400g"), ClusterSpec))
    pinned = resolve_cluster(validate_document(_doc("ecmp"), ClusterSpec))
    assert (ib.scale_out.routing, eth.scale_out.routing, pinned.scale_out.routing) == (
        "adaptive", "ecmp", "ecmp")
    outer = fabric_from_cluster(pinned)[0].tiers[-1]
    assert outer.routing == "ecmp" and outer.hash_ports > 1 and outer.hash_group > 0


def test_a_bad_routing_names_the_field():
    with pytest.raises(InputError) as err:
        validate_document(_doc("random"), ClusterSpec)
    assert "scale_out.routing" in err.value.render()


@pytest.mark.parametrize(("preset", "routing"), sorted(PRESETS.items()))
def test_presets_state_the_routing_their_fabric_runs(preset, routing):
    assert load_cluster(preset).scale_out.routing == routing


def test_the_simulator_routes_as_the_fabric_unless_told_otherwise():
    ib = resolve_cluster(validate_document(_doc(), ClusterSpec))
    eth = resolve_cluster(validate_document(_doc(switch="spectrum4-sn5600-400g"), ClusterSpec))
    assert SimOptions().routing is None
    assert with_fabric_routing(SimOptions(), ib).routing == "adaptive"
    assert with_fabric_routing(SimOptions(), eth).routing == "ecmp"
    assert with_fabric_routing(SimOptions(routing="spray"), eth).routing == "spray"
