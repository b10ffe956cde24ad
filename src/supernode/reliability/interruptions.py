"""Expected unexpected interruptions of one job, by component (and of a validation case).

A validation case (``kind: interruptions``) gives only a ``system`` block (accelerator, GPUs,
GPUs per scale-up domain) and a duration. Its inventory is that of the bundled cluster preset
built from the same accelerator (the nearest scale-up domain size), grown by whole units to
the case's GPUs (:func:`supernode.cluster.scaling.scale_cluster`, which adds fat-tree tiers as
needed); without an accelerator, a DGX H100 SuperPOD. The prediction is the default component
rates times those counts times the duration: no figure of the case is used.
"""

from __future__ import annotations

from typing import Any

from supernode.errors import InputError
from supernode.reliability.inventory import Inventory, cluster_inventory, interruption_rates
from supernode.reliability.rates import DAY_S, default_rates

#: Preset used when a case names no accelerator (the fleet the default rates come from).
DEFAULT_PRESET = "dgx-h100-superpod-su"


def rates_by_component(inventory: Inventory, rates: dict | None = None) -> dict[str, float]:
    """Failures per day of each component of ``inventory`` (summed over locations)."""
    out: dict[str, float] = {}
    for (component, _), rate in interruption_rates(inventory, rates or default_rates()).items():
        out[component] = out.get(component, 0.0) + rate * DAY_S
    return out


def _preset_for(accelerator: str | None, scale_up: int | None) -> str:
    """The bundled preset of ``accelerator`` whose domain size is nearest ``scale_up``."""
    from supernode.catalog import cluster_presets, find_accelerator
    from supernode.cluster.load import load_cluster_spec

    if accelerator is None:
        return DEFAULT_PRESET
    chip = find_accelerator(str(accelerator), path="system.accelerator").name
    best: tuple[int, str] | None = None
    for name in sorted(cluster_presets()):
        spec = load_cluster_spec(name)
        host_chip = spec.host.accelerator
        host_name = host_chip if isinstance(host_chip, str) else host_chip.name
        if find_accelerator(host_name).name != chip:
            continue
        gap = abs(spec.scale_up.size - (scale_up or spec.scale_up.size))
        if best is None or gap < best[0]:
            best = (gap, name)
    if best is None:
        raise InputError("system.accelerator", f"no bundled cluster preset uses {chip}; "
                                               f"its inventory cannot be derived")
    return best[1]


def case_inventory(system: dict[str, Any]) -> tuple[Inventory, str]:
    """The inventory of a validation case's ``system`` and the preset it was grown from."""
    from supernode.cluster.load import load_cluster_spec
    from supernode.cluster.scaling import scale_cluster

    try:
        gpus = int(system["gpus"])
    except (KeyError, TypeError, ValueError):
        raise InputError("system.gpus", "required: the GPUs the job spans") from None
    if gpus < 1:
        raise InputError("system.gpus", f"must be >= 1, got {gpus}")
    scale_up = system.get("scale_up_gpus")
    preset = _preset_for(system.get("accelerator"), int(scale_up) if scale_up else None)
    scaled = scale_cluster(load_cluster_spec(preset), gpus, add_tiers=True)
    return cluster_inventory(scaled.cluster, job_gpus=gpus), preset


def predict_case(case: dict[str, Any]) -> tuple[float, str]:
    """Expected unexpected interruptions of a validation case, and how it was derived."""
    try:
        days = float(case["duration_days"])
    except (KeyError, TypeError, ValueError):
        raise InputError("duration_days", "required: the duration in days") from None
    if not days > 0:
        raise InputError("duration_days", f"must be > 0, got {days}")
    system = case.get("system")
    if not isinstance(system, dict):
        raise InputError("system", "required: a mapping with gpus (and accelerator)")
    inventory, preset = case_inventory(system)
    per_day = rates_by_component(inventory)
    top = sorted(per_day.items(), key=lambda kv: -kv[1])[:3]
    detail = (f"default component rates on {preset} grown to {inventory.job_gpus:,} GPUs: "
              f"{sum(per_day.values()):.3g}/day; top: "
              + ", ".join(f"{k} {v / sum(per_day.values()):.0%}" for k, v in top))
    return sum(per_day.values()) * days, detail
