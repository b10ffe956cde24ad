"""``results.json`` -> ``cluster``, ``workload`` and ``topology``: what was reviewed and the
closed-form topology report (SI units; bandwidths per direction unless a name says
otherwise; counts per tier are whole-cluster)."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field


class ScaleUpSummary(ResultModel):
    """The scale-up domain of the cluster summary."""

    kind: str = field("Scale-up kind: nvswitch, torus, mesh, hybrid, none, ...")
    size: int = field("Accelerators per scale-up domain (supernode).")
    switch: str | None = field("Scale-up switch chip, or null without switches.")
    switch_chips: int = field("Scale-up switch chips per domain.")
    switch_tiers: int = field("Tiers of scale-up switches (0 without switches).")
    links_per_accelerator: int = field("Scale-up links of one accelerator.")
    link_bandwidth_bytes_per_s: float = field("One scale-up link, per direction (bytes/s).")
    bandwidth_per_accelerator_bytes_per_s: float = field(
        "Scale-up injection bandwidth of one accelerator, per direction (bytes/s).")
    medium: str = field("Cable medium of the scale-up links (copper, optical, pcb, ...).")
    dims: list[int] = field("Torus or mesh dimensions (empty for a switched domain).")


class ScaleOutSummary(ResultModel):
    """The scale-out fat tree of the cluster summary."""

    tiers: int = field("Switch tiers of the fat tree.")
    switch: str = field("Scale-out switch name.")
    radix: int = field("Ports per scale-out switch.")
    port_bandwidth_bytes_per_s: float = field("One switch port, per direction (bytes/s).")
    oversubscription: list[float] = field("Down/up port ratio per tier, leaf first.")
    rail_optimized: bool = field("True for a rail-optimised leaf tier.")
    medium: str = field("Cable medium of the scale-out links.")
    nics_per_host: int = field("Compute-fabric NIC ports per host.")
    nic_bandwidth_bytes_per_s: float = field("One NIC port, per direction (bytes/s).")
    switches: dict[str, int] = field("Switches per fabric tier (leaf, spine, core).")


class ClusterSummary(ResultModel):
    """Name, parts and sizes of the reviewed cluster (SI units)."""

    name: str = field("Cluster name.")
    description: str | None = field("The cluster file's description, or null.")
    source: list[str] = field("Where the design comes from (the cluster file's sources).")
    accelerator: str = field("Accelerator name.")
    accelerators: int = field("Accelerators in the cluster.")
    hosts: int = field("Hosts (servers or trays).")
    accelerators_per_host: int = field("Accelerators per host.")
    host: str = field("Host name.")
    supernodes: int = field("Scale-up domains (supernodes).")
    memory_bytes: float = field("HBM capacity of one accelerator (bytes).")
    memory_bandwidth_bytes_per_s: float = field("HBM bandwidth of one accelerator (bytes/s).")
    tdp_w: float | None = field("Accelerator TDP (W), or null when not published.")
    scale_up: ScaleUpSummary = field("The scale-up domain.")
    scale_out: ScaleOutSummary | None = field("The scale-out fabric, or null without one.")


class WorkloadSummary(ResultModel):
    """Name and sizes of the reviewed workload."""

    name: str = field("Workload name.")
    source: str | None = field("Citation of the sizes, or null.")
    params: float = field("Total parameters.")
    layers: int = field("Transformer layers.")
    hidden: int = field("Hidden size.")
    heads: int = field("Attention heads.")
    seq_len: int = field("Sequence length (tokens).")
    moe: bool = field("True for a mixture-of-experts model.")
    experts: int | None = field("Experts per MoE layer, or null for a dense model.")
    top_k: int | None = field("Experts per token, or null for a dense model.")


class ScaleUpScaleOut(ResultModel):
    """One figure for the scale-up domain and one for the scale-out fabric (null without
    a fabric)."""

    scale_up: float | None = field("Within one scale-up domain.")
    scale_out: float | None = field("Across the scale-out fabric (null without one).")


class HopCounts(ResultModel):
    """Hop counts inside a scale-up domain and across the fabric (null without one)."""

    scale_up: int | None = field("Within one scale-up domain.")
    scale_out: int | None = field("Across the scale-out fabric (null without one).")


class Bisection(ResultModel):
    """Bisection bandwidths, per direction (bytes/s)."""

    scale_up_domain: float | None = field("Half of one domain against the other half.")
    scale_out: float | None = field("Of the scale-out fabric (null without one).")
    cluster: float | None = field("Half of the supernodes against the other half.")


class Injection(ResultModel):
    """What one accelerator injects, per direction (bytes/s)."""

    scale_up: float = field("Into the scale-up domain.")
    scale_out: float = field("Into the scale-out fabric (0 without one).")


class TopologyCheck(ResultModel):
    """One seed threshold on a topology metric."""

    metric: str = field("The metric's key in the topology report.")
    value: float = field("Its value.")
    threshold: float = field("The limit.")
    comparison: str = field("How value compares with threshold (>=, <=, ...).")
    ok: bool = field("True when the threshold holds.")
    source: str = field("Where the limit comes from (seed section).")


class TopologyResults(ResultModel):
    """The topology report (``supernode topology --json``, :class:`~supernode.topology.
    metrics.TopologyReport`): counts, hops, bandwidths and ratios (SI units; per
    direction; counts per tier whole-cluster)."""

    name: str = field("Cluster name.")
    accelerators: int = field("Accelerators.")
    hosts: int = field("Hosts.")
    supernodes: int = field("Scale-up domains.")
    scale_up_kind: str = field("Scale-up kind.")
    scale_up_domain_size: int = field("Accelerators per scale-up domain.")
    switches: dict[str, int] = field("Switches per tier (scale_up_l1, leaf, spine, ...).")
    links: dict[str, int] = field("Links per tier (host, scale_up, leaf, ...).")
    cables: dict[str, int] = field("Copper or optical cables per tier.")
    optical_transceivers: dict[str, int] = field("Optical link ends per tier (two per "
                                                 "optical cable).")
    optical_modules: dict[str, int] = field("Optical modules per tier (a twin-port OSFP "
                                            "cage serves two link ends).")
    diameter_hops: HopCounts = field("Longest shortest path, in links.")
    diameter_switch_hops: HopCounts = field("Longest shortest path, in switches crossed.")
    mean_hops: ScaleUpScaleOut = field("Mean path length, in links.")
    bisection_bandwidth_bytes_per_s: Bisection = field("Bisection bandwidths (bytes/s).")
    injection_bandwidth_bytes_per_s: Injection = field("Injection per accelerator (bytes/s).")
    scale_up_to_hbm_bandwidth_ratio: float = field(
        "Scale-up bandwidth (both directions) over HBM bandwidth.")
    scale_up_to_hbm_bandwidth_ratio_per_direction: float = field(
        "Scale-up bandwidth (one direction) over HBM bandwidth.")
    scale_up_to_scale_out_ratio: float | None = field(
        "Scale-up over scale-out injection (null without a fabric).")
    scale_out_links_per_supernode: int = field("Fabric links leaving one supernode.")
    scale_out_bandwidth_per_supernode_bytes_per_s: float = field(
        "Fabric bandwidth of one supernode, per direction (bytes/s).")
    oversubscription: dict[str, float] = field("Down/up ratio per fabric tier (worst switch).")
    oversubscription_average: dict[str, float] = field(
        "Down/up ratio per fabric tier (average over the tier).")
    radix: dict[str, int | None] = field("Ports per switch, per switch tier.")
    ports_used_per_switch: dict[str, int] = field("Ports in use per switch, per tier.")
    free_ports: dict[str, int] = field("Unused ports per tier, whole cluster.")
    fabric_endpoints: int = field("Endpoints (NIC ports) on the fabric.")
    fabric_max_endpoints: int | None = field(
        "Endpoints the fabric could take at its radix and tiers (null without one).")
    zero_load_latency_s: ScaleUpScaleOut = field("Latency of the longest path at no load (s).")
    leaf_fill: list[int] = field("NIC ports on each leaf of one rail, fullest first (hosts "
                                 "spread evenly on an oversubscribed tier; empty without "
                                 "a fabric).")
    checks: list[TopologyCheck] = field("The seed thresholds that apply.")
