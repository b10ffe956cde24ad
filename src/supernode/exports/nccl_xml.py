"""NCCL topology XML (``NCCL_TOPO_FILE``) for the cluster's host type.

Element and attribute names are those NCCL's loader reads (NCCL 2.30 ``src/graph/xml.cc``
and ``topo.cc``): ``<system version="1">`` (``NCCL_TOPO_XML_VERSION``), ``<cpu numaid
affinity arch vendor familyid modelid>``, ``<pci busid class link_speed link_width>``
(class ``0x060400`` for a PCIe switch port, ``0x030200`` for a GPU, ``0x020700`` for an
InfiniBand NIC), ``<gpu dev sm rank gdr>`` with ``<nvlink target count tclass>`` (tclass
``0x068000``: an NVSwitch; ``0x030200``: a direct GPU link), ``<nic>`` with ``<net name dev
speed port latency guid maxconn gdr>`` (speed in Mb/s). The output follows NCCL's own dump
(``ncclTopoDumpXmlRec``: two-space indent, no XML declaration or comments, which its parser
does not read).

Layout written (assumptions where the cluster file is silent): GPU ``i`` and the NICs that
hang off it (NIC ``r`` serves GPU ``r * gpus / nics``, the topology builder's rule) share a
PCIe switch, so NCCL sees them at PIX distance; GPUs split evenly over the CPU sockets
(``local_topology.numa_of_accelerator`` when given); PCIe generation and width from
``host.pcie`` (gen 5 x16 by default); a switched scale-up domain gives every GPU
``links_per_accelerator`` NVLinks to the NVSwitch, a full mesh one bundle to each other GPU
(``local_topology.device_links`` when given). Bus IDs are synthetic and stable.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

from supernode.catalog import accelerators
from supernode.errors import InputError
from supernode.exports.names import file_name
from supernode.spec.resolved import Cluster
from supernode.topology.cluster_graph import DEFAULT_PCIE, cpu_sockets, nic_accelerator

NCCL_TOPO_XML_VERSION = 1
PCI_BRIDGE, PCI_GPU, PCI_IB_NIC, PCI_NVSWITCH = "0x060400", "0x030200", "0x020700", "0x068000"
#: PCIe link speed strings NCCL reads (kvDictPciGen), by generation.
PCIE_SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe",
              5: "32.0 GT/s PCIe", 6: "64.0 GT/s PCIe"}
#: CPU attributes by family of the host's CPU model (NCCL kvDictCpuArch/kvDictCpuVendor);
#: Intel Sapphire Rapids (family 6, model 0x8F) when the host names no CPU (DGX H100).
CPU_X86_INTEL = {"arch": "x86_64", "vendor": "GenuineIntel", "familyid": "6",
                 "modelid": "143"}
CPU_X86_AMD = {"arch": "x86_64", "vendor": "AuthenticAMD", "familyid": "25", "modelid": "17"}
CPU_ARM = {"arch": "arm64"}


def xml_file_name(cluster: Cluster) -> str:
    """``nccl-topo-<host type>.xml``."""
    return f"nccl-topo-{file_name(cluster.host.name)}.xml"


def cpu_attributes(cluster: Cluster) -> dict[str, str]:
    """NCCL ``<cpu>`` attributes for the host's CPU model (see :data:`CPU_X86_INTEL`)."""
    models = " ".join(c.model for c in cluster.spec.host.cpus).lower()
    if any(k in models for k in ("grace", "arm", "neoverse", "graviton", "kunpeng")):
        return dict(CPU_ARM)
    if any(k in models for k in ("epyc", "amd")):
        return dict(CPU_X86_AMD)
    return dict(CPU_X86_INTEL)


def sm_version(capability: str | None) -> int | None:
    """NCCL's ``sm`` of a CUDA compute capability: major x 10 + minor (``"10.3"`` -> 103);
    None for None."""
    if capability is None:
        return None
    major, minor = capability.split(".")
    return int(major) * 10 + int(minor)


def catalog_sm() -> dict[str, int]:
    """``sm`` of every catalog accelerator with a CUDA compute capability (its
    ``cuda_compute_capability``), by name in catalog order."""
    return {name: sm for name, spec in accelerators().items()
            if (sm := sm_version(spec.cuda_compute_capability)) is not None}


def gpu_sm(cluster: Cluster) -> int:
    """Compute capability (``sm``) of the cluster's GPU; InputError for non-NVIDIA parts
    and for a GPU whose compute capability is not given."""
    chip = cluster.accelerator
    vendor = (chip.spec.vendor or "").lower()
    sm = sm_version(chip.spec.cuda_compute_capability)
    if sm is not None:
        return sm
    if vendor != "nvidia" or chip.kind != "gpu":
        raise InputError("host.accelerator", f"NCCL topology files describe NVIDIA GPUs; "
                                             f"{chip.name} is a {chip.kind} made by "
                                             f"{chip.spec.vendor or 'an unnamed vendor'}")
    raise InputError("host.accelerator", f"no CUDA compute capability known for {chip.name}; "
                                         f"known: {', '.join(catalog_sm())}")


def host_layout(cluster: Cluster) -> dict:
    """Where every GPU and NIC of one host sits: socket per GPU, GPU per NIC, NVLinks."""
    host = cluster.spec.host
    per_host = cluster.host.accelerators_per_host
    sockets = cpu_sockets(cluster)
    local = host.local_topology
    numa = (list(local.numa_of_accelerator) if local and len(local.numa_of_accelerator)
            == per_host else [i * sockets // per_host for i in range(per_host)])
    nics = cluster.host.nic_count
    nic_gpu = [min(nic_accelerator(cluster, r), per_host - 1) for r in range(nics)]
    up = cluster.scale_up
    links: dict[int, list[tuple[int | None, int]]] = {i: [] for i in range(per_host)}
    if local and local.device_links:
        for link in local.device_links:
            if link.kind == "nvlink" and link.a < per_host and link.b < per_host:
                links[link.a].append((link.b, link.count))
                links[link.b].append((link.a, link.count))
    elif up.kind == "nvswitch" and up.size > 1:
        for i in range(per_host):
            links[i].append((None, up.links_per_accelerator))
    elif up.kind == "full_mesh" and per_host > 1:
        each = max(up.links_per_accelerator // (per_host - 1), 1)
        for i in range(per_host):
            links[i] += [(j, each) for j in range(per_host) if j != i]
    generation, lanes = (host.pcie.generation, host.pcie.lanes) if host.pcie else DEFAULT_PCIE
    return {"numa": numa, "sockets": max(sockets, max(numa) + 1), "nic_gpu": nic_gpu,
            "links": links, "pcie": (generation, lanes)}


#: Synthetic bus number of the NVSwitch the GPUs' NVLinks point to.
NVSWITCH_BUS = 0xF0
#: CPUs per socket written in the ``affinity`` masks (32-bit words, highest first, as in
#: /sys cpumaps and NCCL's ncclStrToCpuset).
CPUS_PER_SOCKET = 64


def _bus(n: int) -> str:
    return f"0000:{n:02x}:00.0"


def gpu_bus(g: int) -> str:
    """Synthetic PCI bus ID of GPU ``g`` of the host."""
    return _bus(0x10 + 0x10 * g + 1)


def cpu_mask(mask: int, words: int = 8) -> str:
    """A CPU mask as comma-separated 32-bit hex words, highest first."""
    parts = [(mask >> (32 * w)) & 0xFFFFFFFF for w in reversed(range(words))]
    return ",".join(f"{p:08x}" for p in parts)


def nccl_topology_xml(cluster: Cluster) -> str:
    """The NCCL topology XML of one host of ``cluster`` (see the module doc)."""
    sm = gpu_sm(cluster)
    lay = host_layout(cluster)
    generation, lanes = lay["pcie"]
    speed = PCIE_SPEED.get(generation, PCIE_SPEED[5])
    per_host = cluster.host.accelerators_per_host
    nic_mbps = round(cluster.host.nic_bandwidth_bytes_per_s * 8 / 1e6)
    cpu = cpu_attributes(cluster)
    per_socket = CPUS_PER_SOCKET
    lines = [f"<system version=\"{NCCL_TOPO_XML_VERSION}\">"]
    words = max(8, -(-lay["sockets"] * per_socket // 32))
    for s in range(lay["sockets"]):
        mask = ((1 << per_socket) - 1) << (s * per_socket)
        attrs = {"numaid": str(s), "affinity": cpu_mask(mask, words), **cpu}
        lines.append(f"  <cpu{_attrs(attrs)}>")
        for g in (i for i in range(per_host) if lay["numa"][i] == s):
            lines += _gpu_block(g, sm, lay, speed, lanes, nic_mbps)
        lines.append("  </cpu>")
    lines.append("</system>")
    return "\n".join(lines) + "\n"


def _gpu_block(g: int, sm: int, lay: dict, speed: str, lanes: int, nic_mbps: int) -> list[str]:
    """One PCIe switch holding GPU ``g`` and the NICs that hang off it."""
    base = 0x10 + 0x10 * g
    link = {"link_speed": speed, "link_width": str(lanes)}
    out = [f"    <pci{_attrs({'busid': _bus(base), 'class': PCI_BRIDGE, **link})}>",
           f"      <pci{_attrs({'busid': gpu_bus(g), 'class': PCI_GPU, **link})}>",
           f"        <gpu{_attrs({'dev': str(g), 'sm': str(sm), 'rank': str(g), 'gdr': '1'})}>"]
    for target, count in lay["links"][g]:
        nvlink = ({"target": _bus(NVSWITCH_BUS), "count": str(count), "tclass": PCI_NVSWITCH}
                  if target is None else
                  {"target": gpu_bus(target), "count": str(count), "tclass": PCI_GPU})
        out.append(f"          <nvlink{_attrs(nvlink)}/>")
    out += ["        </gpu>", "      </pci>"]
    for k, r in enumerate(r for r, gpu in enumerate(lay["nic_gpu"]) if gpu == g):
        net = {"name": f"mlx5_{r}", "dev": str(r), "speed": str(nic_mbps), "port": "1",
               "latency": "0.000000", "guid": f"0x{0x1000 + r:x}", "maxconn": "131072",
               "gdr": "1"}
        out += [f"      <pci{_attrs({'busid': _bus(base + 2 + k), 'class': PCI_IB_NIC, **link})}>",
                "        <nic>", f"          <net{_attrs(net)}/>", "        </nic>",
                "      </pci>"]
    out.append("    </pci>")
    return out


def _attrs(values: dict[str, str]) -> str:
    return "".join(f" {k}={quoteattr(v)}" for k, v in values.items())
