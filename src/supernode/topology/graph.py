"""Conventions every topology builder follows: node ids, attributes, tiers and media.

Node ids (tuples, readable in exports):

* ``("acc", i)``: accelerator ``i`` (global index, domain-major);
* ``("cpu", host, socket)`` and ``("nic", host, rail)``;
* ``(tier, domain, i)`` for a scale-up switch chip of ``domain``;
* ``(tier, i)`` for a scale-out switch (``leaf``, ``spine``, ``core``).

Node attributes: ``kind`` (one of :data:`NODE_KINDS`); ``domain`` (supernode index) and
``host`` where they apply; switches carry ``tier``, ``radix``,
``port_bandwidth_bytes_per_s`` and ``latency_s``.

Edge attributes: ``bandwidth_bytes_per_s`` (of one link, per direction), ``latency_s``
(propagation, one way), ``medium`` (``pcb``, ``copper`` or ``optical``), ``tier`` (the
layer the link belongs to, named after its upper end) and ``count`` (parallel links
bundled in the edge, e.g. the 5 NVLinks between an H100 and one NVSwitch chip). The
capacity of an edge per direction is ``count * bandwidth_bytes_per_s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx


NODE_KINDS = ("accelerator", "cpu", "nic", "switch")
#: Link tiers inside a scale-up domain: direct accelerator links, accelerator to first-tier
#: switch, first-tier to second-tier switch.
SCALE_UP_TIERS = ("scale_up", "scale_up_l1", "scale_up_l2")
#: Link and switch tiers of the scale-out fat tree, bottom up.
FABRIC_TIERS = ("leaf", "spine", "core")
#: Every link tier, in report order (``host``: PCIe links inside a host).
LINK_TIERS = ("host", *SCALE_UP_TIERS, *FABRIC_TIERS)
#: Every switch tier, in report order.
SWITCH_TIERS = ("scale_up_l1", "scale_up_l2", *FABRIC_TIERS)
#: Physical media a link can have; only copper and optical links are cables.
MEDIA = ("pcb", "copper", "optical")


@dataclass(frozen=True)
class LinkType:
    """One kind of link: bandwidth per direction (bytes/s), latency (s), medium.

    ``medium`` may be ``mixed``; :func:`cable_medium` then picks copper for links that
    end at an accelerator or NIC and optical for switch-to-switch links.
    """

    bandwidth_bytes_per_s: float
    latency_s: float = 0.0
    medium: str = "copper"


@dataclass(frozen=True)
class SwitchType:
    """One kind of switch chip or box: radix (ports), port bandwidth (bytes/s), latency (s)."""

    radix: int
    port_bandwidth_bytes_per_s: float
    latency_s: float = 0.0
    name: str = "switch"


@dataclass(frozen=True)
class Place:
    """Where a scale-up domain sits in a cluster: its index, its first accelerator's global
    index, and accelerators per host (``None`` for a stand-alone domain without hosts)."""

    domain: int = 0
    first: int = 0
    per_host: int | None = None

    def host(self, local: int) -> int | None:
        """Host index of the domain's ``local``-th accelerator (None without hosts)."""
        return None if self.per_host is None else (self.first + local) // self.per_host

    def same_host(self, a: int, b: int) -> bool:
        """True when local accelerators ``a`` and ``b`` sit in one host."""
        return self.per_host is not None and self.host(a) == self.host(b)

    def on_board(self, first_local: int, count: int) -> bool:
        """True when local accelerators ``first_local .. first_local+count-1`` share a host,
        so a switch serving only them sits on the host's board."""
        return self.per_host is not None and self.same_host(first_local, first_local + count - 1)


def new_graph(name: str = "") -> nx.Graph:
    """An empty undirected topology graph."""
    import networkx as nx  # only graph builds pay for networkx (closed forms do not)

    return nx.Graph(name=name)


def acc(index: int) -> tuple[str, int]:
    """Node id of accelerator ``index`` (global)."""
    return ("acc", index)


def add_accelerators(g: nx.Graph, place: Place, count: int) -> None:
    """Add the ``count`` accelerators of the domain at ``place`` to ``g``."""
    for local in range(count):
        g.add_node(acc(place.first + local), kind="accelerator", domain=place.domain,
                   host=place.host(local), local=local)


def add_switch(
    g: nx.Graph, node: Any, tier: str, switch: SwitchType | None, domain: int | None = None,
    **attrs: Any,
) -> None:
    """Add a switch node of ``tier`` with its radix (ports), port bandwidth and latency."""
    g.add_node(
        node, kind="switch", tier=tier, domain=domain,
        radix=switch.radix if switch else None,
        port_bandwidth_bytes_per_s=switch.port_bandwidth_bytes_per_s if switch else None,
        latency_s=switch.latency_s if switch else 0.0, **attrs,
    )


def add_link(
    g: nx.Graph, u: Any, v: Any, link: LinkType, tier: str, count: float = 1,
    medium: str | None = None, bandwidth_bytes_per_s: float | None = None,
) -> None:
    """Add ``count`` parallel links of ``link`` between ``u`` and ``v`` as one edge."""
    g.add_edge(
        u, v,
        bandwidth_bytes_per_s=bandwidth_bytes_per_s or link.bandwidth_bytes_per_s,
        latency_s=link.latency_s,
        medium=medium or cable_medium(link.medium, tier),
        tier=tier,
        count=count,
    )


def cable_medium(medium: str, tier: str) -> str:
    """Resolve ``mixed``: copper to accelerators and NICs, optical between switches."""
    if medium != "mixed":
        return medium
    return "optical" if tier in ("scale_up_l2", "spine", "core") else "copper"


def spread(links: int, targets: int, offset: int = 0) -> list[tuple[int, int]]:
    """Spread ``links`` over ``targets`` as evenly as possible: ``[(target, count), ...]``.

    Every target gets ``links // targets``; the ``links % targets`` extra links go to the
    targets ``offset, offset+1, ...`` (cyclically). Rotating ``offset`` between sources
    (``offset = i * extra``) balances the ports used on the targets.
    """
    if targets < 1 or links < 1:
        return []
    out = []
    for t in range(targets):
        count = spread_count(links, targets, offset, t)
        if count:
            out.append((t, count))
    return out


def spread_count(links: int, targets: int, offset: Any, target: Any) -> Any:
    """Links that :func:`spread` puts on ``target`` (ints, or numpy arrays broadcast
    together: one expression for the graph builders and the array builds)."""
    base, extra = divmod(links, targets)
    return base + ((target - offset) % targets < extra) * 1


def balanced_loads(sources: int, links: int, targets: int) -> list[int]:
    """Ports used on each target when ``sources`` each spread ``links`` with rotated offsets.

    Closed form of summing :func:`spread` with ``offset = i * (links % targets)``: the extra
    links fill target positions ``0 .. sources*extra - 1`` cyclically.
    """
    base, extra = divmod(links, targets)
    full, rest = divmod(sources * extra, targets)
    return [sources * base + full + (1 if t < rest else 0) for t in range(targets)]
