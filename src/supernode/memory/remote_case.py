"""The ``remote_memory`` validation case: a published remote or coherent memory access
figure and the memory model's prediction of it (``supernode validate``; docs/memory.md).

A case (``supernode-validation/1``, ``kind: remote_memory``):

* ``fabric``: ``nvlink-c2c`` (a CPU's attach link to its accelerator), ``cxl`` (a CXL.mem
  expander) or ``local`` (the unit's own memory, the reference a remote figure is
  judged against);
* ``part``: the CPU model whose link and memory it is (``Grace``; ``nvlink-c2c`` and
  ``local``), looked up in ``data/memory/defaults.yaml``;
* ``direction``: ``peak`` (the link's peak per direction), ``host_to_device`` or
  ``device_to_host`` (a sustained copy over the link), ``stream`` (local), ``load`` (a
  dependent load, CXL latency) or ``mixed`` (CXL reads and writes at ``read_fraction``);
* ``access_bytes``: bytes per access (null: the memory model's 128 B line; CXL moves 64 B);
* ``device_memory_gbyte_per_s``: the far side's memory bandwidth where it may limit a
  copy (null: not limiting); ``link``: ``{lanes, gt_per_s}`` of a CXL device's PCIe link;
* ``measured``: ``latency_ns`` or ``bandwidth_gbyte_per_s``; ``source`` cites it.

The formulas are :mod:`.remote_figures` (the ones ``supernode memory published`` uses);
the CXL path's latencies are the bundled ``cxl_path`` of ``data/memory/published.yaml``.
A combination the model does not cover raises :class:`RemoteCaseError` (``unsupported``).
"""

from __future__ import annotations

from typing import Any

from supernode.memory.published import LINE_BYTES, cxl_path_latency_ns
from supernode.memory.remote_figures import (
    CXL_LINE_BYTES,
    attach_copy_gbyte_per_s,
    attach_peak_gbyte_per_s,
    cxl_mixed_gbyte_per_s,
    local_stream_gbyte_per_s,
)

#: The case's metrics, in the order the primary one is picked from ``measured``.
METRICS = ("bandwidth_gbyte_per_s", "latency_ns")


class RemoteCaseError(ValueError):
    """The case's combination of fabric, direction and metric is not modelled."""


def case_metric(case: dict[str, Any]) -> str:
    """The metric the case publishes (the first of :data:`METRICS` in ``measured``)."""
    measured = case.get("measured") or {}
    return next((m for m in METRICS if m in measured), METRICS[0])


def _number(case: dict[str, Any], key: str, default: float | None = None) -> float | None:
    value = case.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise RemoteCaseError(f"{key} must be a positive number, got {value!r}")
    return float(value)


def _bandwidth(case: dict[str, Any], fabric: str, direction: str) -> tuple[float, str]:
    part = str(case.get("part") or "")
    if fabric in ("nvlink-c2c", "local") and not part:
        raise RemoteCaseError(f"part (the CPU model) is needed for fabric {fabric!r}")
    if fabric == "nvlink-c2c" and direction == "peak":
        return attach_peak_gbyte_per_s(part), f"{part}'s attach link, peak per direction"
    if fabric == "nvlink-c2c" and direction in ("host_to_device", "device_to_host"):
        line = int(_number(case, "access_bytes") or LINE_BYTES)
        device = _number(case, "device_memory_gbyte_per_s")
        return (attach_copy_gbyte_per_s(part, line, device),
                f"min(link, {part} memory, device memory) x {line}/({line}+header); the "
                "model is symmetric in direction")
    if fabric == "local" and direction == "stream":
        return local_stream_gbyte_per_s(part), f"{part}'s memory bandwidth"
    if fabric == "cxl" and direction == "mixed":
        link = case.get("link") or {}
        lanes, rate = link.get("lanes"), link.get("gt_per_s")
        if not isinstance(lanes, int) or not isinstance(rate, int | float):
            raise RemoteCaseError("link.lanes (integer) and link.gt_per_s are needed")
        read = case.get("read_fraction")
        if not isinstance(read, int | float):
            raise RemoteCaseError("read_fraction is needed for a mixed CXL case")
        return (cxl_mixed_gbyte_per_s(lanes, float(rate), float(read),
                                      _number(case, "device_memory_gbyte_per_s")),
                f"PCIe x{lanes} at {rate:g} GT/s per direction x {CXL_LINE_BYTES}/"
                f"({CXL_LINE_BYTES}+header) / max(r, 1 - r), r = {read:.3g}")
    raise RemoteCaseError(f"no bandwidth model for fabric {fabric!r}, direction "
                          f"{direction!r}")


def predict_remote_case(case: dict[str, Any]) -> tuple[str, float, str]:
    """(metric, predicted value in the metric's unit, what the model did) for one case."""
    fabric, direction = str(case.get("fabric")), str(case.get("direction"))
    metric = case_metric(case)
    if metric == "latency_ns":
        if fabric == "cxl" and direction == "load":
            latency, local = cxl_path_latency_ns()
            return metric, latency, (f"2 x one way + controller + DRAM ({local:g} ns), the "
                                     "bundled CXL path")
        raise RemoteCaseError(f"no latency model for fabric {fabric!r}, direction "
                              f"{direction!r}")
    value, detail = _bandwidth(case, fabric, direction)
    return metric, value, detail
