"""The ``nvidia-smi topo -m`` parser and host-block builder, on the real 8 x B300 sample."""

from __future__ import annotations

import copy
import re
from importlib import resources

import pytest
import yaml

from supernode.cluster.resolve import resolve_cluster
from supernode.errors import InputError
from supernode.importers.nvidia_smi import TopoMatrix, parse_topo, read_topo
from supernode.importers.nvidia_smi_host import import_host, rails, render_yaml
from supernode.spec.cluster import ClusterSpec, HostSpec
from supernode.spec.loader import validate_document

SAMPLE = resources.files("supernode") / "data" / "samples" / "nvidia-smi-topo-m_8xB300.txt"
TEXT = SAMPLE.read_text(encoding="utf-8")
LINES = TEXT.splitlines()


@pytest.fixture(scope="module")
def topo() -> TopoMatrix:
    return parse_topo(TEXT)


def test_sample_devices(topo: TopoMatrix) -> None:
    assert topo.gpus == tuple(f"GPU{i}" for i in range(8))
    assert topo.nics == tuple(f"NIC{i}" for i in range(9))
    assert topo.nic_devices["NIC0"] == "mlx5_10"
    assert topo.nic_devices["NIC8"] == "mlx5_bond_0"
    assert topo.notes == ()


def test_sample_nvlink_everywhere(topo: TopoMatrix) -> None:
    pairs = [(a, b) for i, a in enumerate(topo.gpus) for b in topo.gpus[i + 1 :]]
    assert len(pairs) == 28
    assert {topo.cells[p] for p in pairs} == {"NV18"}
    assert all(topo.nvlinks(a, b) == 18 == topo.nvlinks(b, a) for a, b in pairs)
    assert all(topo.cells[(g, g)] == "X" for g in topo.gpus + topo.nics)


def test_sample_nic_distances(topo: TopoMatrix) -> None:
    assert topo.distance("GPU0", "NIC0") == "PXB"
    assert topo.distance("NIC0", "GPU0") == "PXB"
    assert topo.distance("GPU0", "NIC1") == "NODE"
    assert topo.distance("GPU0", "NIC4") == "SYS"
    assert [topo.distance(f"GPU{i}", f"NIC{i}") for i in range(8)] == ["PXB"] * 8
    assert rails(topo) == tuple(f"NIC{i}" for i in range(8))


def test_sample_numa_and_affinity(topo: TopoMatrix) -> None:
    assert [topo.numa_node[g] for g in topo.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert topo.cpu_affinity["GPU0"] == "0-63,128-191"
    assert topo.cpu_affinity["GPU7"] == "64-127,192-255"
    assert topo.gpu_numa_id["GPU3"] == "N/A"


def test_host_block_validates_and_counts(topo: TopoMatrix) -> None:
    result = import_host(topo, "h100-sxm-80gb")
    host = validate_document(result.host, HostSpec)
    assert host.accelerators_per_host == 8
    assert host.nics is not None and host.nics.count == 8
    assert host.nics.speed_gbit_per_s == 400
    local = host.local_topology
    assert local is not None
    assert len(local.device_links) == 28
    assert {(link.kind, link.count) for link in local.device_links} == {("nvlink", 18)}
    assert local.numa_of_accelerator == [0, 0, 0, 0, 1, 1, 1, 1]
    assert len(local.nic_affinity) == 9 * 8
    first = local.nic_affinity[0]
    assert (first.nic, first.accelerator, first.distance) == ("mlx5_10", 0, "PXB")
    assert any("assumed" in n for n in result.notes)
    assert any("mlx5_bond_0" in n and "not a compute rail" in n for n in result.notes)


def test_summary(topo: TopoMatrix) -> None:
    summary = import_host(topo, "h100-sxm-80gb", 800).summary
    assert summary["gpus"] == 8 and summary["nics"] == 9
    assert summary["nvlink_bonds"] == {"NV18": 28}
    assert summary["pairs_without_nvlink"] == {}
    assert summary["nics_per_gpu"]["GPU0"] == {
        "PXB": ["mlx5_10"],
        "NODE": ["mlx5_11", "mlx5_12", "mlx5_13"],
        "SYS": ["mlx5_14", "mlx5_15", "mlx5_16", "mlx5_17", "mlx5_bond_0"],
    }
    assert summary["numa"] == {"0": ["GPU0", "GPU1", "GPU2", "GPU3"],
                               "1": ["GPU4", "GPU5", "GPU6", "GPU7"]}
    assert summary["rails"] == [f"mlx5_{i}" for i in range(10, 18)]
    assert summary["other_nics"] == {"mlx5_bond_0": "NODE"}


def test_given_speed_is_used_and_not_noted(topo: TopoMatrix) -> None:
    result = import_host(topo, "h100-sxm-80gb", 800.0)
    assert result.host["nics"]["speed_gbit_per_s"] == 800
    assert not any("assumed" in n for n in result.notes)


def test_unknown_accelerator_is_noted_not_refused(topo: TopoMatrix) -> None:
    result = import_host(topo, "h100-sxm-81gb")
    assert any("not in the catalog" in n and "h100-sxm-80gb" in n for n in result.notes)


@pytest.mark.parametrize("speed", [0.0, -400.0, float("nan"), float("inf")])
def test_bad_speed_refused(topo: TopoMatrix, speed: float) -> None:
    with pytest.raises(InputError) as info:
        import_host(topo, "h100-sxm-80gb", speed)
    assert info.value.path == "nic_speed_gbit_per_s"


def test_blank_accelerator_refused(topo: TopoMatrix) -> None:
    with pytest.raises(InputError, match="name the accelerator"):
        import_host(topo, "  ")


def test_yaml_block_drops_into_a_cluster_file(topo: TopoMatrix) -> None:
    """The printed block replaces a preset's host and the cluster still resolves."""
    from supernode.catalog import cluster_presets

    text = render_yaml(import_host(topo, "h100-sxm-80gb"), source="sample")
    block = yaml.safe_load(text)
    assert set(block) == {"host"}
    preset = yaml.safe_load(cluster_presets()["dgx-h100-superpod-su"].read_text())
    document = copy.deepcopy(preset)
    document["host"] = block["host"]
    cluster = resolve_cluster(validate_document(document, ClusterSpec))
    assert cluster.host.nic_count == 8
    assert text.startswith("# Imported by")


def test_read_topo_file() -> None:
    assert read_topo(str(SAMPLE)).gpus[-1] == "GPU7"


# --- variants real machines produce -------------------------------------------------


def test_pasted_with_spaces_instead_of_tabs() -> None:
    text = "\n".join(line.replace("\t", "    ") for line in LINES)
    topo = parse_topo(text)
    assert len(topo.gpus) == 8 and topo.nic_devices["NIC8"] == "mlx5_bond_0"
    assert topo.numa_node["GPU5"] == 1 and topo.cells[("GPU0", "NIC0")] == "PXB"


def test_crlf_and_no_ansi() -> None:
    text = TEXT.replace("\x1b[4m", "").replace("\x1b[0m", "").replace("\n", "\r\n")
    assert parse_topo(text).gpus == tuple(f"GPU{i}" for i in range(8))


SMALL = (
    "\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tSOC\tPIX\t0-11\tN/A\n"
    "GPU1\tSOC\t X \tPHB\t0-11\tN/A\n"
    "mlx5_0\tPIX\tPHB\t X \n"
    "\nLegend:\n\n  X    = Self\n  SOC  = old name of SYS\n"
)


def test_old_driver_layout_pcie_gpus() -> None:
    """Old drivers: SOC for SYS, NICs named in the header, no NIC Legend, NUMA N/A."""
    topo = parse_topo(SMALL)
    assert topo.cells[("GPU0", "GPU1")] == "SYS"
    assert topo.nics == ("mlx5_0",) and topo.nic_devices == {"mlx5_0": "mlx5_0"}
    result = import_host(topo, "h100-sxm-80gb")
    assert result.host["local_topology"]["device_links"] == []
    assert "numa_of_accelerator" not in result.host["local_topology"]
    assert result.summary["pairs_without_nvlink"] == {"SYS": 1}
    assert result.host["nics"]["count"] == 1
    validate_document(result.host, HostSpec)


def test_no_nics() -> None:
    topo = parse_topo("\tGPU0\tGPU1\tCPU Affinity\n GPU0\t X \tNV4\t0-7\nGPU1\tNV4\t X \t0-7\n"
                      .replace(" GPU0", "GPU0"))
    result = import_host(topo, "h100-sxm-80gb")
    assert "nics" not in result.host
    assert result.host["local_topology"]["device_links"] == [
        {"a": 0, "b": 1, "kind": "nvlink", "count": 4}
    ]


# --- malformed input: an InputError naming the line ------------------------------------


def _replace_cell(row: int, column: int, value: str) -> str:
    lines = list(LINES)
    fields = lines[row].split("\t")
    fields[column] = value
    lines[row] = "\t".join(fields)
    return "\n".join(lines)


BAD = {
    "empty": ("", "", "empty input"),
    "blank lines": ("\n\n  \n", "", "empty input"),
    "no header": ("hello world\n", "line 1", "header row"),
    "ragged short": ("\n".join([LINES[0], "\t".join(LINES[1].split("\t")[:5]), *LINES[2:]]),
                     "line 2", "ragged row GPU0"),
    "ragged long": ("\n".join([*LINES[:3], LINES[3] + "\tA\tB\tC", *LINES[4:]]),
                    "line 4", "ragged row GPU2"),
    "unknown cell": (_replace_cell(2, 3, "NVX"), "line 3", "unknown cell 'NVX'"),
    "nv zero": (_replace_cell(2, 3, "NV0"), "line 3", "unknown cell 'NV0'"),
    "diagonal": (_replace_cell(1, 1, "NV18"), "line 2", "diagonal"),
    "off-diagonal X": (_replace_cell(1, 2, "X"), "line 2", "unknown cell 'X'"),
    "asymmetric": (_replace_cell(1, 2, "NV12"), "line 3", "not symmetric"),
    "unknown row": ("\n".join([LINES[0], "GPU9" + LINES[1][4:], *LINES[2:]]),
                    "line 2", "not a device"),
    "duplicate row": ("\n".join([*LINES[:3], LINES[2], *LINES[4:]]), "line 4", "second row"),
    "missing gpu row": ("\n".join([LINES[0], *LINES[2:]]), None, "no matrix row for GPU0"),
    "gpus out of order": (LINES[0].replace("GPU1", "GPU9"), "line 1", "numbered GPU0"),
    "duplicate column": (LINES[0].replace("GPU1", "GPU0"), "line 1", "appears twice"),
    "bad legend": (TEXT + "\nNIC9 is mlx5_9\n", None, "NIC Legend entries"),
    "nul bytes": ("\x00\x01\x02", "", "NUL"),
    "huge": ("x" * (2**20 + 1), "", "limit"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_malformed(name: str) -> None:
    text, path, message = BAD[name]
    with pytest.raises(InputError) as info:
        parse_topo(text, source="topo.txt")
    assert message in info.value.message, info.value.message
    if path is not None:
        assert info.value.path == path
    else:
        assert info.value.path.startswith("line ")
    assert info.value.source == "topo.txt"


def test_missing_legend_entries_are_noted() -> None:
    text = TEXT.split("NIC Legend:")[0]
    topo = parse_topo(text)
    assert topo.nic_devices["NIC3"] == "NIC3"
    assert any("no NIC Legend entry" in n for n in topo.notes)


def test_read_missing_and_binary(tmp_path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_topo(tmp_path / "absent.txt")
    binary = tmp_path / "garbage.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError, match="UTF-8"):
        read_topo(binary)
    with pytest.raises(InputError, match="not a regular file"):
        read_topo(tmp_path)


def test_nic_rows_may_be_missing() -> None:
    """Some tools print only the GPU rows: NIC distances then come from the GPU rows."""
    text = "\n".join(line for line in LINES if not re.match(r"NIC[0-9]", line))
    topo = parse_topo(text)
    assert topo.distance("NIC0", "GPU0") == "PXB" and topo.distance("GPU7", "NIC8") == "NODE"
    assert rails(topo) == tuple(f"NIC{i}" for i in range(8))
    assert topo.nic_devices["NIC8"] == "mlx5_bond_0"
