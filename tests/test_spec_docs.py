"""docs/cluster-file.md: the field reference is the generated one, and its example loads."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from supernode.cluster.load import load_cluster

DOCS = Path(__file__).resolve().parents[1] / "docs"
DOC = DOCS / "cluster-file.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cluster_doc", DOCS / "gen_cluster_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_field_reference_is_generated() -> None:
    """Golden test: when it fails, run ``python docs/gen_cluster_doc.py`` and commit."""
    current = DOC.read_text(encoding="utf-8")
    assert _generator().render(current) == current, "run python docs/gen_cluster_doc.py"


def test_every_model_has_a_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    for title in ("ClusterSpec", "HostSpec", "ScaleUpSpec", "ScaleOutSpec", "HybridSpec",
                  "LocalTopologySpec", "NicAffinitySpec", "DeviceLinkSpec", "AcceleratorSpec"):
        assert f"### {title}\n" in text


def test_generator_check_mode(tmp_path: Path, monkeypatch) -> None:
    module = _generator()
    stale = tmp_path / "cluster-file.md"
    stale.write_text("# doc\n\n<!-- fields:start -->\nold\n<!-- fields:end -->\ntail\n")
    monkeypatch.setattr(module, "DOC", stale)
    assert module.main(["--check"]) == 1
    assert module.main([]) == 0
    assert module.main(["--check"]) == 0
    text = stale.read_text()
    assert "old" not in text and "| `supernodes` |" in text and text.endswith("tail\n")


def test_annotated_example_loads(tmp_path: Path) -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert blocks
    for index, block in enumerate(blocks):
        path = tmp_path / f"example{index}.yaml"
        path.write_text(block, encoding="utf-8")
        cluster = load_cluster(path)
        assert cluster.accelerators >= 1
    first = load_cluster(tmp_path / "example0.yaml")
    assert (first.accelerators, first.hosts, first.scale_up.size) == (512, 64, 8)


def test_units_are_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for suffix in ("_gbit_per_s", "_gbyte_per_s", "_gbyte", "_ns", "_kw", "1e9 bit/s"):
        assert suffix in text
