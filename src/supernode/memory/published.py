"""The memory model against published figures of real coherent fabrics.

``data/memory/published.yaml`` holds each figure with its source. :func:`comparisons`
computes the model's value of each with the same formulas ``supernode memory`` uses:

* NVLink-C2C peak: the Grace attach link of ``data/memory/defaults.yaml``;
* sustained C2C copies: ``min(link, target memory bandwidth) x line / (line + header)``
  (:func:`supernode.memory.fabric.line_efficiency`, 128 B lines), the "same host" tier of
  :func:`supernode.memory.fabric.access_paths`;
* Grace STREAM: the local tier (the memory's bandwidth);
* CXL.mem latency: :func:`supernode.memory.fabric.remote_latency_s` with no switch, the
  ``cxl_path`` one-way latency and the local DRAM latency; and its ratio to local DRAM.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from supernode.memory.defaults import bundled, cpu_defaults
from supernode.memory.fabric import line_efficiency, remote_latency_s
from supernode.units import NS

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


def model_values() -> dict[str, float]:
    """The model's value of each figure id (units as the figure's metric)."""
    grace = cpu_defaults("Grace")
    link = float(grace["attach_bandwidth_gbyte_per_s"])
    eff = line_efficiency(LINE_BYTES)
    cxl = published()["cxl_path"]
    local_s = float(cxl["local_dram_latency_ns"]) * NS
    cxl_s = remote_latency_s(float(cxl["one_way_ns"]) * NS, 0, 0.0, local_s,
                             float(cxl["device_controller_ns"]) * NS)
    return {
        "c2c-peak-per-direction": link,
        "c2c-host-to-device-measured": min(link, GH200_HBM_GBYTE_PER_S) * eff,
        "c2c-device-to-host-measured": min(link, float(grace["bandwidth_gbyte_per_s"])) * eff,
        "grace-lpddr5x-stream": float(grace["bandwidth_gbyte_per_s"]),
        "cxl-expander-latency": cxl_s / NS,
        "cxl-expander-latency-ratio": cxl_s / local_s,
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
