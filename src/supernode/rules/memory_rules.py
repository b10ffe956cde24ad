"""Rules on the global address space (seed 003 §1.2, §2.1, §2.3, §3.2).

They read ``Facts.memory`` (:func:`supernode.design.memory.memory_results`): null when the
design says nothing about its memory space (no ``memory:`` block and no bundled data for
its host CPU), and then each rule is ``not_applicable``. Every failure is graded as a
warning and states its measured margin against the threshold.
"""

from __future__ import annotations

from typing import Any

from supernode.rules._fmt import num, pct
from supernode.rules.facts import Facts
from supernode.rules.registry import Outcome, Threshold, check, number, rule
from supernode.units import GBYTE_PER_S, NS

NO_SECTION = ("no memory section: the cluster has no memory: block and the bundled data "
              "names none of its host's parts")


def _remote_tier(facts: Facts, alone: str) -> Outcome | tuple[dict[str, Any], dict[str, Any]]:
    """(memory section, its farthest remote tier), or the not-applicable outcome: no
    memory section, or (``alone``) no remote tier."""
    mem = facts.memory
    if mem is None:
        return Outcome("not_applicable", None, NO_SECTION)
    if mem["remote"] is None:
        return Outcome("not_applicable", None, alone)
    return mem, mem["remote"]


def _margin(measured: float, limit: float, below: bool) -> str:
    """The measured margin to the limit as a share of the limit (positive: inside)."""
    share = (limit - measured) / limit if below else (measured - limit) / limit
    return f"margin {100 * share:+.1f}% of the limit"


@rule("remote_memory_latency",
      "Remote memory access stays nanosecond-level: one-way latency < 1 µs on every tier",
      "seed 003 §1.1, §1.2", "ns", "<=", "memory", """
      A supernode exists because its bus joins the units' memories at nanosecond latency,
      where a cluster's network stack puts microseconds between machines (seed 003 §1.1:
      across machines "the latency jumps from the nanosecond level to the microsecond
      level"; §1.2: the bus brings unit-to-unit latency "down to the nanosecond level").
      Measured: the one-way message latency of the accelerators' farthest scale-up tier
      (the round trip of a remote load less the directory lookup and the owner's memory,
      halved; docs/memory.md). At or above a microsecond the global address space
      behaves like a network, and data used there should be placed nearer.""")
def remote_memory_latency(facts: Facts, threshold: Threshold) -> Outcome:
    """One-way latency (ns) of the accelerators' farthest remote tier."""
    found = _remote_tier(facts, "one accelerator per supernode: no remote memory tier")
    if isinstance(found, Outcome):
        return found
    mem, remote = found
    limit = number(threshold)
    one_way = remote["one_way_s"] / NS
    detail = (f"{remote['tier']} ({remote['hops']} hops): {num(one_way, 0)} ns one-way, "
              f"{num(remote['round_trip_s'] / NS, 0)} ns round trip of a load; "
              f"{_margin(one_way, limit, below=True)}")
    nearest = min((p for p in mem["paths"] if p["requester"] == p["target"]
                   and p["tier"] != "local"), key=lambda p: p["one_way_s"])
    fix = (f"keep the data the accelerators share at nanosecond latency within the "
           f"{nearest['tier']} tier ({num(nearest['one_way_s'] / NS, 0)} ns one-way): place "
           "it with `supernode memory place`, or build the domain with fewer switch tiers")
    return check(one_way < limit, one_way, detail, fix, severity="warning")


def _feed(kind: dict[str, Any]) -> float:
    return kind["bandwidth_bytes_per_s"] / kind["interconnect_bandwidth_bytes_per_s"]


@rule("memory_feeds_interconnect",
      "Every unit's memory bandwidth >= the interconnect bandwidth it serves",
      "seed 003 §2.1", "ratio", ">=", "memory", """
      A unit's compute, memory bandwidth and interconnect bandwidth must match, with no
      short board: "if the interconnect bandwidth is high but the unit's memory bandwidth
      is low, the data cannot be fed in, and a faster interconnect is no use" (seed 003
      §2.1, the highway with a narrow on-ramp). Measured: for every kind of unit in the
      global space, its local memory bandwidth over the bandwidth its interconnect
      delivers to it per direction (an accelerator's scale-up injection, a CPU's attach
      link such as NVLink-C2C); the smallest ratio is judged.""")
def memory_feeds_interconnect(facts: Facts, threshold: Threshold) -> Outcome:
    """The smallest memory-to-interconnect bandwidth ratio over the unit kinds."""
    mem = facts.memory
    if mem is None:
        return Outcome("not_applicable", None, NO_SECTION)
    kinds = [k for k in mem["kinds"] if k["global_space"]
             and k["interconnect_bandwidth_bytes_per_s"] > 0]
    if not kinds:
        return Outcome("not_applicable", None, "no unit joins the global space")
    worst = min(kinds, key=_feed)
    ratio, limit = _feed(worst), number(threshold)
    detail = (f"{worst['name']} ({worst['role']}): memory "
              f"{num(worst['bandwidth_bytes_per_s'] / GBYTE_PER_S, 0)} GB/s over interconnect "
              f"{num(worst['interconnect_bandwidth_bytes_per_s'] / GBYTE_PER_S, 0)} GB/s per "
              f"direction = {ratio:.2f}; {_margin(ratio, limit, below=False)}")
    fix = (f"give the {worst['role']} memory of at least "
           f"{num(limit * worst['interconnect_bandwidth_bytes_per_s'] / GBYTE_PER_S, 0)} GB/s "
           "(more channels or a faster part), or count on the interconnect delivering only "
           f"{num(worst['bandwidth_bytes_per_s'] / GBYTE_PER_S, 0)} GB/s to it")
    return check(ratio >= limit, ratio, detail, fix, severity="warning")


@rule("remote_stream_link_load",
      "Data used together stays in one unit: a unit streaming its data loads its link "
      "<= 80 %", "seed 003 §2.3, §3.2", "share", "<=", "memory", """
      Unified addressing is convenient but not to be abused: frequent accesses across
      units take a great deal of interconnect bandwidth and slow the whole system; keep
      the data used together in one unit's memory (seed 003 §2.3). Measured: the load on
      an accelerator's scale-up link when it streams its own working set through the
      global map at its local memory bandwidth - the map's remote share of its accesses
      (0 under by_unit mapping, (n - 1)/n under interleaving over n units) times its
      local bandwidth over the remote tier's - against the 80 % line at which the seed
      calls a link a bottleneck (§3.2).""")
def remote_stream_link_load(facts: Facts, threshold: Threshold) -> Outcome:
    """Scale-up link utilisation of a unit streaming its data through the global map."""
    found = _remote_tier(facts, "one accelerator per supernode: all of its data is local")
    if isinstance(found, Outcome):
        return found
    mem, remote = found
    load, limit = remote["stream_link_load"], number(threshold)
    detail = (f"{mem['mapping']} mapping: {pct(remote['remote_share'])} of a unit's accesses "
              f"remote; streaming at {num(remote['local_bandwidth_bytes_per_s'] / GBYTE_PER_S, 0)}"
              f" GB/s local against {num(remote['bandwidth_bytes_per_s'] / GBYTE_PER_S, 0)} "
              f"GB/s remote ({remote['tier']}) loads the link {pct(load)}; "
              f"{_margin(load, limit, below=True)}")
    fix = ("map each unit's data into its own memory (memory.mapping: by_unit) and home "
           "shared pages with the units that use them (`supernode memory place`)")
    return check(load <= limit, load, detail, fix, "link load 0.0% (by_unit: no remote "
                 "share)", 0.0, severity="warning")
