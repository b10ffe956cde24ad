"""The search space: which layouts and knobs the planner tries, and which are legal.

Layouts (``tp, pp, dp, cp, ep, etp`` and the rank order) are enumerated with the
structural rules of :func:`supernode.spec.plan.plan_legal_mask` applied up front
(divisibility of heads, KV heads, MLP widths, experts, ``ep * etp`` of the stage's
``tp * cp * dp`` ranks, the sequence for CP, the GPU count and the global batch), so that
no illegal layout is ever expanded. Each layout then gets a grid of knobs (micro-batch,
recompute, sequence parallelism, interleaving, ZeRO stage / distributed optimizer,
pipeline layout, expert all-to-all overlap, overlap switches) whose axes depend only on
``pp``, ``dp``, whether ``tp > 1`` and whether the layout has expert parallelism; layouts
with the same axes are evaluated together as one array. ZeRO-2/3 (FSDP) combine with
pipelining (their per-micro-batch traffic is costed layer by layer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.estimate.model import MAX_VPP, MICRO_BATCH_CHOICES
from supernode.planner.mapping import Layout, effective_orders, group_factors
from supernode.spec.plan import PP_LAYOUT_CODES
from supernode.spec.plan_arrays import CP_COMM_CODES
from supernode.spec.recompute import modules_mask, recompute_choices, recompute_label
from supernode.spec.workload import WorkloadSpec

#: (zero_stage, distributed_optimizer) options. ZeRO-1 is Megatron's distributed
#: optimizer in the model (same memory and traffic), so it is tried once.
ZERO_OPTIONS = ((0, False), (1, True), (2, False), (3, False))


@dataclass(frozen=True)
class SearchSpace:
    """Knob choices and limits of a search (defaults: what a tuned Megatron run tries).

    ``tp``/``pp``/``cp``/``ep``/``etp`` restrict a dimension to the listed sizes (None:
    all legal; expert TP tries 1 and the layout's TP, Megatron's default). ``max_cp``:
    largest context-parallel size, and each CP rank keeps at least ``min_cp_tokens``
    tokens of the sequence. ``search_orders``: try every rank order (else Megatron's
    ``tp-cp-dp-pp`` only). ``overlap``: values tried for the TP/DP/PP overlap switches
    (on by default: overlap never slows a step in the model, so off is only worth
    scoring when asked). ``a2a_overlap``: values tried for the expert all-to-all overlap.
    ``recompute``: the recomputation labels tried (None: :func:`supernode.spec.recompute.
    recompute_choices` for the workload).
    """

    micro_batches: tuple[int, ...] = MICRO_BATCH_CHOICES
    recompute: tuple[str, ...] | None = None
    max_vpp: int = MAX_VPP
    zero: tuple[tuple[int, bool], ...] = ZERO_OPTIONS
    sequence_parallel: tuple[bool, ...] = (True, False)
    overlap: tuple[bool, ...] = (True,)
    a2a_overlap: tuple[bool, ...] = (False, True)
    pp_layouts: tuple[str, ...] = tuple(PP_LAYOUT_CODES)
    search_orders: bool = True
    max_cp: int = 16
    min_cp_tokens: int = 512
    tp: tuple[int, ...] | None = None
    pp: tuple[int, ...] | None = None
    cp: tuple[int, ...] | None = None
    ep: tuple[int, ...] | None = None
    etp: tuple[int, ...] | None = None
    dp: tuple[int, ...] | None = None
    vpp: tuple[int, ...] | None = None
    orders: tuple[tuple[str, ...], ...] | None = None
    grad_fp32: bool = False
    recompute_layers: int = 0
    cp_comm: int = 0  # fixed, not searched: Megatron-Core's default ring (p2p) unless given


@dataclass(frozen=True)
class KnobAxes:
    """Values along each knob axis of one evaluation grid."""

    micro_batch: tuple[int, ...]
    recompute: tuple[str, ...]
    sequence_parallel: tuple[bool, ...]
    vpp: tuple[int, ...]
    zero: tuple[tuple[int, bool], ...]
    overlap: tuple[bool, ...]
    pp_layout: tuple[str, ...] = ("uniform",)
    a2a: tuple[bool, ...] = (False,)
    grad_fp32: bool = False
    recompute_layers: int = 0
    cp_comm: int = 0

    @property
    def memory_size(self) -> int:
        """Grid points per layout of the axes memory depends on."""
        return (len(self.micro_batch) * len(self.recompute) * len(self.sequence_parallel)
                * len(self.vpp) * len(self.zero) * len(self.pp_layout))

    @property
    def time_only_size(self) -> int:
        """Points of the axes only the step time depends on (overlaps)."""
        return len(self.a2a) * len(self.overlap) ** 3

    @property
    def size(self) -> int:
        """Grid points per layout (all axes, overlap switches included)."""
        return self.memory_size * self.time_only_size


def divisors(n: int) -> list[int]:
    """All positive divisors of ``n``, ascending."""
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def tp_choices(w: WorkloadSpec, gpus: int, space: SearchSpace, max_tp: int) -> list[int]:
    """TP sizes that divide the GPUs, heads, KV heads and the dense MLP width, to ``max_tp``."""
    out = [t for t in divisors(gpus) if t <= max_tp and w.n_heads % t == 0
           and w.n_kv_heads % t == 0 and w.ffn_hidden % t == 0]
    return [t for t in out if space.tp is None or t in space.tp]


def etp_choices(w: WorkloadSpec, tp: int, space: SearchSpace) -> list[int]:
    """Expert TP sizes: 1 and ``tp`` (Megatron's default) dividing the expert width."""
    if w.moe is None:
        return [tp]
    options = sorted(set(space.etp or (1, tp)))
    return [e for e in options if w.expert_ffn_hidden % e == 0]


def cp_ok(w: WorkloadSpec, cp: int, space: SearchSpace) -> bool:
    """True when ``cp`` splits the sequence evenly (2 chunks per rank) within the limits."""
    if space.cp is not None:
        return cp in space.cp and (cp == 1 or w.seq_len % (2 * cp) == 0)
    return cp == 1 or (w.seq_len % (2 * cp) == 0 and cp <= space.max_cp
                       and w.seq_len // cp >= space.min_cp_tokens)


def ep_choices(w: WorkloadSpec, stage_ranks: int, etp: int, space: SearchSpace) -> list[int]:
    """EP sizes: divisors of the experts with ``ep * etp`` dividing the stage's ranks."""
    if w.moe is None:
        return [1]
    out = [e for e in divisors(w.moe.experts) if stage_ranks % (e * etp) == 0]
    return [e for e in out if space.ep is None or e in space.ep]


def enumerate_layouts(w: WorkloadSpec, gpus: int, global_batch: int, space: SearchSpace,
                      max_tp: int) -> list[Layout]:
    """Every structurally legal layout of ``gpus`` GPUs (each rank order once)."""
    out: list[Layout] = []
    for tp in tp_choices(w, gpus, space, max_tp):
        for cp in divisors(gpus // tp):
            if not cp_ok(w, cp, space):
                continue
            for pp in divisors(gpus // (tp * cp)):
                if pp > w.layers or (space.pp is not None and pp not in space.pp):
                    continue
                dp = gpus // (tp * cp * pp)
                if global_batch % dp or (space.dp is not None and dp not in space.dp):
                    continue
                out += _expert_layouts(w, tp, cp, pp, dp, space)
    return out


def _expert_layouts(w: WorkloadSpec, tp: int, cp: int, pp: int, dp: int,
                    space: SearchSpace) -> list[Layout]:
    """The layouts of one (tp, cp, pp, dp): every expert split and rank order."""
    out = []
    for etp in etp_choices(w, tp, space):
        for ep in ep_choices(w, tp * cp * dp, etp, space):
            orders = effective_orders(tp, cp, dp, pp, space.search_orders)
            if space.orders is not None:
                orders = [o for o in orders if o in space.orders] or [space.orders[0]]
            for order in orders:
                layout = Layout(tp, pp, dp, cp, ep, order, None if etp == tp else etp)
                if group_factors(layout) is not None:
                    out.append(layout)
    return out


def knob_axes(w: WorkloadSpec, layout: Layout, global_batch: int,
              space: SearchSpace) -> KnobAxes:
    """The knob grid of one layout (the same for layouts sharing ``pp``, ``dp``, tp > 1
    and whether they have expert parallelism)."""
    per_dp = global_batch // layout.dp
    mbs = tuple(b for b in space.micro_batches if per_dp % b == 0) or (1,)
    if layout.pp == 1:
        vpps: tuple[int, ...] = (1,)
    else:
        # the embedding and the loss may fill a slot each (the legality mask says where)
        vpps = tuple(v for v in range(1, space.max_vpp + 1) if layout.pp * v <= w.layers + 2
                     and (space.vpp is None or v in space.vpp)) or (1,)
    sps = space.sequence_parallel if layout.tp > 1 else (False,)
    if w.moe is not None and layout.tp > 1:
        sps = (True,)  # Megatron-Core requires sequence parallelism for MoE with TP
    layouts = space.pp_layouts if layout.pp > 1 else ("uniform",)
    a2a = space.a2a_overlap if (w.moe is not None and layout.ep > 1) else (False,)
    recompute = space.recompute or recompute_choices(w.moe is not None, w.mla is not None)
    return KnobAxes(mbs, recompute, tuple(sps), vpps, space.zero, space.overlap,
                    tuple(layouts), tuple(a2a), space.grad_fp32, space.recompute_layers,
                    space.cp_comm)


def space_from_plan_fields(fields: dict[str, Any], base: SearchSpace | None = None
                           ) -> SearchSpace:
    """A search space restricted to the plan fields given (the one plan vocabulary of
    ``plan``, ``estimate`` and ``simulate``: a value given fixes the knob)."""
    from dataclasses import replace

    from supernode.spec.plan import parse_rank_order

    space = base or SearchSpace()
    changes: dict[str, Any] = {}
    for name in ("tp", "pp", "cp", "ep", "etp", "dp", "vpp"):
        if fields.get(name) is not None:
            changes[name] = (int(fields[name]),)
    if fields.get("micro_batch") is not None:
        changes["micro_batches"] = (int(fields["micro_batch"]),)
    if fields.get("recompute_modules"):
        changes["recompute"] = (recompute_label(modules_mask(list(fields["recompute_modules"]))),)
    elif fields.get("recompute") is not None:
        changes["recompute"] = (str(fields["recompute"]),)
    if fields.get("recompute_num_layers") is not None:
        changes["recompute_layers"] = int(fields["recompute_num_layers"])
    if fields.get("sequence_parallel") is not None:
        changes["sequence_parallel"] = (bool(fields["sequence_parallel"]),)
    zero = _zero_options(fields.get("zero_stage"), fields.get("distributed_optimizer"))
    if zero is not None:
        changes["zero"] = zero
    if fields.get("moe_a2a_overlap") is not None:
        changes["a2a_overlap"] = (bool(fields["moe_a2a_overlap"]),)
    if fields.get("pp_layout") is not None:
        changes["pp_layouts"] = (str(fields["pp_layout"]),)
    if fields.get("rank_order") is not None:
        changes["orders"] = (parse_rank_order(str(fields["rank_order"])),)
    overlaps = {fields.get(k) for k in ("overlap_tp_comm", "overlap_dp_comm",
                                        "overlap_pp_comm")} - {None}
    if len(overlaps) == 1:
        changes["overlap"] = (bool(overlaps.pop()),)
    if fields.get("grad_reduce_in_fp32") is not None:
        changes["grad_fp32"] = bool(fields["grad_reduce_in_fp32"])
    if fields.get("cp_comm_type") is not None:
        changes["cp_comm"] = CP_COMM_CODES[str(fields["cp_comm_type"])]
    return replace(space, **changes)


def _zero_options(stage: Any, distributed: Any) -> tuple[tuple[int, bool], ...] | None:
    """The (zero_stage, distributed_optimizer) options a plan's fields allow."""
    if stage is None and distributed is None:
        return None
    if stage is None:
        return ((1, True),) if distributed else ((0, False),)
    stage = int(stage)
    # the distributed optimizer is stage 1; with a stated stage 2 or 3 it means that stage
    return ((stage, True),) if stage == 1 and distributed is not False else ((stage, False),)
