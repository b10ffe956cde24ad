"""The memory model against published figures of real coherent fabrics.

``data/memory/published.yaml`` holds each figure with its source. :func:`comparisons`
computes the model's value of each with the formulas of :mod:`.remote_figures` (the ones
``supernode memory`` uses):

* NVLink-C2C peak: the Grace attach link of ``data/memory/defaults.yaml``;
* sustained C2C copies: ``min(link, CPU memory, device memory) x line / (line + header)``
  (128 B lines), the "same host" tier of :func:`supernode.memory.fabric.access_paths`;
* Grace STREAM: the local tier (the memory's bandwidth);
* CXL.mem latency: :func:`supernode.memory.fabric.remote_latency_s` with no switch, the
  ``cxl_path`` one-way latency and the local DRAM latency; and its ratio to local DRAM;
* CXL.mem bandwidth under a read/write mix on the figure's PCIe link (``conditions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from supernode.memory.defaults import bundled
from supernode.memory.remote_figures import (
    attach_copy_gbyte_per_s,
    attach_peak_gbyte_per_s,
    cxl_latency_ns,
    cxl_mixed_gbyte_per_s,
    local_stream_gbyte_per_s,
)

SCHEMA = "supernode-memory-published/1"
LINE_BYTES = 128
#: HBM3 bandwidth of the GH200's Hopper (96 GB HBM3 variant), GB/s: the target of a
#: host-to-device copy (NVIDIA GH200 datasheet: up to 4 TB/s); only the minimum with the
#: 450 GB/s link matters.
GH200_HBM_GBYTE_PER_S = 4000.0


@dataclass(frozen=True)
class Comparison:
    """One published figure and the model's value."""

    id: str
    fabric: str
    metric: str
    published: str
    model: float
    error: float | None     # relative, for point figures
    within: bool
    source: str
    note: str

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return dict(self.__dict__)


@lru_cache(maxsize=1)
def published() -> dict[str, Any]:
    """The bundled figures document."""
    return bundled("published.yaml", SCHEMA)


def cxl_path_latency_ns() -> tuple[float, float]:
    """The bundled CXL path's load latency and the local DRAM latency it compares with (ns)."""
    cxl = published()["cxl_path"]
    local = float(cxl["local_dram_latency_ns"])
    return cxl_latency_ns(float(cxl["one_way_ns"]), float(cxl["device_controller_ns"]),
                          local), local


def _conditions(fig_id: str) -> dict[str, Any]:
    fig = next(f for f in published()["figures"] if f["id"] == fig_id)
    conditions: dict[str, Any] = fig["conditions"]
    return conditions


def model_values() -> dict[str, float]:
    """The model's value of each figure id (units as the figure's metric)."""
    copy = attach_copy_gbyte_per_s("Grace", LINE_BYTES, GH200_HBM_GBYTE_PER_S)
    cxl_ns, local_ns = cxl_path_latency_ns()
    mix = _conditions("cxl-expander-mixed-bandwidth")
    return {
        "c2c-peak-per-direction": attach_peak_gbyte_per_s("Grace"),
        "c2c-host-to-device-measured": copy,
        "c2c-device-to-host-measured": copy,
        "grace-lpddr5x-stream": local_stream_gbyte_per_s("Grace"),
        "cxl-expander-latency": cxl_ns,
        "cxl-expander-latency-ratio": cxl_ns / local_ns,
        "cxl-expander-mixed-bandwidth": cxl_mixed_gbyte_per_s(
            int(mix["link_lanes"]), float(mix["link_gt_per_s"]), float(mix["read_fraction"])),
    }


def comparisons() -> list[Comparison]:
    """Every published figure against the model."""
    values = model_values()
    out = []
    for fig in published()["figures"]:
        model = values[fig["id"]]
        if fig["kind"] == "point":
            error = model / float(fig["value"]) - 1
            within = abs(error) <= float(fig["tolerance"])
            shown = f"{fig['value']} (+-{float(fig['tolerance']):.0%})"
        else:
            error = None
            within = float(fig["low"]) <= model <= float(fig["high"])
            shown = f"{fig['low']}-{fig['high']}"
        out.append(Comparison(fig["id"], fig["fabric"], fig["metric"], shown, model, error,
                              within, fig["source"], fig.get("expected_miss", "")))
    return out
