"""Builders of one scale-up domain: full mesh, switched (one or two tiers), torus/mesh, hybrid.

Each public builder is a pure function returning a new :class:`networkx.Graph` following
:mod:`supernode.topology.graph`. The ``_add_*`` twins add the same domain into an existing
graph at a :class:`Place`; :func:`~supernode.topology.cluster_graph.build_cluster_graph`
uses them to assemble a cluster without copying. Links whose two ends sit in one host are
PCB traces; a switch serving only one host's accelerators sits on its board.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from supernode.spec.resolved import ports_per_dimension
from supernode.topology.graph import (
    LinkType,
    Place,
    SwitchType,
    acc,
    add_accelerators,
    add_link,
    add_switch,
    new_graph,
    spread,
)
from supernode.topology.sizing import RadixError, _smallest_even_divisor

if TYPE_CHECKING:
    import networkx as nx

DEFAULT_LINK = LinkType(bandwidth_bytes_per_s=25e9, latency_s=0.0, medium="copper")


def _medium(place: Place, a: int, b: int) -> str | None:
    """PCB when local accelerators ``a`` and ``b`` share a host, else the link's medium."""
    return "pcb" if place.same_host(a, b) else None


def full_mesh(
    n: int, link: LinkType = DEFAULT_LINK, links_per_accelerator: int | None = None,
    place: Place = Place(),
) -> nx.Graph:
    """A full mesh of ``n`` accelerators: one edge per pair, ``n(n-1)/2`` edges.

    Each edge bundles ``links_per_accelerator // (n-1)`` links (1 by default) of ``link``
    (bandwidth in bytes/s per direction).
    """
    g = new_graph(f"full_mesh({n})")
    add_accelerators(g, place, n)
    _add_full_mesh(g, n, link, links_per_accelerator, place)
    return g


def _add_full_mesh(
    g: nx.Graph, n: int, link: LinkType, links_per_accelerator: int | None, place: Place,
    offset: int = 0,
) -> None:
    """Add a full mesh over local accelerators ``offset .. offset+n-1`` of ``place``."""
    count = max(1, (links_per_accelerator or n - 1) // max(1, n - 1))
    for a in range(offset, offset + n):
        for b in range(a + 1, offset + n):
            add_link(g, acc(place.first + a), acc(place.first + b), link, "scale_up", count,
                     medium=_medium(place, a, b))


def nvswitch_domain(
    n: int, links_per_accelerator: int, switch_chips: int, link: LinkType = DEFAULT_LINK,
    switch: SwitchType | None = None, place: Place = Place(),
) -> nx.Graph:
    """``n`` accelerators each spreading ``links_per_accelerator`` links over ``switch_chips``
    switch chips (NVSwitch-style, one switch tier).

    Each accelerator gives every chip ``L // C`` links and the first ``L % C`` chips one
    more, every accelerator wired the same (HGX H100: 18 links over 4 chips = 5+5+4+4 for
    each GPU, so the first two chips use 40 ports and the others 32): the planes then
    carry any pair of GPUs at the full ``L`` links. Raises :class:`RadixError` if a chip
    needs more ports than ``switch.radix``.
    """
    g = new_graph(f"nvswitch_domain({n}, {links_per_accelerator}, {switch_chips})")
    add_accelerators(g, place, n)
    _add_switched(g, n, links_per_accelerator, switch_chips, link, switch, place)
    return g


def _check_radix(needed: int, switch: SwitchType | None, what: str) -> None:
    if switch is not None and needed > switch.radix:
        raise RadixError(
            f"{what} needs {needed} ports per switch chip; {switch.name} has {switch.radix}",
            needed, switch.radix,
        )


def _add_switched(
    g: nx.Graph, n: int, links: int, chips: int, link: LinkType, switch: SwitchType | None,
    place: Place, offset: int = 0, group: int = 0, two_tier: bool = False,
) -> list[tuple[int, tuple[Any, ...], int]]:
    """Add ``chips`` first-tier chips serving local accelerators ``offset..offset+n-1``.

    Returns ``(chip index, node id, ports used below)`` for every chip; with ``two_tier``
    a chip needs as many ports up as down.
    """
    tier = "scale_up_l1"
    on_board = place.on_board(offset, n)
    nodes = [(tier, place.domain, group * chips + c) for c in range(chips)]
    for c, node in enumerate(nodes):
        add_switch(g, node, tier, switch, place.domain, group=group, plane=c)
    used = [0] * chips
    for i in range(n):
        for c, count in spread(links, chips):
            add_link(g, acc(place.first + offset + i), nodes[c], link, tier, count,
                     medium="pcb" if on_board else None)
            used[c] += count
    _check_radix(max(used) * (2 if two_tier else 1), switch,
                 f"{n} accelerators x {links} links over {chips} chips")
    return [(c, nodes[c], used[c]) for c in range(chips)]


def switched_two_tier(
    n: int, group_size: int, links_per_accelerator: int, l1_chips: int,
    link: LinkType = DEFAULT_LINK, switch: SwitchType | None = None,
    l2_chips_per_plane: int | None = None, place: Place = Place(),
) -> nx.Graph:
    """A two-tier switched domain (CloudMatrix384-like): groups of ``group_size``
    accelerators with ``l1_chips`` first-tier chips each; L1 chip ``j`` of every group
    joins plane ``j`` of second-tier chips, non-blocking (as many ports up as down).

    Plane ``j`` has ``l2_chips_per_plane`` chips (default: the fewest of ``radix`` ports
    that take every group's uplinks, rounded up to divide them evenly). When an L1 chip has
    fewer uplinks than its plane has chips, its uplinks are split into a narrower share to
    every L2 chip: an edge of ``uplinks / L2 chips`` port-equivalent links each, so the
    link (and cable) count stays the physical uplinks' (CloudMatrix384: 8 per L1, 2,688
    cables, 5,376 transceivers: SemiAnalysis's scale-up figure).
    """
    g = new_graph(f"switched_two_tier({n}, {group_size})")
    add_accelerators(g, place, n)
    _add_two_tier(g, n, group_size, links_per_accelerator, l1_chips, link, switch,
                  l2_chips_per_plane, place)
    return g


def l2_chips_for_plane(groups: int, uplinks: int, radix: int) -> int:
    """Second-tier chips of one plane: fewest of ``radix`` ports taking ``groups * uplinks``
    links, rounded up to a divisor of ``uplinks`` when one exists (equal links per pair)."""
    return _smallest_even_divisor(math.ceil(groups * uplinks / radix), uplinks)


def _add_two_tier(
    g: nx.Graph, n: int, group_size: int, links: int, chips: int, link: LinkType,
    switch: SwitchType | None, l2_per_plane: int | None, place: Place,
) -> None:
    groups = n // group_size
    l1 = [
        _add_switched(g, group_size, links, chips, link, switch, place, offset=k * group_size,
                      group=k, two_tier=True)
        for k in range(groups)
    ]
    radix = switch.radix if switch else 2 * max(u for row in l1 for _, _, u in row)
    next_l2 = 0
    for plane in range(chips):
        up = l1[0][plane][2]  # every group loads its chips alike
        per_plane = l2_per_plane or l2_chips_for_plane(groups, up, radix)
        l2 = [("scale_up_l2", place.domain, next_l2 + s) for s in range(per_plane)]
        next_l2 += per_plane
        for node in l2:
            add_switch(g, node, "scale_up_l2", switch, place.domain, plane=plane)
        for k in range(groups):
            _wire_up(g, l1[k][plane][1], l2, up, k, link)
        _check_radix(math.ceil(groups * up / per_plane), switch, f"plane {plane} of L2")


def _wire_up(g: nx.Graph, node: object, l2: list[Any], up: int, k: int, link: LinkType) -> None:
    if up >= len(l2):
        for s, count in spread(up, len(l2), offset=(k * up) % len(l2)):
            add_link(g, node, l2[s], link, "scale_up_l2", count)
        return
    for target in l2:
        add_link(g, node, target, link, "scale_up_l2", up / len(l2))


def torus_ports(dims: Sequence[int], wraparound: bool = True) -> int:
    """Ports one accelerator uses in a torus/mesh: 2 per dimension > 2, 1 per dimension of 2."""
    return sum(ports_per_dimension(dims))


def torus(
    dims: Sequence[int], wraparound: bool = True, link: LinkType = DEFAULT_LINK,
    dim_bandwidth_bytes_per_s: Sequence[float] = (), links_per_accelerator: int | None = None,
    place: Place = Place(),
) -> nx.Graph:
    """An n-D torus (``wraparound``) or mesh of ``dims``; accelerator index runs fastest along
    the first dimension, so hosts of consecutive accelerators fill the first dimensions.

    Per dimension of size ``d``: ``N`` links with wrap-around when ``d > 2``, ``N/2`` when
    ``d == 2`` (the wrap link would duplicate the direct one), ``N(d-1)/d`` without wrap.
    Each edge bundles ``links_per_accelerator // ports`` links; dimension ``i`` runs at
    ``dim_bandwidth_bytes_per_s[i]`` (default ``link.bandwidth_bytes_per_s``).
    """
    g = new_graph(f"{'torus' if wraparound else 'mesh'}({list(dims)})")
    add_accelerators(g, place, math.prod(dims))
    _add_torus(g, dims, wraparound, link, dim_bandwidth_bytes_per_s, links_per_accelerator,
               place)
    return g


def mesh(
    dims: Sequence[int], link: LinkType = DEFAULT_LINK,
    dim_bandwidth_bytes_per_s: Sequence[float] = (), links_per_accelerator: int | None = None,
    place: Place = Place(),
) -> nx.Graph:
    """An n-D mesh (a torus without wrap-around links); see :func:`torus`."""
    return torus(dims, False, link, dim_bandwidth_bytes_per_s, links_per_accelerator, place)


def _add_torus(
    g: nx.Graph, dims: Sequence[int], wraparound: bool, link: LinkType,
    dim_bw: Sequence[float], links: int | None, place: Place, offset: int = 0,
) -> None:
    n = math.prod(dims)
    for local in range(offset, offset + n):
        g.nodes[acc(place.first + local)]["coords"] = _coords(local - offset, dims)
    ports = torus_ports(dims, wraparound)
    count = max(1, (links or ports) // max(1, ports))
    for axis, d in enumerate(dims):
        stride = math.prod(dims[:axis])
        bw = dim_bw[axis] if dim_bw else link.bandwidth_bytes_per_s
        for x in range(n):
            c = (x // stride) % d
            if c + 1 < d:
                y = x + stride
            elif wraparound and d > 2:
                y = x - (d - 1) * stride
            else:
                continue
            a, b = offset + x, offset + y
            add_link(g, acc(place.first + a), acc(place.first + b), link, "scale_up", count,
                     medium=_medium(place, a, b), bandwidth_bytes_per_s=bw)


def _coords(index: int, dims: Sequence[int]) -> tuple[int, ...]:
    """Coordinates of ``index`` with the first dimension varying fastest."""
    out = []
    for d in dims:
        index, c = divmod(index, d)
        out.append(c)
    return tuple(out)
