"""What the step-time model needs to know of the machine: one neutral description.

A :class:`SystemModel` is built from a loaded cluster (:func:`system_from_cluster`) or
from the ``system`` block of a validation case (:func:`system_from_validation`), so that
both paths run the very same model. Compute rates are per GPU and per precision: the
vendor's dense peaks (the MFU denominator), the part's *measured* maximum achievable matmul
throughput (the GEMM ceiling, catalog ``achievable_matmul_tflops``; a precision not
measured: the part's own measured share of peak, :func:`unmeasured_matmul_share`; a part
not measured at all: 0.79 x peak, the median measured efficiency) and its measured
fused-attention throughput by head size (catalog ``fused_attention``; missing: H100's
FlashAttention-3 table scaled by the part's achievable BF16 matmul over H100's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from supernode.collectives.fabric import Fabric
from supernode.collectives.systems import fabric_from_cluster, fabric_from_validation_system
from supernode.errors import InputError
from supernode.spec.cluster import ClusterSpec
from supernode.spec.resolved import Accelerator, Cluster
from supernode.units import TFLOPS

#: Share of device memory a training job cannot use for its own tensors: CUDA context,
#: NCCL buffers and caching-allocator fragmentation (PyTorch reserves ~0.5-1 GB of context
#: and NCCL ~1-2 GB per process; fragmentation adds a few percent). An assumption.
MEMORY_RESERVE_FRACTION = 0.05


#: Achievable matmul share of peak where no measurement is published: the median of the
#: measured parts (stas00/ml-engineering MAMF table, 12 parts, 51-97 %).
DEFAULT_MATMUL_EFFICIENCY = 0.79
#: The reference part whose fused-attention table is scaled for parts without one.
ATTENTION_REFERENCE_PART = "h100-sxm-80gb"

AttentionTable = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class SystemModel:
    """Per-GPU rates (SI) and the fabric the collectives run on.

    ``peak_flops`` is the vendor's dense peak at the plan's precision (the MFU
    denominator); ``matmul_flops_by_precision`` the measured GEMM ceilings;
    ``attention_forward`` / ``attention_backward`` the measured fused-attention FLOP/s by
    head dimension (BF16) at ``attention_reference_keys`` keys per query (the level the
    measured kernel curves are scaled to; which kernel's curves apply is the workload's
    software stack's, ``WorkloadSpec.software.attention_kernel``).
    """

    accelerator: str
    gpus: int
    scale_up_size: int
    peak_flops: float
    memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    fabric: Fabric
    notes: tuple[str, ...] = ()
    precision: str = "bf16"
    peak_flops_by_precision: dict[str, float] = field(default_factory=dict)
    matmul_flops_by_precision: dict[str, float] = field(default_factory=dict)
    attention_forward: AttentionTable = ((128.0, 0.0),)
    attention_backward: AttentionTable = ((128.0, 0.0),)
    attention_reference_keys: tuple[float, float] = (2048.0, 4096.0)
    tdp_w: float | None = None
    power_limit_w: float | None = None
    clock_ratio: float = 1.0

    @property
    def usable_memory_bytes(self) -> float:
        """Device memory a plan may fill: capacity less the reserve (bytes)."""
        return self.memory_bytes * (1.0 - MEMORY_RESERVE_FRACTION)

    def matmul_flops(self, precision: str) -> float:
        """Measured achievable GEMM FLOP/s at ``precision`` (fp16 as bf16)."""
        key = "bf16" if precision == "fp16" else precision
        return self.matmul_flops_by_precision.get(key) or self.matmul_flops_by_precision["bf16"]

    def scaled(self, compute: float = 1.0, memory_bandwidth: float = 1.0) -> SystemModel:
        """A copy with every compute rate times ``compute`` and HBM bandwidth times
        ``memory_bandwidth`` (what-if studies and property tests)."""
        from dataclasses import replace

        return replace(
            self, peak_flops=self.peak_flops * compute,
            peak_flops_by_precision={k: v * compute for k, v in
                                     self.peak_flops_by_precision.items()},
            matmul_flops_by_precision={k: v * compute for k, v in
                                       self.matmul_flops_by_precision.items()},
            attention_forward=tuple((d, r * compute) for d, r in self.attention_forward),
            attention_backward=tuple((d, r * compute) for d, r in self.attention_backward),
            memory_bandwidth_bytes_per_s=self.memory_bandwidth_bytes_per_s * memory_bandwidth)

    def at_power_limit(self, power_limit_w: float | None, path: str = "power_limit_w"
                       ) -> SystemModel:
        """A copy capped at ``power_limit_w`` W per accelerator (None: uncapped, TDP).

        Under a cap the SM clock falls to the DVFS curve's sustained clock
        (:func:`supernode.catalog.power.sustained_clock_ratio`), and with it the GEMM
        ceilings and the fused-attention rates, which are compute-bound; HBM bandwidth and
        the fabric are left alone (the memory clock is not capped the same way). The dense
        peaks stay the part's nominal ones: the MFU denominator, so a cap shows as lower
        MFU. A cap at or above TDP changes nothing.
        """
        from dataclasses import replace

        from supernode.catalog.power import power_cap_note, sustained_clock_ratio

        clock = sustained_clock_ratio(self.tdp_w, power_limit_w, path)
        k = clock / self.clock_ratio
        note = power_cap_note(self.tdp_w, power_limit_w)
        notes = tuple(n for n in self.notes if not n.startswith("power cap "))
        return replace(
            self, power_limit_w=power_limit_w, clock_ratio=clock,
            notes=notes + ((note,) if note else ()),
            matmul_flops_by_precision={p: v * k for p, v in
                                       self.matmul_flops_by_precision.items()},
            attention_forward=tuple((d, r * k) for d, r in self.attention_forward),
            attention_backward=tuple((d, r * k) for d, r in self.attention_backward))


def unmeasured_matmul_share(measured: dict[str, float], peaks: dict[str, float]) -> float:
    """Achievable share of peak for a precision whose matmul throughput no one measured:
    the part's own measured share at BF16 (else FP16, else any measured precision), or
    :data:`DEFAULT_MATMUL_EFFICIENCY` when nothing of the part is measured.

    On the parts measured at two precisions the shares agree far better within a part
    than across parts (MAMF table, stas00/ml-engineering: H100 0.80 BF16 / 0.71 FP8, B200
    0.78 / 0.76, GB200 0.73 / 0.72, Gaudi 3 0.68 / 0.70; across parts 0.51-0.97), so a
    part with a low measured BF16 share (MI325X 0.60) keeps it at FP8. The one exception
    measured since, MI300X (0.51 BF16, 0.35 FP8 in hipBLASLt), says the rule can
    flatter a part: a measured figure always replaces it."""
    shares = {p: measured[p] / peaks[p] for p in measured if peaks.get(p)}
    for p in ("bf16", "fp16", *sorted(shares)):
        if p in shares:
            return shares[p]
    return DEFAULT_MATMUL_EFFICIENCY


def compute_rates(chip: Accelerator, peak_scale: float = 1.0) -> dict[str, Any]:
    """Peaks, GEMM ceilings and attention tables of a part (FLOP/s), as SystemModel fields.

    ``peak_scale`` multiplies every rate (a validation case whose published peak differs
    from the catalog's).
    """
    from supernode.catalog import find_accelerator

    spec = chip.spec
    peaks = {p: v * peak_scale for p, v in chip.peak_flops.items()}
    for a, b in (("bf16", "fp16"), ("fp16", "bf16")):
        if a not in peaks and b in peaks:
            peaks[a] = peaks[b]
    measured: dict[str, float] = {p: v * TFLOPS * peak_scale
                                  for p, v in spec.achievable_matmul_tflops.items()}
    share = unmeasured_matmul_share(measured, peaks)
    matmul = {p: measured.get(p, share * v) for p, v in peaks.items()}
    if "fp8" not in peaks:  # no FP8 units: FP8 plans run their GEMMs in BF16
        matmul["fp8"] = matmul["bf16"]
    table = spec.fused_attention
    if table is None:
        ref = find_accelerator(ATTENTION_REFERENCE_PART)
        scale = matmul["bf16"] / (ref.achievable_matmul_tflops["bf16"] * TFLOPS)
        table = ref.fused_attention
    else:
        scale = peak_scale
    assert table is not None
    return {
        "peak_flops_by_precision": peaks,
        "matmul_flops_by_precision": matmul,
        "attention_forward": tuple(sorted((float(d), r * TFLOPS * scale)
                                          for d, r in table.forward_tflops.items())),
        "attention_backward": tuple(sorted((float(d), r * TFLOPS * scale)
                                           for d, r in table.backward_tflops.items())),
        "attention_reference_keys": (table.forward_keys, table.backward_keys),
    }


def peak_at(peaks: dict[str, float], precision: str, name: str) -> float:
    """The dense peak at ``precision``; InputError when the part publishes none."""
    if precision in peaks:
        return peaks[precision]
    raise InputError("precision", f"{name} publishes no {precision} peak; known: "
                                  f"{', '.join(sorted(peaks))}")


def system_from_cluster(cluster: Cluster, precision: str = "bf16") -> SystemModel:
    """Build the step-time model's view of a resolved cluster.

    The fabric comes from the topology (:func:`supernode.collectives.fabric_from_cluster`):
    per-tier bandwidth, latency, per-leaf oversubscription and in-network reduction. Its
    collectives are costed with the efficiency tables in force: the packaged ones, or a
    cluster calibration's (``--calibration``), which the notes then name.
    """
    fabric, borrowed = fabric_from_cluster(cluster)
    notes: tuple[str, ...] = ()
    if borrowed:
        notes = (f"no measured collective efficiency for {cluster.accelerator.name}'s scale-up "
                 f"bus: costed with the {fabric.tiers[0].efficiency} table (NVLink values "
                 "borrowed)",)
    notes += calibration_notes()
    rates = compute_rates(cluster.accelerator)
    system = SystemModel(
        accelerator=cluster.accelerator.name,
        gpus=cluster.accelerators,
        scale_up_size=max(cluster.scale_up.size, 1),
        peak_flops=peak_at(rates["peak_flops_by_precision"], precision,
                           cluster.accelerator.name),
        memory_bytes=cluster.accelerator.memory_bytes,
        memory_bandwidth_bytes_per_s=cluster.accelerator.memory_bandwidth_bytes_per_s,
        fabric=fabric,
        notes=notes,
        precision=precision,
        tdp_w=cluster.accelerator.tdp_w,
        **rates,
    )
    return system.at_power_limit(cluster.accelerator.power_limit_w,
                                 "host.accelerator_power_limit_w")


def calibration_notes() -> tuple[str, ...]:
    """A note naming the calibration in force (``--calibration``), if any: its tables cost
    every collective of this system (:func:`supernode.collectives.efficiency.tables_in_force`)."""
    from supernode.collectives.efficiency import in_force

    active = in_force()
    return (active.label,) if active is not None and active.label else ()


def system_from_validation(system: dict[str, Any], precision: str = "bf16") -> SystemModel:
    """Build the model's view of a validation case's ``system`` block.

    The case's ``peak_dense_bf16_tflops`` rescales the catalog part's rates (all
    precisions, the GEMM ceilings and the attention table alike) when it differs from the
    catalog's BF16 peak; memory capacity and bandwidth come from the catalog entry named
    by ``accelerator`` (an alias of a catalog part, or a variant sharing its die:
    :func:`supernode.catalog.names.case_accelerator`, said in ``notes``). An FP8 case
    runs its GEMMs at the part's FP8 figures. A
    ``power_limit_w`` below the part's TDP caps it (:meth:`SystemModel.at_power_limit`).
    """
    from supernode.catalog.names import case_accelerator
    from supernode.spec.resolved import convert_accelerator

    part, note = case_accelerator(system.get("accelerator"))
    chip = convert_accelerator(part)
    peak = system.get("peak_dense_bf16_tflops")
    catalog_bf16 = chip.peak("bf16")
    scale = float(peak) * TFLOPS / catalog_bf16 if peak else 1.0
    gpus = int(system["gpus"])
    rates = compute_rates(chip, scale)
    fabric = fabric_from_validation_system(system, ranks=gpus)
    model = SystemModel(
        accelerator=chip.name,
        gpus=gpus,
        scale_up_size=fabric.tiers[0].group_size,  # the job's GPUs per domain
        peak_flops=peak_at(rates["peak_flops_by_precision"], precision, chip.name),
        memory_bytes=chip.memory_bytes,
        memory_bandwidth_bytes_per_s=chip.memory_bandwidth_bytes_per_s,
        fabric=fabric,
        precision=precision,
        tdp_w=chip.tdp_w,
        notes=(note,) if note else (),
        **rates,
    )
    cap = system.get("power_limit_w")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float))):
        raise InputError("system.power_limit_w", f"expected a number of W or null, got "
                                                 f"{cap!r}")
    return model.at_power_limit(float(cap) if cap is not None else None,
                                "system.power_limit_w")


def job_system(spec: ClusterSpec, gpus: int | None = None, precision: str = "bf16",
               add_tiers: bool = False) -> SystemModel:
    """The system a job of ``gpus`` GPUs sees on ``spec`` (all of it when None): the
    cluster grown by whole scalable units when it is smaller, what changed in ``notes``
    (``add_tiers``: fat-tree tiers added to a derived variant that needs them,
    :func:`~supernode.cluster.scaling.scale_cluster`).
    """
    from dataclasses import replace

    from supernode.cluster.scaling import scale_cluster

    scaled = scale_cluster(spec, gpus, add_tiers=add_tiers)
    system = system_from_cluster(scaled.cluster, precision)
    return replace(system, gpus=scaled.job_gpus,
                   notes=tuple(scaled.notes) + tuple(system.notes))
