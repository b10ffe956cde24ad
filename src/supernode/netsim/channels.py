"""Ring channels: how many rings a collective runs at once, and which hops they take.

NCCL and RCCL split a collective over several *channels*, each a ring carrying a share of
the data over different links. :func:`ring_hops` returns the ``(src, dst)`` hops of every
channel (``C x G x n`` arrays) and the simulator sends ``1/C`` of the data on each:

* a group with ``g0 > 1`` members in every scale-up domain it spans (contiguous blocks):
  ``g0`` channels, channel ``k`` rotating each domain's block by ``k`` so every channel
  leaves a domain from a different GPU and NIC (NCCL: one channel per NIC);
* a group inside one domain of direct links: a full mesh runs ``n - 1`` rotations
  ``i -> i + k`` that together use every link once (RCCL's rings over xGMI); a torus or
  mesh runs two rings, one each way (``i -> i +- 1``), so a ring along one dimension
  uses 2 of its ports: dimension-ordered multi-ring algorithms are not modelled;
* otherwise one ring ``i -> i + 1``.
"""

from __future__ import annotations

import numpy as np

from supernode.netsim.network import TIER_CODES, Network


def _blocks(groups: np.ndarray, net: Network) -> int:
    """Members per domain when every group is split in equal contiguous domain blocks
    spanning several domains; 0 otherwise."""
    dom = net.acc_domain[groups]
    n = groups.shape[1]
    starts = np.flatnonzero(np.concatenate([[True], dom[0, 1:] != dom[0, :-1]]))
    g0 = n // starts.size
    if starts.size < 2 or g0 < 2 or n % g0 or not np.all(np.diff(starts) == g0):
        return 0
    blocks = dom.reshape(groups.shape[0], -1, g0)
    return g0 if np.all(blocks == blocks[:, :, :1]) else 0


def _direct(groups: np.ndarray, net: Network) -> str:
    """``mesh`` (every pair linked), ``grid`` (direct links, not all pairs) or ``""``."""
    dom = net.acc_domain[groups[0]]
    if not np.all(dom == dom[0]) or dom[0] < 0:
        return ""
    direct = net.tail[net.tier == TIER_CODES["scale_up"]]
    nodes = net.acc_node[groups[0]]
    if direct.size == 0 or not np.all(np.isin(nodes, direct)):
        return ""
    a, b = np.meshgrid(nodes, nodes, indexing="ij")
    off = a != b
    keys = a[off] * len(net.nodes) + b[off]
    pos = np.minimum(np.searchsorted(net.link_keys, keys), net.link_keys.size - 1)
    return "mesh" if np.all(net.link_keys[pos] == keys) else "grid"


def ring_hops(groups: np.ndarray, net: Network | None) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` hops of every ring channel, each ``C x G x n`` (see module doc)."""
    n = groups.shape[1]
    if net is None:
        return groups[None], np.roll(groups, -1, axis=1)[None]
    g0 = _blocks(groups, net)
    if g0:
        members = groups.reshape(groups.shape[0], -1, g0)
        rings = np.stack([np.roll(members, -k, axis=2).reshape(groups.shape)
                          for k in range(g0)])
        return rings, np.roll(rings, -1, axis=2)
    kind = _direct(groups, net) if n > 2 else ""
    shifts = range(1, n) if kind == "mesh" else (1, n - 1) if kind == "grid" else (1,)
    src = np.stack([groups] * len(shifts))
    return src, np.stack([np.roll(groups, -k, axis=1) for k in shifts])
