"""Read an NCCL topology XML (``NCCL_TOPO_FILE``, or NCCL's ``NCCL_TOPO_DUMP_FILE``) back
into a cluster file's ``host:`` block.

The element and attribute names are NCCL's (``supernode.exports.nccl_xml``). What is read:

* ``accelerators_per_host``: the ``<gpu>`` elements (``sm`` gives the compute capability);
* ``nics``: the ``<net>`` elements, ``speed`` in Mb/s becoming ``speed_gbit_per_s``;
* ``pcie``: generation and width of the GPUs' ``<pci>`` links (``link_speed``,
  ``link_width``);
* ``cpus``: one entry per ``<cpu>`` socket (the model named by ``arch``/``vendor``);
* ``local_topology``: NUMA node of every GPU (``numaid`` of its ``<cpu>``), the PCIe
  distance from every NIC to every GPU (``PIX``: same PCIe switch, ``PXB``: a common
  switch higher up, ``PHB``: same CPU, ``SYS``: across sockets) and direct GPU–GPU
  NVLinks (``<nvlink tclass="0x030200">``); NVLinks to an NVSwitch are summed per GPU in
  the summary.

The accelerator is the user's to name (``--accelerator``); without it, the catalog part
with the file's compute capability is taken when exactly one has it. Files are read with a
1 MiB limit by the one XML reader (:mod:`supernode.importers.xml_reader`: no DOCTYPE or
entity declarations, which NCCL never writes; at most 64 levels of nesting and 100,000
elements; integer attributes within 64 bits).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supernode.errors import InputError
from supernode.exports.nccl_xml import PCI_GPU, PCI_NVSWITCH, PCIE_SPEED, catalog_sm
from supernode.importers.xml_reader import parse_xml, xml_int
from supernode.inputs import read_text_file
from supernode.spec.cluster import HostSpec
from supernode.spec.documents import dump_yaml
from supernode.spec.loader import validate_document

MAX_XML_BYTES = 2**20
_GENERATION = {v.split(" ")[0]: k for k, v in PCIE_SPEED.items()}


@dataclass(frozen=True)
class XmlHost:
    """The imported ``host:`` block, a summary, and notes."""

    host: dict[str, Any]
    summary: dict[str, Any]
    notes: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """``{"host", "summary", "notes"}``."""
        return {"host": self.host, "summary": self.summary, "notes": list(self.notes)}


def read_nccl_xml(path: str | Path, accelerator: str | None = None) -> XmlHost:
    """Parse the file at ``path`` (see the module doc)."""
    text = read_text_file(path, "FILE", MAX_XML_BYTES)
    return parse_nccl_xml(text, accelerator, source=str(path))


def parse_nccl_xml(text: str, accelerator: str | None = None,
                   source: str | None = None) -> XmlHost:
    """Parse NCCL topology XML ``text`` into a host block."""
    root = parse_xml(text, "system", source)
    if root.tag != "system":
        raise InputError("system", f"the root element is <{root.tag}>, NCCL's is <system>",
                         source=source)
    gpus, nets = _walk(root, source)
    if not gpus:
        raise InputError("system.cpu.pci.gpu", "no <gpu> element: not a GPU host's topology",
                         source=source)
    gpus.sort(key=lambda g: g["dev"])
    return _host(gpus, nets, root, accelerator, source)


def _walk(root: ET.Element, source: str | None) -> tuple[list[dict], list[dict]]:
    """Every GPU and NIC with its CPU (numaid) and PCIe path from the CPU."""
    gpus: list[dict[str, Any]] = []
    nets: list[dict[str, Any]] = []
    for cpu in root.findall("cpu"):
        numa = _int(cpu, "numaid", "system.cpu", source)
        # (node, PCIe path from the CPU, its link (speed, width), its bus id)
        stack: list[tuple[ET.Element, tuple[int, ...], tuple[str | None, str | None] | None,
                          str | None]] = [(child, (id(cpu),), None, None)
                                          for child in reversed(cpu)]
        while stack:
            node, path, link, busid = stack.pop()
            if node.tag == "pci":
                here = (*path, id(node))
                link = (node.get("link_speed"), node.get("link_width"))
                stack += [(child, here, link, node.get("busid")) for child in reversed(node)]
            elif node.tag == "gpu":
                gpus.append({"dev": _int(node, "dev", "gpu", source),
                             "sm": _int(node, "sm", "gpu", source), "numa": numa,
                             "path": path, "link": link, "busid": busid,
                             "nvlinks": node.findall("nvlink")})
            elif node.tag == "nic":
                for net in node.findall("net"):
                    nets.append({"name": net.get("name") or f"net{len(nets)}",
                                 "dev": _int(net, "dev", "net", source),
                                 "speed": _int(net, "speed", "net", source, default=0),
                                 "numa": numa, "path": path})
    return gpus, nets


def _int(node: ET.Element, attr: str, where: str, source: str | None,
         default: int | None = None) -> int:
    """A non-negative integer attribute (:func:`xml_int`: bounded, never an overflow)."""
    return xml_int(node, attr, where, source, default, low=0)


def distance(gpu: dict, nic: dict) -> str:
    """nvidia-smi-style PCIe class between a GPU and a NIC from their PCIe paths."""
    if gpu["numa"] != nic["numa"]:
        return "SYS"
    common = 0
    for a, b in zip(gpu["path"], nic["path"], strict=False):
        if a != b:
            break
        common += 1
    if common <= 1:
        return "PHB"
    siblings = len(gpu["path"]) - 1 == common == len(nic["path"]) - 1
    return "PIX" if siblings else "PXB"


def _host(gpus, nets, root, accelerator, source) -> XmlHost:
    notes: list[str] = []
    name = accelerator or _guess_accelerator(gpus[0]["sm"], notes, source)
    host: dict[str, Any] = {"accelerator": name, "accelerators_per_host": len(gpus)}
    cpus = root.findall("cpu")
    model = _cpu_model(cpus[0])
    host["cpus"] = [{"model": model, "count": len(cpus)}]
    if nets:
        speeds = Counter(n["speed"] for n in nets)
        speed = speeds.most_common(1)[0][0]
        host["nics"] = {"count": len(nets), "speed_gbit_per_s": _number(speed / 1000.0)}
        if len(speeds) > 1:
            notes.append(f"NICs of several speeds ({sorted(speeds)} Mb/s): the most common, "
                         f"{speed} Mb/s, is used")
    pcie = _pcie(gpus[0]["link"])
    if pcie:
        host["pcie"] = pcie
    host["local_topology"] = _local(gpus, nets, source)
    validate_document(host, HostSpec, source="imported host")
    nvswitch = [sum(_int(nv, "count", "gpu.nvlink", source, 0) for nv in g["nvlinks"]
                    if nv.get("tclass") == PCI_NVSWITCH) for g in gpus]
    summary = {"gpus": len(gpus), "sm": gpus[0]["sm"], "nics": len(nets),
               "nvswitch_links_per_gpu": nvswitch,
               "numa_nodes": len({g["numa"] for g in gpus})}
    return XmlHost(host, summary, tuple(notes))


def _guess_accelerator(sm: int, notes: list[str], source) -> str:
    names = [n for n, s in catalog_sm().items() if s == sm]
    if len(names) == 1:
        notes.append(f"accelerator {names[0]} taken from the compute capability (sm {sm}); "
                     "set --accelerator if it is another part")
        return names[0]
    hint = f" (sm {sm} is one of {', '.join(names)})" if names else ""
    raise InputError("--accelerator", f"required: name the accelerator{hint}; NCCL's XML "
                                      f"gives only the compute capability", source=source)


def _cpu_model(cpu: ET.Element) -> str:
    arch, vendor = cpu.get("arch") or "unknown", cpu.get("vendor")
    if arch == "arm64":
        return "arm64"
    return f"{vendor or arch} family {cpu.get('familyid', '?')} model {cpu.get('modelid', '?')}"


def _pcie(link) -> dict | None:
    if not link or not link[0] or not link[1]:
        return None
    generation = _GENERATION.get(link[0].split(" ")[0])
    try:
        lanes = int(link[1]) if len(link[1]) <= 6 else 0
    except ValueError:
        return None
    return {"generation": generation, "lanes": lanes} if generation and lanes > 0 else None


def _local(gpus, nets, source) -> dict:
    by_bus = {g["busid"]: i for i, g in enumerate(gpus)}
    links = []
    for i, g in enumerate(gpus):
        for nv in g["nvlinks"]:
            j = by_bus.get(nv.get("target")) if nv.get("tclass") == PCI_GPU else None
            if j is not None and j > i:
                links.append({"a": i, "b": j, "kind": "nvlink",
                              "count": _int(nv, "count", "gpu.nvlink", source, 1)})
    affinity = [{"nic": n["name"], "accelerator": i, "distance": distance(g, n)}
                for n in nets for i, g in enumerate(gpus)]
    return {"device_links": links, "nic_affinity": affinity,
            "numa_of_accelerator": [g["numa"] for g in gpus]}


def _number(value: float) -> int | float:
    return int(value) if value == int(value) else value


def render_host_yaml(result: XmlHost, source: str) -> str:
    """The ``host:`` block as YAML, with the summary and notes as comments."""
    from supernode.exports.slurm import comment

    s = result.summary
    lines = [f"# Imported by `supernode import nccl-xml` from {comment(source)}",
             f"# {s['gpus']} GPUs (sm {s['sm']}), {s['nics']} NICs, {s['numa_nodes']} NUMA "
             f"node(s); NVSwitch links per GPU: {', '.join(map(str, s['nvswitch_links_per_gpu']))}"]
    lines += [f"# note: {comment(n)}" for n in result.notes]
    return "\n".join(lines) + "\n" + dump_yaml({"host": result.host})
