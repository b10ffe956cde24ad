"""Failures and degradation: the ``--fail`` mini-language, failure files, and applying them.

One spec per ``--fail`` (or several separated by commas):

==============================  ===========================================================
``link:U-V``                    the cable between nodes U and V fails (both directions)
``link:U->V``                   only the direction U -> V fails
``switch:NODE``                 a switch (or any node: ``nic/3/1``) fails with all its links
``slow:link:U-V:F``             the link runs at F x its capacity (0 < F <= 1), both ways
``slow:switch:NODE:F``          every link of NODE runs at F x its capacity
``slow:link:U-V:ber=B[@GEN]``   the link runs at the share of its capacity that link
                                generation GEN keeps at raw (pre-FEC) bit error rate B
                                (:mod:`supernode.links`); GEN defaults by tier: NVLink of
                                the accelerators' bandwidth, InfiniBand of the NIC rate,
                                PCIe; ``slow:switch:NODE:ber=B`` works the same way
==============================  ===========================================================

Node names are the topology's ids joined by ``/``: ``leaf/3``, ``spine/1``, ``core/0``,
``scale_up_l1/DOMAIN/CHIP``, ``scale_up_l2/DOMAIN/CHIP``, ``nic/HOST/RAIL``, ``acc/I``.
A ``*`` matches any value of one part: ``switch:scale_up_l1/*/5`` takes plane 5 down in
every domain. A bundle of parallel links is one link here; losing some of its cables is a
``slow`` (4 of 5 NVLinks left: ``slow:link:acc/0-scale_up_l1/0/0:0.8``).

A failure file (YAML/JSON) is ``failures: [spec, spec, ...]``; pass its path to ``--fail``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from supernode.errors import InputError
from supernode.inputs import is_file
from supernode.netsim.network import Network, node_name
from supernode.spec.base import StrictModel
from supernode.spec.loader import read_document, validate_document


class FailureFile(StrictModel):
    """A failure document: a list of specs in the ``--fail`` language."""

    failures: list[str] = Field(min_length=1,
                                description="Failure specs, e.g. link:leaf/0-spine/1.")


@dataclass(frozen=True)
class Failure:
    """A parsed failure: the directed links it hits and their capacity factor (0 = down)."""

    spec: str
    links: tuple[int, ...]
    factor: float


def expand_specs(values: list[str] | tuple[str, ...]) -> list[str]:
    """Split comma-separated specs and read failure files (a value without ``:``)."""
    out: list[str] = []
    for value in values:
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            if ":" not in part or is_file(part):
                doc = validate_document(read_document(part), FailureFile, source=part)
                out.extend(doc.failures)
            else:
                out.append(part)
    return out


#: A numeric part of a node name: ASCII digits only (``str.isdigit`` accepts ``²``, which
#: ``int`` refuses), at most 18 of them (within int64).
NODE_INDEX = re.compile(r"-?[0-9]{1,18}")


def node_parts(text: str) -> tuple[str | int, ...]:
    """``"leaf/3"`` -> ``("leaf", 3)``: the parts of a node name, numbers as ints."""
    return tuple(int(p) if NODE_INDEX.fullmatch(p) else p for p in text.split("/"))


def _parse_node(net: Network, text: str, spec: str) -> list[int]:
    """Node indices named by ``text`` (``*`` parts match anything)."""
    parts = node_parts(text)
    if "*" not in parts:
        if parts in net.index:
            return [net.index[parts]]
        names = {node_name(v) for v in net.nodes if isinstance(v, tuple)
                 and v and v[0] == parts[0]}
        close = difflib.get_close_matches(text, sorted(names), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError("fail", f"{spec!r}: no node {text!r}{hint}")
    hits = [i for v, i in net.index.items() if isinstance(v, tuple) and len(v) == len(parts)
            and all(p == "*" or p == q for p, q in zip(parts, v, strict=True))]
    if not hits:
        raise InputError("fail", f"{spec!r}: no node matches {text!r}")
    return hits


def _links_between(net: Network, us: list[int], vs: list[int], both: bool,
                   spec: str) -> list[int]:
    out = []
    for u in us:
        for v in vs:
            k = net.find_link(u, v)
            if k is not None:
                out.append(k)
                if both:
                    out.append(k ^ 1)
    if not out:
        peers = sorted({node_name(net.nodes[net.head[k]]) for k in range(net.links)
                        if net.tail[k] == us[0]})[:6] if len(us) == 1 else []
        hint = f" ({node_name(net.nodes[us[0]])} links to {', '.join(peers)}, ...)" \
            if peers else ""
        raise InputError("fail", f"{spec!r}: no such link{hint}")
    return out


def parse_failure(net: Network, spec: str) -> Failure:
    """Parse one spec against ``net``; :class:`InputError` names what is missing."""
    text, factor, ber = spec, 0.0, None
    if text.startswith("slow:"):
        body, _, tail = text[5:].rpartition(":")
        if tail.startswith("ber="):
            ber = tail[4:]
        else:
            try:
                factor = float(tail)
            except ValueError:
                raise InputError("fail", f"{spec!r}: a slow spec ends with ':FACTOR' or "
                                         "':ber=BER[@GENERATION]'") from None
            if not 0.0 < factor <= 1.0:
                raise InputError("fail", f"{spec!r}: factor must be in (0, 1], got {factor}")
        text = body
    kind, _, target = text.partition(":")
    if kind == "link":
        both = "->" not in target
        u, sep, v = target.partition("->" if not both else "-")
        if not sep or not v:
            raise InputError("fail", f"{spec!r}: a link is 'link:U-V' or 'link:U->V'")
        links = _links_between(net, _parse_node(net, u, spec), _parse_node(net, v, spec),
                               both, spec)
    elif kind in ("switch", "node"):
        nodes = np.array(_parse_node(net, target, spec))
        links = np.flatnonzero(np.isin(net.tail, nodes) | np.isin(net.head, nodes)).tolist()
    else:
        raise InputError("fail", f"{spec!r}: kinds are link:, switch:, node: and slow:")
    if ber is not None:
        factor = _ber_factor(net, links, ber, spec)
    return Failure(spec, tuple(sorted(set(links))), factor)


def _ber_factor(net: Network, links: list[int], text: str, spec: str) -> float:
    """Capacity fraction the link model leaves at ``BER[@GENERATION]`` (the slowest link)."""
    from supernode.links import get_generation, link_performance
    from supernode.links.fec import check_ber

    value, _, name = text.partition("@")
    try:
        ber = check_ber(value, "fail")
    except InputError:
        raise InputError("fail", f"{spec!r}: ber=B needs a bit error rate in [0, 0.5], "
                                 "e.g. ber=1e-5") from None
    gens = [get_generation(name, "fail") if name else _generation_of(net, k) for k in links]
    return min(link_performance(g, pre_fec_ber=ber).bandwidth_fraction for g in gens)


def _generation_of(net: Network, k: int):
    """Link generation of link ``k`` from its tier and the network's rates.

    Scale-up: the NVLink generation of the accelerators' scale-up bandwidth (the same rule
    as the collective efficiency tables); fabric: the generation of one NIC's link rate;
    host: the PCIe generation nearest the link's capacity. A bundle is costed per link.
    """
    from supernode.collectives.generations import scale_up_efficiency_name
    from supernode.links import generation_for_rate, get_generation
    from supernode.netsim.network import ACC, FABRIC_CODES, NIC, SCALE_UP_CODES

    code = int(net.tier[k])
    tails = net.kind[net.tail]
    if code in SCALE_UP_CODES:
        ends = [v for v in (net.tail[k], net.head[k]) if net.kind[v] == ACC]
        acc = ends[0] if ends else net.acc_node[0]
        own = (net.tail == acc) & np.isin(net.tier, list(SCALE_UP_CODES))
        return get_generation(scale_up_efficiency_name(None, float(
            net.capacity_bytes_per_s[own].sum())))
    if code in FABRIC_CODES:
        nic_links = (tails == NIC) & np.isin(net.tier, list(FABRIC_CODES))
        rate = float(net.capacity_bytes_per_s[nic_links].min()) if nic_links.any() else float(
            net.capacity_bytes_per_s[k])
        return generation_for_rate("infiniband", rate)
    return generation_for_rate("pcie", float(net.capacity_bytes_per_s[k]))


def apply_failures(net: Network, specs: list[str] | tuple[str, ...]
                   ) -> tuple[Network, list[Failure]]:
    """A degraded copy of ``net`` and the parsed failures (factors multiply)."""
    failures = [parse_failure(net, s) for s in expand_specs(list(specs))]
    up = net.up.copy()
    capacity = net.capacity_bytes_per_s.copy()
    for f in failures:
        idx = np.asarray(f.links, dtype=np.int64)
        if f.factor == 0.0:
            up[idx] = False
        else:
            capacity[idx] *= f.factor
    return net.with_links(up, capacity), failures
