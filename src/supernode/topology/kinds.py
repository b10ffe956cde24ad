"""Scale-up topology kinds: how each ``scale_up.kind`` is built and measured.

:data:`SCALE_UP_KINDS` maps a kind name to a :class:`ScaleUpKind` pairing a graph adder
(one domain into a cluster graph) with its closed-form metrics. Register a new kind with
``SCALE_UP_KINDS.register(name, ScaleUpKind(...))``; a duplicate name is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from supernode.errors import InputError
from supernode.spec.resolved import ScaleUp, Switch, ports_per_dimension
from supernode.topology.domain_metrics import (
    DomainMetrics,
    full_mesh_metrics,
    switched_metrics,
    two_tier_metrics,
)
from supernode.topology.graph import LinkType, Place, SwitchType, add_accelerators, new_graph
from supernode.topology.grid_metrics import hybrid_metrics, torus_metrics
from supernode.topology.hybrid import _add_hybrid, default_hybrid_chips
from supernode.topology.registry import Registry
from supernode.topology.scale_up import (
    _add_full_mesh,
    _add_switched,
    _add_torus,
    _add_two_tier,
)

if TYPE_CHECKING:
    import networkx as nx

#: Largest irregular domain whose hop counts are computed on its graph (accelerators).
MAX_GRAPH_DOMAIN = 4096


@dataclass(frozen=True)
class ScaleUpKind:
    """One scale-up kind: ``add(graph, scale_up, place)`` adds a domain's switches and links
    (its accelerators already added); ``metrics(scale_up, per_host)`` measures one domain."""

    name: str
    add: Callable[[nx.Graph, ScaleUp, Place], None]
    metrics: Callable[[ScaleUp, int | None], DomainMetrics]


SCALE_UP_KINDS: Registry[ScaleUpKind] = Registry("scale-up topology kind")


def link_type(up: ScaleUp) -> LinkType:
    """The scale-up link of ``up`` (bytes/s per direction, seconds, medium)."""
    return LinkType(up.link_bandwidth_bytes_per_s, up.link_latency_s, up.medium)


def switch_type(switch: Switch | None) -> SwitchType | None:
    """A resolved catalog switch as a builder :class:`SwitchType`."""
    if switch is None:
        return None
    return SwitchType(switch.radix, switch.port_bandwidth_bytes_per_s, switch.latency_s,
                      switch.name)


def _radix(up: ScaleUp) -> int | None:
    return up.switch.radix if up.switch else None


def _hybrid_chips(up: ScaleUp) -> int:
    assert up.hybrid is not None  # guaranteed by the schema for kind 'hybrid'
    return up.switch_chips or default_hybrid_chips(
        up.size, up.hybrid.uplinks_per_accelerator, _radix(up))


def _on_board(per_host: int | None, count: int) -> bool:
    return Place(0, 0, per_host).on_board(0, count)


def _graph_hops(up: ScaleUp, metrics: DomainMetrics) -> DomainMetrics:
    """Replace closed-form hop counts of an irregular domain with ones walked on its graph."""
    from supernode.topology.verify import accelerator_diameter_switches, accelerator_hops

    if up.size > MAX_GRAPH_DOMAIN:
        raise InputError(
            "scale_up.switch_chips",
            f"{up.size} accelerators with fewer links than switch chips: not every "
            f"accelerator reaches every chip, and there is no closed form for the hops; "
            f"use at most as many chips as links per accelerator, or two switch tiers",
        )
    g = new_graph()
    add_accelerators(g, Place(), up.size)
    SCALE_UP_KINDS.get(up.kind).add(g, up, Place())
    try:
        diameter, mean = accelerator_hops(g)
    except ValueError as exc:
        raise InputError("scale_up.switch_chips",
                         f"the domain is disconnected ({exc}): give every accelerator a "
                         "link to every switch chip") from None
    return dataclasses.replace(metrics, diameter_hops=diameter, mean_hops=mean,
                               diameter_switches=accelerator_diameter_switches(g))


def _add_nvswitch(g: nx.Graph, up: ScaleUp, place: Place) -> None:
    link, switch = link_type(up), switch_type(up.switch)
    if up.switch_tiers == 2:
        _add_two_tier(g, up.size, up.group_size, up.links_per_accelerator, up.switch_chips,
                      link, switch, None, place)
    else:
        _add_switched(g, up.size, up.links_per_accelerator, up.switch_chips, link, switch,
                      place)


def _nvswitch_metrics(up: ScaleUp, per_host: int | None) -> DomainMetrics:
    bw = up.link_bandwidth_bytes_per_s
    if up.switch_tiers == 2:
        m = two_tier_metrics(up.size, up.group_size, up.links_per_accelerator, up.switch_chips,
                             bw, _radix(up), _on_board(per_host, up.group_size))
    else:
        m = switched_metrics(up.size, up.links_per_accelerator, up.switch_chips, bw,
                             _radix(up), _on_board(per_host, up.size))
    return _graph_hops(up, m) if up.links_per_accelerator < up.switch_chips else m


def _add_grid(g: nx.Graph, up: ScaleUp, place: Place) -> None:
    _add_torus(g, up.dims, up.kind == "torus" and up.wraparound, link_type(up),
               up.dim_link_bandwidth_bytes_per_s, up.links_per_accelerator, place)


def _grid_metrics(up: ScaleUp, per_host: int | None) -> DomainMetrics:
    wrap = up.kind == "torus" and up.wraparound
    ports = sum(ports_per_dimension(up.dims))
    count = max(1, up.links_per_accelerator // max(1, ports))
    bws = up.dim_link_bandwidth_bytes_per_s or (up.link_bandwidth_bytes_per_s,) * len(up.dims)
    return torus_metrics(up.dims, wrap, bws, count, per_host)


def _add_mesh(g: nx.Graph, up: ScaleUp, place: Place) -> None:
    _add_full_mesh(g, up.size, link_type(up), up.links_per_accelerator, place)


def _mesh_metrics(up: ScaleUp, per_host: int | None) -> DomainMetrics:
    count = max(1, up.links_per_accelerator // max(1, up.size - 1))
    return full_mesh_metrics(up.size, up.link_bandwidth_bytes_per_s, count, per_host)


def _add_hybrid_kind(g: nx.Graph, up: ScaleUp, place: Place) -> None:
    h = up.hybrid
    assert h is not None
    _add_hybrid(g, up.size, h.group_size, h.group_kind, h.group_links_per_accelerator,
                h.uplinks_per_accelerator, _hybrid_chips(up), link_type(up),
                switch_type(up.switch), h.group_dims, place)


def _hybrid_metrics(up: ScaleUp, per_host: int | None) -> DomainMetrics:
    h = up.hybrid
    assert h is not None
    chips = _hybrid_chips(up)
    m = hybrid_metrics(up.size, h.group_size, h.group_kind, h.group_dims,
                       h.group_links_per_accelerator, h.uplinks_per_accelerator, chips,
                       up.link_bandwidth_bytes_per_s, _radix(up), per_host,
                       _on_board(per_host, up.size))
    return _graph_hops(up, m) if h.uplinks_per_accelerator < chips else m


def _add_none(g: nx.Graph, up: ScaleUp, place: Place) -> None:
    """A domain of one accelerator has no scale-up links."""


def _none_metrics(up: ScaleUp, per_host: int | None) -> DomainMetrics:
    return DomainMetrics(size=up.size)


for _kind in (
    ScaleUpKind("nvswitch", _add_nvswitch, _nvswitch_metrics),
    ScaleUpKind("full_mesh", _add_mesh, _mesh_metrics),
    ScaleUpKind("torus", _add_grid, _grid_metrics),
    ScaleUpKind("mesh", _add_grid, _grid_metrics),
    ScaleUpKind("hybrid", _add_hybrid_kind, _hybrid_metrics),
    ScaleUpKind("none", _add_none, _none_metrics),
):
    SCALE_UP_KINDS.register(_kind.name, _kind)
