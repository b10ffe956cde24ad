"""Every example cluster file in ``examples/`` loads, and says what it claims (examples are
tests, docs/architecture.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from supernode.cluster.load import load_cluster

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.yaml"))

#: file name -> (accelerators, hosts, scale-up kind, domain size)
EXPECTED = {
    "h100-4su.yaml": (1024, 128, "nvswitch", 8),
    "hybrid-mesh-switch.yaml": (64, 16, "hybrid", 32),
    "heterogeneous-host.yaml": (64, 8, "full_mesh", 8),
}


def test_there_are_examples() -> None:
    assert {p.name for p in EXAMPLES} >= set(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_loads(path: Path) -> None:
    cluster = load_cluster(path)
    assert cluster.accelerators >= 1
    text = path.read_text(encoding="utf-8")
    assert text.startswith("#"), "examples open with a comment saying what they show"
    if path.name in EXPECTED:
        accelerators, hosts, kind, size = EXPECTED[path.name]
        assert (cluster.accelerators, cluster.hosts) == (accelerators, hosts)
        assert (cluster.scale_up.kind, cluster.scale_up.size) == (kind, size)


def test_heterogeneous_host_keeps_its_other_units() -> None:
    cluster = load_cluster(EXAMPLES[0].parent / "heterogeneous-host.yaml")
    units = {u.name: (u.kind, u.count) for u in cluster.spec.host.other_units}
    assert units == {"bluefield-3": ("dpu", 2), "video-decoder": ("preprocessing", 1)}
    assert cluster.accelerator.name == "npu-x"
    assert cluster.scale_out is not None and cluster.scale_out.oversubscription == (3.0,)
