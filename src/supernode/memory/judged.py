"""The memory figures a design review judges, computed from the memory model once.

:func:`judged_figures` is what ``results.json`` -> ``memory`` holds besides its source
(:func:`supernode.design.memory.memory_results`) and what ``supernode memory map --json``
prints under ``review``, so the command gives the review's figures exactly:

* per kind: capacity, local bandwidth and latency, the interconnect (injection or
  attach) bandwidth the kind's memory must feed (seed 003 §2.1);
* every access tier with its round trip and its one-way latency (round trip less the
  directory lookup and the owner's memory latency, halved: the message latency the seed's
  "nanosecond-level" speaks of, §1.2);
* the accelerators' farthest remote tier against their local memory (bandwidth ratio);
* the link load of a unit that streams its working set through the map at its local
  memory bandwidth: the remote share of its accesses (0 under ``by_unit``, whose data
  sits in the unit's own range; ``(n - 1) / n`` under ``interleaved``) times its local
  bandwidth over the remote tier's bandwidth (seed 003 §2.3 against the 80 % hot-link
  line of §3.2).

Units: SI (bytes, bytes/s, seconds).
"""

from __future__ import annotations

from typing import Any

from supernode.memory.defaults import fabric_defaults
from supernode.memory.fabric import AccessPath
from supernode.memory.model import MemoryModel
from supernode.units import NS


def one_way_s(path: AccessPath, target_latency_s: float, directory_s: float) -> float:
    """One-way message latency of a tier (s): the round trip less the directory lookup
    and the owner's memory latency, halved (:func:`supernode.memory.fabric.remote_latency_s`);
    0 for local memory."""
    if path.tier == "local":
        return 0.0
    return max(0.0, (path.latency_s - directory_s - target_latency_s) / 2)


def access_paths(model: MemoryModel) -> list[dict[str, Any]]:
    """Every access tier of ``model``: round trip and one-way latency (s), hops and
    sustained bandwidth per direction (bytes/s)."""
    directory_s = float(fabric_defaults()["directory_latency_ns"]) * NS
    local = {k.name: k.local_latency_s for k in model.kinds}
    return [{"requester": p.requester, "target": p.target, "tier": p.tier, "hops": p.hops,
             "latency_s": p.latency_s,
             "one_way_s": one_way_s(p, local[p.target], directory_s),
             "bandwidth_bytes_per_s": p.bandwidth_bytes_per_s} for p in model.paths]


def farthest_remote(model: MemoryModel, paths: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The accelerators' farthest scale-up tier against their own memory, and the link
    load of a unit streaming through the map (shares; s, bytes/s). None: a domain of one
    accelerator has no remote tier, or the fabric has no bandwidth to compare."""
    acc = model.kinds[0]
    tiers = [p for p in paths if p["requester"] == acc.name and p["target"] == acc.name
             and p["tier"] != "local"]
    if not tiers:
        return None
    far = max(tiers, key=lambda p: p["latency_s"])
    if far["bandwidth_bytes_per_s"] <= 0 or acc.bandwidth_bytes_per_s <= 0:
        return None                       # no bandwidth to compare (a degenerate fabric)
    n = acc.count
    share = (n - 1) / n if model.spec.mapping == "interleaved" else 0.0
    remote_bw = far["bandwidth_bytes_per_s"]
    return {"tier": far["tier"], "hops": far["hops"], "one_way_s": far["one_way_s"],
            "round_trip_s": far["latency_s"], "bandwidth_bytes_per_s": remote_bw,
            "local_bandwidth_bytes_per_s": acc.bandwidth_bytes_per_s,
            "bandwidth_ratio": remote_bw / acc.bandwidth_bytes_per_s,
            "remote_share": share,
            "stream_link_load": share * acc.bandwidth_bytes_per_s / remote_bw}


def judged_figures(model: MemoryModel) -> dict[str, Any]:
    """The global space, its unit kinds, its access tiers and the farthest remote tier
    of ``model`` as the review reports and its memory rules judge them (SI units)."""
    paths = access_paths(model)
    return {
        "mapping": model.spec.mapping,
        "interleave_bytes": model.spec.interleave_bytes, "line_bytes": model.spec.line_bytes,
        "protocol": model.spec.protocol, "policy": model.spec.policy,
        "global_bytes": model.global_bytes,
        "kinds": [{"role": k.role, "name": k.name, "count": k.count,
                   "capacity_bytes": k.capacity_bytes,
                   "bandwidth_bytes_per_s": k.bandwidth_bytes_per_s,
                   "local_latency_s": k.local_latency_s,
                   "interconnect_bandwidth_bytes_per_s": k.attach_bandwidth_bytes_per_s,
                   "global_space": k.global_space} for k in model.kinds],
        "paths": paths,
        "remote": farthest_remote(model, paths),
        "assumed": [a for k in model.kinds for a in k.assumed],
    }
