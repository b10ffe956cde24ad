"""The algorithm registry refuses duplicates and resolves aliases."""

from __future__ import annotations

import pytest

from supernode.collectives import (
    DuplicateAlgorithmError,
    Fabric,
    FabricTier,
    Phase,
    Schedule,
    algorithm_names,
    collective_time_s,
    get_algorithm,
    register_algorithm,
    unregister_algorithm,
)
from supernode.errors import InputError

FAB = Fabric((FabricTier("up", 8, 1e11, 1e-6, efficiency="ideal"),))


def test_builtin_names():
    expected = {"ring", "tree", "halving_doubling", "hierarchical", "nvls", "nvls_tree",
                "collnet", "pat", "dimension_ordered", "direct", "hierarchical_a2a", "p2p"}
    assert expected <= set(algorithm_names())
    assert get_algorithm("in_switch").name == "nvls"
    assert get_algorithm("sharp").name == "collnet"


def test_duplicates_are_refused():
    with pytest.raises(DuplicateAlgorithmError):
        register_algorithm("ring", lambda *a: 0.0)
    with pytest.raises(DuplicateAlgorithmError):
        register_algorithm("brand_new_name_xyz", lambda *a: 0.0, aliases=("in_switch",))
    assert "brand_new_name_xyz" not in algorithm_names()


def test_custom_algorithm_can_be_registered_and_named():
    def latency_only(op, levels, protocol):
        """A toy algorithm: one step of latency and no bytes, whatever the size."""
        phase = Phase("p2p", "group", (), ((0, 1.0),), 0.0)
        return Schedule(name, op, protocol, "none", (phase,), tuple(levels))

    name = "toy_constant_test_only"
    register_algorithm(name, latency_only, ops=("all_reduce",), aliases=("toy_alias",))
    try:
        assert collective_time_s("all_reduce", 1e9, 8, FAB, name) == (1e-6, name)
        assert collective_time_s("all_reduce", 1e9, 8, FAB, "toy_alias") == (1e-6, name)
        assert collective_time_s("all_reduce", 1e9, 8, FAB)[1] != name  # not auto
        assert get_algorithm(name).description.startswith("A toy algorithm")
    finally:
        unregister_algorithm(name)  # other tests iterate over every registered algorithm
    assert name not in algorithm_names()
    with pytest.raises(InputError):
        get_algorithm("toy_alias")


def test_bad_requests_are_input_errors():
    with pytest.raises(InputError, match="unknown collective algorithm"):
        collective_time_s("all_reduce", 1e6, 8, FAB, "warp_drive")
    with pytest.raises(InputError, match="does not perform"):
        collective_time_s("all_to_all", 1e6, 8, FAB, "ring")
    with pytest.raises(InputError):
        collective_time_s("all_reduce", -1.0, 8, FAB)
    with pytest.raises(InputError):
        collective_time_s("all_reduce", 1e6, 2.5, FAB)
    with pytest.raises(InputError):
        collective_time_s("all_reduce", 1e6, 9, FAB)
    with pytest.raises(InputError):
        collective_time_s("gossip", 1e6, 8, FAB)


def test_docstring_examples_run():
    import doctest

    from supernode.collectives import model

    result = doctest.testmod(model)
    assert result.attempted >= 1 and result.failed == 0
