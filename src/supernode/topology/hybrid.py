"""Hybrid scale-up domain: a direct mesh inside each group (rack), switches between groups."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

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
from supernode.topology.scale_up import (
    DEFAULT_LINK,
    _add_full_mesh,
    _add_torus,
    _check_radix,
)

if TYPE_CHECKING:
    import networkx as nx


def default_hybrid_chips(n: int, uplinks: int, radix: int | None) -> int:
    """Switch chips of a hybrid domain when none are given: one plane per uplink, more if
    ``n * uplinks`` ports do not fit (``radix`` ports per chip)."""
    if radix is None:
        return uplinks
    return max(uplinks, math.ceil(n * uplinks / radix))


def hybrid(
    n: int, group_size: int, group_kind: str, group_links_per_accelerator: int,
    uplinks_per_accelerator: int, switch_chips: int | None = None,
    link: LinkType = DEFAULT_LINK, switch: SwitchType | None = None,
    group_dims: Sequence[int] | None = None, place: Place = Place(),
) -> nx.Graph:
    """``n // group_size`` groups, each a ``group_kind`` (full_mesh, mesh or torus of
    ``group_dims``) using ``group_links_per_accelerator`` ports per accelerator; every
    accelerator also spreads ``uplinks_per_accelerator`` links over ``switch_chips`` chips
    (rotating, as :func:`~supernode.topology.scale_up.nvswitch_domain`). Bandwidths in
    bytes/s per direction. Raises :class:`RadixError` when a chip runs out of ports.
    """
    g = new_graph(f"hybrid({n}, groups of {group_size})")
    add_accelerators(g, place, n)
    _add_hybrid(g, n, group_size, group_kind, group_links_per_accelerator,
                uplinks_per_accelerator, switch_chips, link, switch, group_dims, place)
    return g


def _add_hybrid(
    g: nx.Graph, n: int, group_size: int, group_kind: str, group_links: int, uplinks: int,
    chips: int | None, link: LinkType, switch: SwitchType | None,
    group_dims: Sequence[int] | None, place: Place,
) -> None:
    for k in range(n // group_size):
        offset = k * group_size
        if group_kind == "full_mesh":
            _add_full_mesh(g, group_size, link, group_links, place, offset)
        else:
            dims = tuple(group_dims or (group_size,))
            _add_torus(g, dims, group_kind == "torus", link, (), group_links, place, offset)
    chips = chips or default_hybrid_chips(n, uplinks, switch.radix if switch else None)
    nodes = [("scale_up_l1", place.domain, c) for c in range(chips)]
    for c, node in enumerate(nodes):
        add_switch(g, node, "scale_up_l1", switch, place.domain, plane=c)
    on_board = place.on_board(0, n)
    used = [0] * chips
    extra = uplinks % chips
    for i in range(n):
        for c, count in spread(uplinks, chips, offset=(i * extra) % chips):
            add_link(g, acc(place.first + i), nodes[c], link, "scale_up_l1", count,
                     medium="pcb" if on_board else None)
            used[c] += count
    _check_radix(max(used), switch, f"{n} accelerators x {uplinks} uplinks over {chips} chips")
