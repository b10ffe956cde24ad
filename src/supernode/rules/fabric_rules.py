"""Rules on the interconnect: scale-up vs HBM, oversubscription, hops, scale-out links and
growth headroom (seed 001 §2; seed 000 §2.1; seed 003 §5.1). Fixes whose effect is a closed
form are predicted by re-running the topology report on the fixed cluster document."""

from __future__ import annotations

import math

from supernode.cluster.resolve import resolve_cluster
from supernode.errors import InputError
from supernode.rules._fmt import num, pct
from supernode.rules.facts import Facts
from supernode.rules.registry import Outcome, Threshold, check, number, rule
from supernode.topology.metrics import topology_report
from supernode.units import GBIT_PER_S, GBYTE_PER_S

#: Seeds' line on a plan's communication share (seed 000 §5.2: <= 20 % of the step), the
#: consequence the 30 % floor is graded on.
COMM_LINE = 0.20


def _parts_over_floor(threshold: float) -> list[str]:
    """Catalog parts whose scale-up bandwidth (both ways) is >= ``threshold`` x their HBM
    bandwidth."""
    from supernode.catalog import accelerators

    return sorted(name for name, a in accelerators().items()
                  if a.scale_up_ports and 2 * a.scale_up_ports *
                  a.scale_up_port_bandwidth_gbyte_per_s >=
                  threshold * a.memory_bandwidth_tbyte_per_s * 1e3)


def _tp_consequence(facts: Facts) -> tuple[str, bool]:
    """What the floor costs this design's plan: its exposed TP communication against the
    seeds' 20 % line, and the TP degree the scale-up carries under the line (the exposed
    share scaled by t - 1: a ring step's bytes per card grow as (t - 1) / t while its
    compute shrinks as 1 / t). True when the plan's TP suffers (over the line)."""
    view = facts.reviewed_plan
    if view is None:
        return "no plan to grade it on", True
    tp = view["tp"]
    step = sum(view["breakdown_s"].values()) or view["step_time_s"]
    share = view["breakdown_s"].get("tp_comm", 0.0) / step if step else 0.0
    if tp <= 1:
        return "the plan uses no tensor parallelism (TP 1): nothing stalls on it", False
    size = facts.cluster.scale_up.size
    carries = size if share <= 0 else min(size, int(1 + COMM_LINE * (tp - 1) / share))
    return (f"TP {tp}: exposed TP communication {pct(share)} of the step (line "
            f"{pct(COMM_LINE)}, margin {100 * (COMM_LINE - share):+.1f} points); the "
            f"scale-up carries TP up to about {carries} under the line",
            share > COMM_LINE)


@rule("scale_up_hbm_ratio", "Scale-up bandwidth per card >= 30 % of its HBM bandwidth",
      "seed 001 §2.1", "ratio", ">=", "fabric", """
      Tensor parallelism moves activations between cards at every layer; when the scale-up
      bus is far slower than the card's own memory, splitting a layer across cards stalls
      the tensor cores. The seed sets the floor at 30 % of the card's HBM bandwidth (both
      directions, as its 900 GB/s vs 3 TB/s example counts it): below it TP stops scaling.
      Below the floor the rule is graded on that consequence for this design: an error
      only when the plan's exposed TP communication is over the seeds' 20 % line, a
      warning with the measured margin otherwise.""")
def scale_up_hbm_ratio(facts: Facts, threshold: Threshold) -> Outcome:
    """Both-direction scale-up bandwidth per card over HBM bandwidth."""
    ratio = facts.topology["scale_up_to_hbm_bandwidth_ratio"]
    c = facts.cluster
    hbm = c.accelerator.memory_bandwidth_bytes_per_s
    link = c.scale_up.link_bandwidth_bytes_per_s
    floor = number(threshold)
    need = math.ceil(floor * hbm / 2 / link) if link > 0 else None
    both = 2 * facts.topology["injection_bandwidth_bytes_per_s"]["scale_up"]
    detail = (f"{both / GBYTE_PER_S:,.0f} GB/s both ways per card vs "
              f"{hbm / GBYTE_PER_S:,.0f} GB/s HBM: ratio {ratio:.2f}")
    if ratio >= floor:
        return check(True, ratio, detail)
    consequence, suffers = _tp_consequence(facts)
    fix = predicted = value = None
    patch = None
    if need is not None and need <= c.accelerator.scale_up_ports:
        fix = (f"give each card {need} scale-up links of {link / GBYTE_PER_S:,.0f} GB/s "
               f"(now {c.scale_up.links_per_accelerator}; {c.accelerator.name} has "
               f"{c.accelerator.scale_up_ports} ports)")
        predicted, value = f"ratio {2 * need * link / hbm:.2f}", 2 * need * link / hbm
        patch = ((("scale_up", "links_per_accelerator"), need),)
    else:
        parts = _parts_over_floor(floor)
        fix = (f"choose a part whose scale-up bandwidth is at least {pct(floor)} of its HBM "
               f"bandwidth: in the catalog {', '.join(parts)}" if parts else
               f"no part in the catalog has scale-up bandwidth >= {pct(floor)} of its HBM "
               f"bandwidth ({c.accelerator.name} has all {c.accelerator.scale_up_ports} "
               "ports in use): keep TP where the margin above says it runs")
    return check(False, ratio, f"{detail}; {consequence}", fix, predicted, value,
                 severity=None if suffers else "warning", fix_patch=patch)


def fixed_topology(facts: Facts, path: tuple[str, ...], value: object) -> dict | None:
    """The topology report dict of the cluster with ``path`` set to ``value`` (None if illegal)."""
    spec = facts.cluster.spec
    data = spec.model_dump()
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        fixed = resolve_cluster(type(spec).model_validate(data))
        return topology_report(fixed).to_dict()
    except (InputError, ValueError):
        return None


@rule("no_oversubscription", "No oversubscription between supernodes", "seed 001 §2.2",
      "ratio", "<=", "fabric", """
      Pipeline and expert-parallel traffic between supernodes is large and runs in one
      direction at a time; the seed reports that even a 2:1 oversubscribed fabric causes
      severe congestion, so the bandwidth between supernodes is kept non-blocking (1:1)
      at every tier.""")
def no_oversubscription(facts: Facts, threshold: Threshold) -> Outcome:
    """Worst down:up ratio of the scale-out fabric."""
    over = facts.topology["oversubscription"]
    if not facts.topology["fabric_endpoints"]:
        return Outcome("not_applicable", None, "one supernode: no scale-out fabric")
    worst = max(over.values(), default=1.0)
    fixed = fixed_topology(facts, ("scale_out", "oversubscription"), [])
    predicted = None
    if fixed is not None:
        before = sum(facts.topology["switches"].values())
        after = sum(fixed["switches"].values())
        predicted = (f"oversubscription 1.00 with {after - before:+,} switches "
                     f"({after:,} in all)")
    return check(worst <= number(threshold) + 1e-9, worst,
                 "down:up per tier " + ", ".join(f"{t} {v:.2f}" for t, v in over.items()),
                 "set scale_out.oversubscription to [] (1:1): as many uplinks as downlinks",
                 predicted, 1.0 if fixed is not None else None,
                 fix_patch=((("scale_out", "oversubscription"), []),))


@rule("fabric_hops", "At most 4 hops between any two servers (two-tier fabric)",
      "seed 001 §2.3", "hops", "<=", "fabric", """
      A two-tier leaf-spine (CLOS) fabric reaches any server from any other in four hops
      for hundreds of supernodes; every extra tier adds latency, switches and a larger
      failure domain to troubleshoot. Fewer tiers keep the fault domain small.""")
def fabric_hops(facts: Facts, threshold: Threshold) -> Outcome:
    """Longest NIC-to-NIC path in links."""
    hops = facts.topology["diameter_hops"].get("scale_out")
    if hops is None:
        return Outcome("not_applicable", None, "one supernode: no scale-out fabric")
    tiers = facts.cluster.scale_out.tiers if facts.cluster.scale_out else 0
    fixed = fixed_topology(facts, ("scale_out", "tiers"), 2) if tiers > 2 else None
    predicted = (f"{fixed['diameter_hops']['scale_out']} hops with 2 tiers" if fixed else
                 None)
    return check(hops <= number(threshold), hops, f"{tiers}-tier fabric: {hops} hops NIC to NIC",
                 "use a two-tier fabric (a higher-radix switch if the radix forbids it)",
                 predicted, float(fixed["diameter_hops"]["scale_out"]) if fixed else None)


@rule("scale_out_links_per_supernode", "Scale-out links per supernode >= 4 x 400G",
      "seed 001 §2.2", "GB/s", ">=", "fabric", """
      A supernode of tens of TB/s inside needs at least four to six 400G links out, or
      it becomes a big pipe feeding a small one: data-parallel synchronisation and
      pipeline traffic between supernodes then wait on the links out. The floor is the
      seed's lower figure, 4 x 400 Gb/s per supernode, per direction.""")
def scale_out_links(facts: Facts, threshold: Threshold) -> Outcome:
    """Scale-out bandwidth per supernode, per direction."""
    if not facts.topology["fabric_endpoints"]:
        return Outcome("not_applicable", None, "one supernode: no scale-out fabric")
    per_sn = facts.topology["scale_out_bandwidth_per_supernode_bytes_per_s"]
    links = facts.topology["scale_out_links_per_supernode"]
    nic = facts.cluster.host.nic_bandwidth_bytes_per_s
    need = math.ceil(number(threshold) * GBYTE_PER_S / nic) if nic else None
    return check(per_sn >= number(threshold) * GBYTE_PER_S - 1e-6, per_sn / GBYTE_PER_S,
                 f"{links:,} links of {nic / GBIT_PER_S:,.0f} Gb/s = "
                 f"{per_sn / GBYTE_PER_S:,.0f} GB/s per supernode",
                 f"give each supernode at least {need} NIC ports of "
                 f"{nic / GBIT_PER_S:,.0f} Gb/s" if need else "add scale-out NICs",
                 f"{need * nic / GBYTE_PER_S:,.0f} GB/s per supernode" if need else None,
                 need * nic / GBYTE_PER_S if need else None)


@rule("growth_headroom", "Fabric growth headroom >= 20 % (20-30 %)", "seed 003 §5.1",
      "share", ">=", "fabric", """
      Requirements grow: keep 20-30 % headroom and build in phases. A fabric sized to the
      last port must be rebuilt (another tier, other switches) to add one supernode;
      free endpoints on the fabric let the next phase plug in.""")
def growth_headroom(facts: Facts, threshold: Threshold) -> Outcome:
    """Free fabric endpoints over endpoints in use."""
    t = facts.topology
    if not t["fabric_endpoints"] or not t["fabric_max_endpoints"]:
        return Outcome("not_applicable", None, "one supernode: no scale-out fabric")
    share = (t["fabric_max_endpoints"] - t["fabric_endpoints"]) / t["fabric_endpoints"]
    return check(share >= number(threshold), share,
                 f"{num(t['fabric_endpoints'])} of {num(t['fabric_max_endpoints'])} fabric "
                 f"endpoints used: {pct(share)} room to grow",
                 "size the spine (or a higher-radix switch) for the next phase's supernodes",
                 f">= {pct(number(threshold))} free endpoints", number(threshold))
