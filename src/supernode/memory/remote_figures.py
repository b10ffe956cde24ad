"""The memory model's formulas for published remote-memory figures (GB/s, ns; file units).

One home for what :mod:`.published` compares and what the ``remote_memory`` validation
kind (:mod:`.remote_case`) predicts:

* an attach link's peak per direction (Grace's NVLink-C2C: ``data/memory/defaults.yaml``);
* a sustained copy over it: ``min(link, CPU memory, device memory) x line / (line +
  header)`` (:func:`supernode.memory.fabric.line_efficiency`): the "same host" tier of
  :func:`supernode.memory.fabric.access_paths`, the same in either direction;
* a unit's own memory (STREAM): its bandwidth;
* a CXL.mem expander's load latency: :func:`supernode.memory.fabric.remote_latency_s`
  with no switch (host port, link and device controller each way, then the device DRAM);
* a CXL.mem expander's bandwidth under a read/write mix: the PCIe link per direction
  (lanes x GT/s x 128/130 / 8: PCIe 5.0's 128b/130b encoding, PCI-SIG) carries the read
  data device -> host and the write data host -> device at the same time (full duplex),
  so the busier direction limits: ``link x line / (line + header) / max(r, 1 - r)`` for a
  read fraction ``r``, capped by the device's DRAM when it is given. Lines of 64 B (CXL.mem
  moves 64-byte cache lines, CXL 2.0 specification).
"""

from __future__ import annotations

from supernode.memory.defaults import cpu_defaults
from supernode.memory.fabric import line_efficiency, remote_latency_s
from supernode.units import NS

#: Line a CXL.mem request moves (bytes): a 64-byte cache line (CXL 2.0 specification).
CXL_LINE_BYTES = 64
#: PCIe 5.0 line code: 128 payload bits in 130 (PCI-SIG PCIe 5.0 base specification).
PCIE_ENCODING = 128 / 130


def attach_peak_gbyte_per_s(part: str) -> float:
    """Peak bandwidth per direction of ``part``'s attach link (GB/s)."""
    return float(cpu_defaults(part)["attach_bandwidth_gbyte_per_s"])


def attach_copy_gbyte_per_s(part: str, line_bytes: int,
                            device_gbyte_per_s: float | None = None) -> float:
    """Sustained copy between ``part``'s memory and a device's over its attach link (GB/s):
    the slowest of the link, the part's memory and the device's memory (None: not
    limiting), times the line efficiency. The model is symmetric in direction."""
    cpu = cpu_defaults(part)
    limits = [float(cpu["attach_bandwidth_gbyte_per_s"]), float(cpu["bandwidth_gbyte_per_s"])]
    if device_gbyte_per_s is not None:
        limits.append(device_gbyte_per_s)
    return min(limits) * line_efficiency(line_bytes)


def local_stream_gbyte_per_s(part: str) -> float:
    """STREAM bandwidth of ``part``'s own memory (GB/s): its bandwidth."""
    return float(cpu_defaults(part)["bandwidth_gbyte_per_s"])


def cxl_latency_ns(one_way_ns: float, controller_ns: float, dram_ns: float) -> float:
    """Load latency of CXL.mem memory (ns): 2 x one way + the device controller + its DRAM."""
    return remote_latency_s(one_way_ns * NS, 0, 0.0, dram_ns * NS, controller_ns * NS) / NS


def pcie_link_gbyte_per_s(lanes: int, gt_per_s: float) -> float:
    """Payload bandwidth of a PCIe 5.0-coded link per direction (GB/s)."""
    return lanes * gt_per_s * PCIE_ENCODING / 8


def cxl_mixed_gbyte_per_s(lanes: int, gt_per_s: float, read_fraction: float,
                          device_gbyte_per_s: float | None = None) -> float:
    """Sustained bandwidth (reads + writes, GB/s) of a CXL.mem device on a ``lanes`` x
    ``gt_per_s`` link under a ``read_fraction`` mix (module docstring)."""
    if not 0 <= read_fraction <= 1:
        raise ValueError(f"read_fraction must be in [0, 1], got {read_fraction}")
    link = pcie_link_gbyte_per_s(lanes, gt_per_s) * line_efficiency(CXL_LINE_BYTES)
    total = link / max(read_fraction, 1 - read_fraction)
    return total if device_gbyte_per_s is None else min(total, device_gbyte_per_s)
