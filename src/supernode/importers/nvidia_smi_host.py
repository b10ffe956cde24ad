"""Turn a parsed ``nvidia-smi topo -m`` matrix into a cluster file's ``host:`` block.

The block validates as :class:`supernode.spec.cluster.HostSpec`: ``accelerators_per_host``,
``nics`` (the compute rails) and ``local_topology`` (NVLink bonds, NIC affinity, NUMA).
What nvidia-smi cannot tell is stated in the notes: the accelerator model is the user's
to name, and the NIC line rate is assumed unless given (Gb/s, 1e9 bit/s).
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from supernode.errors import InputError
from supernode.importers.nvidia_smi import PCIE_CLASSES, TopoMatrix
from supernode.spec.cluster import HostSpec
from supernode.spec.documents import dump_yaml
from supernode.spec.loader import validate_document

#: NIC line rate assumed when none is given, in Gb/s (NDR InfiniBand / 400GbE).
DEFAULT_NIC_SPEED_GBIT_PER_S = 400.0
#: A NIC this close (PCIe switch below the host bridge) to some GPU is a compute rail.
RAIL_CLASSES = ("PIX", "PXB")


@dataclass(frozen=True)
class HostImport:
    """The imported ``host:`` block, a summary of the matrix, and notes for the user."""

    host: dict[str, Any]
    summary: dict[str, Any]
    notes: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        """Plain data for ``--json``: ``{"host": ..., "summary": ..., "notes": [...]}``."""
        return {"host": self.host, "summary": self.summary, "notes": list(self.notes)}


def rails(topo: TopoMatrix) -> tuple[str, ...]:
    """NIC columns that sit at PIX or PXB from at least one GPU: the compute rails."""
    return tuple(
        nic for nic in topo.nics if any(topo.cells[(g, nic)] in RAIL_CLASSES for g in topo.gpus)
    )


def import_host(
    topo: TopoMatrix, accelerator: str, nic_speed_gbit_per_s: float | None = None
) -> HostImport:
    """Build the ``host:`` block for ``topo``.

    ``accelerator`` is a catalog name (or the name of an inline accelerator of the cluster
    file); ``nic_speed_gbit_per_s`` is the line rate of one rail in Gb/s (default 400,
    stated in the notes since nvidia-smi does not show it).
    """
    notes = list(topo.notes)
    name = accelerator.strip()
    if not name:
        raise InputError("accelerator", "name the accelerator (a catalog name such as "
                                        "h100-sxm-80gb): nvidia-smi topo -m does not show it")
    notes += _catalog_note(name)
    if nic_speed_gbit_per_s is None:
        speed = DEFAULT_NIC_SPEED_GBIT_PER_S
        notes.append(f"nics.speed_gbit_per_s: {speed:g} is assumed (nvidia-smi topo -m does "
                     "not show NIC speed); set it with --nic-speed-gbit-per-s")
    elif not (math.isfinite(nic_speed_gbit_per_s) and nic_speed_gbit_per_s > 0):
        raise InputError("nic_speed_gbit_per_s", "must be a positive, finite line rate in Gb/s, "
                                                 f"got {nic_speed_gbit_per_s}")
    else:
        speed = nic_speed_gbit_per_s
    host: dict[str, Any] = {"accelerator": name, "accelerators_per_host": len(topo.gpus)}
    rail_nics = rails(topo)
    if topo.nics:
        host["nics"] = {"count": len(rail_nics), "speed_gbit_per_s": _number(speed)}
        notes += _rail_notes(topo, rail_nics)
    else:
        notes.append("no NIC columns: the host has no compute-fabric NICs (nics left out)")
    host["local_topology"] = _local_topology(topo, notes)
    validate_document(host, HostSpec, source="imported host block")
    return HostImport(host, summarise(topo), tuple(notes))


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _catalog_note(name: str) -> list[str]:
    from supernode.catalog import accelerators

    known = accelerators()
    if name.lower() in known:
        return []
    close = difflib.get_close_matches(name.lower(), list(known), n=2, cutoff=0.4)
    hint = f" (nearest: {', '.join(close)})" if close else ""
    return [f"accelerator {name!r} is not in the catalog{hint}: define it under the cluster "
            "file's accelerators: list, or use a catalog name"]


def _rail_notes(topo: TopoMatrix, rail_nics: tuple[str, ...]) -> list[str]:
    notes = []
    for nic in topo.nics:
        if nic not in rail_nics:
            nearest = _nearest(topo, nic)
            notes.append(f"{nic} ({topo.nic_devices[nic]}) is not a compute rail: its nearest "
                         f"GPU is at {nearest}, not PIX/PXB (a bond, storage or management NIC)")
    if not rail_nics:
        notes.append("no NIC is at PIX/PXB from a GPU: nics.count is 0; set it by hand if the "
                     "host has compute-fabric NICs")
    return notes


def _nearest(topo: TopoMatrix, nic: str) -> str:
    order = {c: i for i, c in enumerate(("NV", *PCIE_CLASSES))}
    return min((topo.distance(g, nic) for g in topo.gpus), key=order.__getitem__)


def _local_topology(topo: TopoMatrix, notes: list[str]) -> dict[str, Any]:
    links = [
        {"a": i, "b": j, "kind": "nvlink", "count": topo.nvlinks(a, b)}
        for i, a in enumerate(topo.gpus)
        for j, b in enumerate(topo.gpus)
        if i < j and topo.nvlinks(a, b)
    ]
    affinity = [
        {"nic": topo.nic_devices[nic], "accelerator": i, "distance": topo.distance(gpu, nic)}
        for nic in topo.nics
        for i, gpu in enumerate(topo.gpus)
    ]
    block: dict[str, Any] = {"device_links": links, "nic_affinity": affinity}
    numa = [topo.numa_node[g] for g in topo.gpus]
    if all(n is not None for n in numa):
        block["numa_of_accelerator"] = numa
    else:
        notes.append("NUMA affinity is N/A for some GPUs: numa_of_accelerator left out")
    return block


def summarise(topo: TopoMatrix) -> dict[str, Any]:
    """GPUs, NVLink bonds per pair, NICs per GPU by distance class, NUMA layout, rails."""
    gpus = topo.gpus
    pairs = [(a, b) for i, a in enumerate(gpus) for b in gpus[i + 1 :]]
    bonds = Counter(topo.cells[p] for p in pairs if topo.nvlinks(*p))
    no_nvlink = Counter(topo.cells[p] for p in pairs if not topo.nvlinks(*p))
    per_gpu = {
        gpu: {
            cls: [topo.nic_devices[n] for n in topo.nics if topo.distance(gpu, n) == cls]
            for cls in ("NV", *PCIE_CLASSES)
            if any(topo.distance(gpu, n) == cls for n in topo.nics)
        }
        for gpu in gpus
    }
    numa: dict[str, list[str]] = {}
    for gpu in gpus:
        node = topo.numa_node[gpu]
        numa.setdefault("N/A" if node is None else str(node), []).append(gpu)
    rail_nics = rails(topo)
    return {
        "gpus": len(gpus),
        "nics": len(topo.nics),
        "gpu_pairs": len(pairs),
        "nvlink_bonds": dict(bonds),
        "pairs_without_nvlink": dict(no_nvlink),
        "nics_per_gpu": per_gpu,
        "numa": numa,
        "cpu_affinity": {n: topo.cpu_affinity[g[0]] for n, g in numa.items()},
        "rails": [topo.nic_devices[n] for n in rail_nics],
        "other_nics": {topo.nic_devices[n]: _nearest(topo, n)
                       for n in topo.nics if n not in rail_nics},
    }


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as short human lines (for YAML comments and the terminal)."""
    bonds = ", ".join(f"{n} x {code}" for code, n in summary["nvlink_bonds"].items()) or "none"
    lines = [
        f"{summary['gpus']} GPUs, {summary['nics']} NICs",
        f"NVLink bonds per GPU pair ({summary['gpu_pairs']} pairs): {bonds}",
    ]
    if summary["pairs_without_nvlink"]:
        other = ", ".join(f"{n} x {c}" for c, n in summary["pairs_without_nvlink"].items())
        lines.append(f"GPU pairs without NVLink: {other}")
    lines.append("NICs per GPU by distance (nearest first):")
    for gpu, classes in summary["nics_per_gpu"].items():
        parts = [f"{cls} {' '.join(nics) if cls in ('NV', *RAIL_CLASSES) else f'x{len(nics)}'}"
                 for cls, nics in classes.items()]
        lines.append(f"  {gpu}: {'; '.join(parts)}")
    numa = "; ".join(f"node {node}: {', '.join(gpus)} (CPUs {summary['cpu_affinity'][node]})"
                     for node, gpus in summary["numa"].items())
    lines.append(f"NUMA: {numa}")
    lines.append(f"compute rails (PIX/PXB to a GPU): {len(summary['rails'])}: "
                 f"{' '.join(summary['rails']) or 'none'}")
    if summary["other_nics"]:
        others = ", ".join(f"{n} (nearest GPU at {c})" for n, c in summary["other_nics"].items())
        lines.append(f"not rails: {others}")
    return lines


def render_yaml(result: HostImport, source: str) -> str:
    """The ``host:`` block as YAML, headed by the summary and notes as comments."""
    source = " ".join(source.splitlines())  # a comment is one line
    head = [f"Imported by `supernode import nvidia-smi-topo` from {source}"]
    head += summary_lines(result.summary)
    head += [f"note: {n}" for n in result.notes]
    body = dump_yaml({"host": result.host})
    return "".join(f"# {line}\n" for line in head) + body
