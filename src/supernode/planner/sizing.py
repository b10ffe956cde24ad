"""Requirements -> architecture (seed 003 §3.1, §5.1; seed 001 §2.2; seed 000 §2.3).

From a model, a token budget and a deadline: cards = total FLOPs / (peak x days x
86,400 x utilisation); the memory the model states need (weights, gradients, optimizer:
4-6x the weights by the seed's rule, exact bytes by the toolkit's model); the bandwidth
one gradient synchronisation needs; the supernode size as a multiple of the chosen TP;
supernodes needed; scale-out links per supernode so the two tiers match; 20-30% growth
headroom and a phased build. The result is cross-checked by planning the sized cluster.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import unit_gpus
from supernode.errors import InputError
from supernode.planner.build import build_target
from supernode.planner.report import PlanReport, plan_job
from supernode.planner.seed_sizing import (
    COMM_BUDGET_SHARE,
    DEFAULT_HEADROOM,
    DEFAULT_UTILIZATION,
    PEAK_FACTOR_RANGE,
    SECONDS_PER_DAY,
    SEED_MIN_LINKS,
    UNIT_SHARE_FOR_PHASES,
    UTILIZATION_RANGE,
    cards_needed,
    memory_need,
)
from supernode.spec.cluster import ClusterSpec
from supernode.spec.resolved import MAX_ACCELERATORS
from supernode.spec.workload import WorkloadSpec
from supernode.workload.flops import EXECUTED, model_flops_per_token
from supernode.workload.memory import state_bytes
from supernode.workload.params import total_params


@dataclass(frozen=True)
class SizingInput:
    """The requirement: model, tokens, deadline, accelerator, utilisation (None: plan)."""

    workload: WorkloadSpec
    tokens: float
    days: float
    template: ClusterSpec
    utilization: float | None = DEFAULT_UTILIZATION
    headroom: float = DEFAULT_HEADROOM
    global_batch: int | None = None


def template_for(accelerator: str | None) -> ClusterSpec:
    """A cluster preset built from ``accelerator`` (catalog name; None: H100 SuperPOD).

    Presets with a scale-out fabric are preferred; an accelerator no preset uses is put
    into the DGX H100 SuperPOD unit in place of the H100.
    """
    from supernode.catalog import cluster_presets, find_accelerator

    if accelerator is None:
        return load_cluster_spec("dgx-h100-superpod-su")
    chip = find_accelerator(accelerator, path="accelerator")
    matches = []
    for name in sorted(cluster_presets()):
        spec = load_cluster_spec(name)
        if isinstance(spec.host.accelerator, str) and spec.host.accelerator == chip.name:
            matches.append((spec.scale_out is None, name, spec))
    if matches:
        return min(matches, key=lambda m: (m[0], m[1]))[2]
    base = load_cluster_spec("dgx-h100-superpod-su")
    host = base.host.model_copy(update={"accelerator": chip.name})
    return base.model_copy(update={"name": f"{chip.name}-superpod-su", "host": host})


def _check(req: SizingInput) -> None:
    if not (math.isfinite(req.tokens) and req.tokens > 0):
        raise InputError("tokens", f"must be a finite number > 0, got {req.tokens}")
    if not (math.isfinite(req.days) and req.days > 0):
        raise InputError("days", f"must be a finite number > 0, got {req.days}")
    if req.utilization is not None and not 0 < req.utilization <= 1:
        raise InputError("utilization", f"must be in (0, 1], got {req.utilization}")
    if not 0 <= req.headroom < 1:
        raise InputError("headroom", f"must be in [0, 1), got {req.headroom}")


def _check_cards(req: SizingInput, cards: float, utilization: float) -> None:
    """Refuse a requirement that needs more accelerators than the toolkit models."""
    if not cards <= MAX_ACCELERATORS:  # also catches inf and NaN
        count = f"{cards:.3g}" if math.isfinite(cards) else "too many to count"
        raise InputError("tokens", f"{req.tokens:.3g} tokens in {req.days:.3g} days need "
                                   f"{count} cards at {utilization:.0%} utilisation, more "
                                   f"than the {MAX_ACCELERATORS:,} the toolkit models; lower "
                                   f"--tokens or raise --days")


#: Rounds of "plan the sized cluster, re-size at its MFU" for ``--utilization plan``.
MAX_UTILIZATION_ROUNDS = 6


def size(req: SizingInput) -> dict[str, Any]:
    """Size a cluster for the requirement and cross-check it with the planner.

    With ``utilization`` None (``--utilization plan``) the cards are sized at the best
    plan's MFU on the sized cluster (:func:`_plan_utilization`): the utilisation printed
    is the one the cards were sized at, the cross-check plans that very cluster, and
    phase 1 is the smallest build tried whose plan meets the deadline. FLOPs are executed
    FLOPs, as the planner's MFU counts them.
    """
    _check(req)
    w, spec = req.workload, req.template
    probe, _ = build_target(spec, w, None, 1)
    peak = probe.system.peak_flops
    total = float(model_flops_per_token(w, causal_attention_factor=EXECUTED)) * req.tokens
    if req.utilization is not None:
        u = req.utilization
        cards = cards_needed(total, peak, req.days, u)
        _check_cards(req, cards, u)
        layout = _layout(spec, cards, req.headroom)
        report = _cross_check(spec, w, layout["phase1_gpus"], req.global_batch)
    else:
        u, cards, layout, report = _plan_utilization(req, total, peak)
    out = {
        "workload": w.name, "template": spec.name, "tokens": req.tokens, "days": req.days,
        "total_flops": total, "peak_flops_per_card": peak, "utilization": u,
        "utilization_source": "given" if req.utilization is not None else "best plan MFU",
        "cards": cards, "cards_range": [cards_needed(total, peak, req.days, x)
                                        for x in UTILIZATION_RANGE[::-1]],
        "memory": memory_need(w, probe.precision), **layout,
    }
    # usable memory (capacity less the runtime reserve), as the planner's memory check
    out["memory"]["min_cards_for_states"] = math.ceil(
        out["memory"]["model_states_bytes"] / probe.system.usable_memory_bytes)
    out.update(_bandwidth(report, w, total, layout, spec))
    out["cross_check"] = _cross_check_summary(report, req)
    return out


def _plan_utilization(req: SizingInput, total: float, peak: float
                      ) -> tuple[float, float, dict[str, Any], PlanReport]:
    """(utilisation, cards, layout, report) sized at the best plan's own MFU.

    From the seed's 50 %, size, plan the phase-1 build, re-size at its MFU, until a build
    repeats (the MFU depends on the build's size, e.g. through the default batch, so the
    sequence can cycle between two builds). Of the builds planned, the smallest whose plan
    meets the deadline is kept (else the largest); its MFU sizes the cards.
    """
    w, spec = req.workload, req.template
    visited: dict[int, PlanReport] = {}
    u = DEFAULT_UTILIZATION
    for _ in range(MAX_UTILIZATION_ROUNDS):
        cards = cards_needed(total, peak, req.days, u)
        _check_cards(req, cards, u)
        gpus = _layout(req.template, cards, req.headroom)["phase1_gpus"]
        if gpus in visited:
            break
        visited[gpus] = report = _cross_check(spec, w, gpus, req.global_batch)
        if not report.feasible:
            break
        u = report.plans[0].mfu
    meeting = [g for g, r in visited.items() if r.feasible
               and cards_needed(total, peak, req.days, r.plans[0].mfu) <= g]
    gpus = min(meeting) if meeting else max(visited)
    report = visited[gpus]
    if report.feasible:
        u = report.plans[0].mfu
    cards = cards_needed(total, peak, req.days, u)
    _check_cards(req, cards, u)
    return u, cards, _layout(spec, cards, req.headroom, gpus), report


def _layout(spec: ClusterSpec, cards: float, headroom: float, at_least: int = 0
            ) -> dict[str, Any]:
    """Supernodes for ``cards`` and the phased build (seed 003 §5.1).

    Phases grow by whole scale-out units (the template: a DGX SuperPOD SU...) when a unit
    is at most a quarter of the need, else by whole supernodes (racks). ``at_least``:
    a phase-1 build already planned that the phases must not undercut.
    """
    domain = spec.scale_up.size
    unit = unit_gpus(spec)
    step = unit if unit <= UNIT_SHARE_FOR_PHASES * cards else domain
    gpus1 = max(max(1, math.ceil(cards / step)) * step, at_least)
    gpus2 = max(gpus1, math.ceil(cards * (1.0 + headroom) / step) * step)
    return {"supernode_size": domain, "supernodes_needed": math.ceil(cards / domain),
            "unit_gpus": unit, "phase_step_gpus": step, "headroom": headroom,
            "phase1_gpus": gpus1, "phase1_supernodes": math.ceil(gpus1 / domain),
            "phase1_units": gpus1 / unit, "phase2_gpus": gpus2,
            "phase2_supernodes": math.ceil(gpus2 / domain), "phase2_units": gpus2 / unit}


def _cross_check(spec: ClusterSpec, w: WorkloadSpec, gpus: int, batch: int | None
                 ) -> PlanReport:
    target, _ = build_target(spec, w, gpus, batch)
    return plan_job(target, top=3)


def _bandwidth(report: PlanReport, w: WorkloadSpec, total: float, layout: dict[str, Any],
               spec: ClusterSpec) -> dict[str, Any]:
    """Sync bandwidth (seed 003 §3.1), supernode size vs TP, links out per supernode.

    Links needed by traffic: the template's links out of one supernode, scaled so that
    the best plan's scale-out collectives leave at most 20% of the step exposed (their
    issued time is bandwidth-bound, so it falls in proportion to the links; the part
    already hidden under compute is taken to stay hidden).
    """
    t = report.outcome.target
    # gradients are reduced at their own width (fp32 main grads for bf16/fp8), the same
    # bytes per parameter the traffic model's data-parallel calls use
    grad_bytes = float(total_params(w)) * state_bytes(t.precision)[1]
    out: dict[str, Any] = {"gradient_bytes_per_sync": grad_bytes}
    if not report.feasible:
        return out
    best = report.plans[0]
    step = best.step_time_s
    need = grad_bytes / step
    out.update({"sync_interval_s": step, "sync_bandwidth_bytes_per_s": need,
                "sync_peak_bandwidth_bytes_per_s": [need * f for f in PEAK_FACTOR_RANGE],
                "tp": best.layout.tp,
                "supernode_multiple_of_tp": layout["supernode_size"] % best.layout.tp == 0})
    domain = layout["supernode_size"]
    up = t.system.fabric.tiers[0]
    inside = domain * up.bandwidth_bytes_per_s if up.name == "scale_up" else 0.0
    nic = spec.host.nics
    link = (nic.speed_gbit_per_s * 1e9 / 8) if nic else 0.0
    configured = (nic.count * domain // spec.host.accelerators_per_host) if nic else 0
    issued_s, exposed_s = _outside_comm_s(best)
    # issued scale-out time is bandwidth-bound (falls in proportion to the links); the part
    # hidden under compute stays hidden: keep the exposed part within the 20% budget
    hidden = max(issued_s - exposed_s, 0.0)
    traffic_links = math.ceil(configured * issued_s / (COMM_BUDGET_SHARE * step + hidden)) \
        if configured else 0
    seed_links = SEED_MIN_LINKS[0] if inside >= 10e12 else 1
    out["scale_out_links_per_supernode"] = {
        "scale_up_aggregate_bytes_per_s": inside,
        "scale_out_issued_s": issued_s,
        "scale_out_exposed_s": exposed_s,
        "link_bytes_per_s": link,
        "needed_by_traffic": traffic_links,
        "seed_minimum": seed_links,
        "recommended": max(traffic_links, seed_links),
        "configured_in_template": configured,
        "scale_up_to_scale_out_ratio": inside / (configured * link) if configured and link
        else None,
    }
    return out


def _outside_comm_s(best: Any) -> tuple[float, float]:
    """(issued, exposed) seconds per step of the groups that leave the scale-up domain."""
    exposed_key = {"tp": "tp_comm", "cp": "cp_comm", "ep": "ep_comm", "pp": "pp_comm",
                   "dp": "dp_comm", "dp_expert": "dp_comm"}
    dp_issued = sum(p["issued_s"] for d, p in best.placement.items()
                    if d in ("dp", "dp_expert")) or 1.0
    issued = exposed = 0.0
    for dim, p in best.placement.items():
        if p["tier"] == "scale_up":
            continue
        issued += p["issued_s"]
        share = p["issued_s"] / dp_issued if dim in ("dp", "dp_expert") else 1.0
        exposed += best.breakdown_s[exposed_key[dim]] * share
    return issued, exposed


def _cross_check_summary(report: PlanReport, req: SizingInput) -> dict[str, Any]:
    t = report.outcome.target
    if not report.feasible:
        return {"gpus": t.gpus, "feasible": False, "advice": report.advice}
    best = report.plans[0]
    days = req.tokens / best.tokens_per_s / SECONDS_PER_DAY
    total = float(model_flops_per_token(req.workload, causal_attention_factor=EXECUTED)
                  ) * req.tokens
    return {"gpus": t.gpus, "feasible": True, "global_batch_sequences":
            t.global_batch_sequences, "best_plan": best.to_dict(), "mfu": best.mfu,
            "days_predicted": days, "meets_deadline": days <= req.days,
            "cards_at_plan_mfu": cards_needed(total, t.system.peak_flops, req.days, best.mfu),
            "notes": list(t.notes)}
