"""NCCL topology XML: what NCCL's loader requires, a golden file, and the round trip with
``supernode import nccl-xml``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from supernode.cluster.load import load_cluster, load_cluster_spec
from supernode.cluster.resolve import resolve_cluster
from supernode.errors import InputError
from supernode.exports import export_files
from supernode.exports.nccl_xml import PCIE_SPEED, gpu_sm, host_layout, nccl_topology_xml
from supernode.importers.nccl_xml import parse_nccl_xml
from supernode.spec.cluster import ClusterSpec

GOLDEN = Path(__file__).parent / "data" / "exports" / "nccl-topo-dgx-h100.xml"
NVIDIA = ["dgx-h100-superpod-su", "gb200-nvl72-superpod", "dgx-a100-selene-like",
          "hgx-h100", "gb300-nvl72", "dgx-b200-superpod-4su"]
#: Attributes NCCL's loader reads with xmlGetAttrInt/Str (fails when missing), per element.
REQUIRED = {"system": ("version",), "cpu": ("numaid", "arch"),
            "pci": ("busid", "class", "link_speed", "link_width"),
            "gpu": ("dev", "sm", "rank", "gdr"), "nvlink": ("target", "count", "tclass"),
            "net": ("dev",)}


@pytest.mark.parametrize("preset", NVIDIA)
def test_xml_has_what_nccl_reads(preset):
    cluster = load_cluster(preset)
    root = ET.fromstring(nccl_topology_xml(cluster))
    assert root.tag == "system" and root.get("version") == "1"
    for element in root.iter():
        for attr in REQUIRED.get(element.tag, ()):
            assert element.get(attr) is not None, (element.tag, attr)
        if element.tag == "pci":
            assert element.get("link_speed") in PCIE_SPEED.values()
        if element.tag == "cpu" and element.get("arch") == "x86_64":
            assert element.get("vendor") in ("GenuineIntel", "AuthenticAMD")
    gpus = root.findall(".//gpu")
    assert len(gpus) == cluster.host.accelerators_per_host
    assert sorted(int(g.get("rank")) for g in gpus) == list(range(len(gpus)))
    assert {int(g.get("sm")) for g in gpus} == {gpu_sm(cluster)}
    nets = root.findall(".//net")
    assert len(nets) == cluster.host.nic_count
    assert {int(n.get("speed")) for n in nets} == {
        round(cluster.host.nic_bandwidth_bytes_per_s * 8 / 1e6)}
    busids = [p.get("busid") for p in root.iter("pci")]
    assert len(set(busids)) == len(busids)


def test_golden_dgx_h100():
    cluster = load_cluster("dgx-h100-superpod-su")
    assert nccl_topology_xml(cluster) == GOLDEN.read_text()


@pytest.mark.parametrize("preset", NVIDIA)
def test_round_trip_with_the_importer(preset):
    """import(export(cluster)) gives back the host's GPUs, NICs, PCIe, NUMA layout and the
    PIX pairing of every NIC with its GPU; exporting the imported host again gives the same
    file."""
    cluster = load_cluster(preset)
    text = nccl_topology_xml(cluster)
    imported = parse_nccl_xml(text, cluster.accelerator.name)
    host = imported.host
    assert host["accelerators_per_host"] == cluster.host.accelerators_per_host
    assert host["nics"]["count"] == cluster.host.nic_count
    assert host["nics"]["speed_gbit_per_s"] == cluster.spec.host.nics.speed_gbit_per_s
    lay = host_layout(cluster)
    assert host["local_topology"]["numa_of_accelerator"] == lay["numa"]
    pix = {(a["nic"], a["accelerator"]) for a in host["local_topology"]["nic_affinity"]
           if a["distance"] == "PIX"}
    assert pix == {(f"mlx5_{r}", g) for r, g in enumerate(lay["nic_gpu"])}
    assert imported.summary["nvswitch_links_per_gpu"] == [cluster.scale_up.links_per_accelerator
                                                          ] * len(lay["numa"])
    doc = load_cluster_spec(preset).model_dump(exclude_none=True)
    doc["host"] = host                                   # the imported block, nothing else
    again = resolve_cluster(ClusterSpec.model_validate(doc))
    assert nccl_topology_xml(again) == text


def test_direct_gpu_links_survive_the_round_trip():
    doc = load_cluster_spec("hgx-h100").model_dump(exclude_none=True)
    links = [{"a": 0, "b": 1, "kind": "nvlink", "count": 6},
             {"a": 2, "b": 3, "kind": "nvlink", "count": 12}]
    doc["host"]["local_topology"] = {"device_links": links}
    cluster = resolve_cluster(ClusterSpec.model_validate(doc))
    imported = parse_nccl_xml(nccl_topology_xml(cluster), "h100-sxm-80gb")
    assert imported.host["local_topology"]["device_links"] == links


def test_non_nvidia_hosts_are_refused():
    with pytest.raises(InputError, match="NCCL topology files describe NVIDIA GPUs"):
        export_files(load_cluster("mi300x-8"), ["nccl-xml"])


@pytest.mark.parametrize("text, match", [
    ("<system version='1'>", "not well-formed"),
    ("<topology/>", "root element is <topology>"),
    ("<system version='1'><cpu numaid='0' arch='x86_64'/></system>", "no <gpu> element"),
    ("<!DOCTYPE x [<!ENTITY a 'b'>]><system/>", "DOCTYPE"),
    ("<system version='1'><cpu numaid='zero'/></system>", "numaid: must be an integer"),
])
def test_importer_refuses_bad_files(text, match):
    with pytest.raises(InputError, match=match):
        parse_nccl_xml(text, "h100-sxm-80gb")


def test_importer_guesses_the_accelerator_only_when_unique():
    text = nccl_topology_xml(load_cluster("gb300-nvl72"))
    assert parse_nccl_xml(text).host["accelerator"] == "gb300"
    with pytest.raises(InputError, match="h100-sxm-80gb, h200-sxm-141gb"):
        parse_nccl_xml(nccl_topology_xml(load_cluster("hgx-h100")))
