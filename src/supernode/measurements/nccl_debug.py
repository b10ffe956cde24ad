"""Read what ``NCCL_DEBUG=INFO`` logs say about a run (NCCL ``src/init.cc``, ``enqueue.cc``,
``graph/rings.cc``, ``transport/net_ib.cc``): version, communicator shape, channels, rings
and trees, the network and its HCAs, NVLS availability, the transports of each connection,
variables set by the environment, and — with ``NCCL_DEBUG_SUBSYS=TUNING`` — the algorithm
and protocol NCCL chose per call (``AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE
channel{Lo..Hi}={0..15}``; before 2.19, ``1048576 Bytes -> Algo 1 proto 2 time 24.5``
with the numbering of ``nccl_tuner.h``). Unrecognised messages are counted, not errors.
"""

from __future__ import annotations

import re
from collections import Counter
from types import MappingProxyType

from supernode.measurements.benchtext import NcclMessage, result_lines, split_nccl_message
from supernode.measurements.model import NcclRuntime, TuningChoice

#: ``NCCL_ALGO_*`` / ``NCCL_PROTO_*`` numbering (NCCL ``src/include/plugin/nccl_tuner.h``).
ALGORITHM_CODES = ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")
PROTOCOL_CODES = ("LL", "LL128", "SIMPLE")
#: NCCL algorithm names -> the cost model's (None: not modelled).
MODEL_ALGORITHMS = {"RING": "ring", "TREE": "tree", "NVLS": "nvls", "NVLS_TREE": "nvls_tree",
                    "NVLSTREE": "nvls_tree", "COLLNET_DIRECT": None, "COLLNETDIRECT": None,
                    "COLLNET_CHAIN": None, "COLLNETCHAIN": None, "PAT": None}
_FUNCS = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
          "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "p2p", "send": "p2p",
          "recv": "p2p", "alltoall": "all_to_all"}

_VERSION = re.compile(r"NCCL version\s+(\S+)")
_COMM = re.compile(r"comm 0x[0-9a-fA-F]+ rank (\d+) nRanks (\d+) nNodes (\d+) localRanks (\d+) "
                   r"localRank (\d+) MNNVL (\d+)")
_INIT = re.compile(r"comm 0x[0-9a-fA-F]+ rank (\d+) nranks (\d+)")
_CHANNELS = re.compile(r"(\d+) coll channels,.*?(?:(\d+) nvls channels,)?\s*(\d+) p2p channels,")
_RING = re.compile(r"^Channel (\d+)/(\d+) :((?:\s+\d+)+)\s*$")
_CONNECTION = re.compile(r"(?:Channel|Ring) \d+(?:/\d+)? : .*->.* via (\S+)")
_TREES = re.compile(r"^Trees\b")
_NETWORK = re.compile(r"^Using network (\S+)")
_IB = re.compile(r"^NET/IB : Using (.*)$")
_HCA = re.compile(r"\[\d+\]([\w.-]+):\d+/(\w+)(/SHARP)?")
_NO_IB = re.compile(r"NET/IB : No device found")
_NVLS = re.compile(r"NVLS multicast support is (not )?available")
_ENV = re.compile(r"^(NCCL_\w+) set by environment to (.*?)\.?\s*$")
_TUNE = re.compile(r"^(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+)"
                   r"(?: channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\})?")
_TUNE_OLD = re.compile(r"^(\d+) Bytes -> Algo (\d+) proto (\d+) time [\d.]+")


def nccl_messages(text: str) -> list[NcclMessage]:
    """Every NCCL debug message of ``text`` (also those in the middle of other lines)."""
    out = []
    for number, line in result_lines(text):
        _, message = split_nccl_message(number, line)
        if message is not None:
            out.append(message)
    return out


def _tuning(message: str, line: int) -> TuningChoice | None:
    if (m := _TUNE.match(message)) is not None:
        channels = int(m.group(6)) - int(m.group(5)) + 1 if m.group(5) else None
        return TuningChoice(_FUNCS.get(m.group(1).lower(), m.group(1)), int(m.group(2)),
                            m.group(3).upper(), m.group(4).upper(), channels, line)
    if (m := _TUNE_OLD.match(message)) is not None:
        algo, proto = int(m.group(2)), int(m.group(3))
        if algo < len(ALGORITHM_CODES) and proto < len(PROTOCOL_CODES):
            return TuningChoice(None, int(m.group(1)), ALGORITHM_CODES[algo],
                                PROTOCOL_CODES[proto], None, line)
    return None


def _transport(via: str) -> str:
    """``NET/IB/1/GDRDMA`` -> ``NET/IB+GDRDMA``; ``P2P/IPC`` -> ``P2P/IPC``."""
    parts = via.split("/")
    if parts[0] == "NET" and len(parts) > 1:
        return "NET/" + parts[1] + ("+GDRDMA" if "GDRDMA" in parts else "")
    return "/".join(parts[:2])


def parse_nccl_messages(messages: list[NcclMessage]) -> NcclRuntime:
    """Summarise NCCL debug messages into an :class:`NcclRuntime`."""
    found: dict = {}
    rings: list[tuple[int, ...]] = []
    transports: Counter[str] = Counter()
    env: dict[str, str] = {}
    tuning: dict[tuple, TuningChoice] = {}
    warnings: list[str] = []
    hcas: list[str] = []
    trees = 0
    for msg in messages:
        text = msg.message
        if msg.level in ("WARN", "ERROR"):
            warnings.append(f"line {msg.line}: {text[:200]}")
            continue
        if (m := _VERSION.search(text)) is not None:
            found.setdefault("version", m.group(1))
        elif (m := _COMM.search(text)) is not None:
            found.update(ranks=int(m.group(2)), nodes=int(m.group(3)),
                         local_ranks=int(m.group(4)), mnnvl=m.group(6) != "0")
        elif (m := _INIT.search(text)) is not None:
            found.setdefault("ranks", int(m.group(2)))
        elif (m := _CHANNELS.search(text)) is not None:
            found.update(coll_channels=int(m.group(1)), p2p_channels=int(m.group(3)),
                         nvls_channels=int(m.group(2)) if m.group(2) else None)
        elif (m := _RING.match(text)) is not None:
            rings.append(tuple(int(x) for x in m.group(3).split()))
        elif (m := _CONNECTION.search(text)) is not None:
            transports[_transport(m.group(1))] += 1
        elif _TREES.match(text):
            trees += 1
        elif (m := _NETWORK.match(text)) is not None:
            found["network"] = m.group(1)
        elif (m := _IB.match(text)) is not None:
            for name, link, sharp in _HCA.findall(m.group(1)):
                if name not in hcas:
                    hcas.append(name)
                found["link_layer"] = link
                found["sharp"] = found.get("sharp", False) or bool(sharp)
        elif _NO_IB.search(text):
            found.setdefault("network", "Socket")
        elif (m := _NVLS.search(text)) is not None:
            available = m.group(1) is None
            found["nvls_available"] = found.get("nvls_available", True) and available
        elif (m := _ENV.match(text)) is not None:
            env[m.group(1)] = m.group(2)
        elif (choice := _tuning(text, msg.line)) is not None:
            tuning.setdefault((choice.op, choice.message_bytes, choice.algorithm,
                               choice.protocol), choice)
    return _runtime(found, rings, trees, hcas, transports, env, tuning, warnings,
                    len(messages))


def _runtime(found: dict, rings, trees, hcas, transports, env, tuning, warnings,
             count: int) -> NcclRuntime:
    net_links = sum(v for k, v in transports.items() if k.startswith("NET/"))
    gdr = None if net_links == 0 else any("+GDRDMA" in k for k in transports)
    return NcclRuntime(
        version=found.get("version"), ranks=found.get("ranks"), nodes=found.get("nodes"),
        local_ranks=found.get("local_ranks"), mnnvl=found.get("mnnvl"),
        coll_channels=found.get("coll_channels"), nvls_channels=found.get("nvls_channels"),
        p2p_channels=found.get("p2p_channels"), rings=tuple(rings), trees=trees,
        network=found.get("network"), hcas=tuple(hcas), sharp=found.get("sharp"),
        nvls_available=found.get("nvls_available"),
        transports=MappingProxyType(dict(transports)), gdr=gdr,
        env=MappingProxyType(env), tuning=tuple(tuning.values()),
        warnings=tuple(warnings[:50]), lines=count)


def looks_like_nccl_debug(text: str) -> bool:
    """True when ``text`` carries NCCL debug messages."""
    return bool(nccl_messages(text[: 4 * 2**20]))
