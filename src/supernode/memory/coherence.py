"""The cost of coherence: messages a directory protocol sends per access, and their price.

One line's directory (:class:`LineDirectory`) applies the textbook transitions (Sorin,
Hill & Wood, 'A Primer on Memory Consistency and Cache Coherence', 2nd ed. 2020, ch. 8:
directory MSI/MESI/MOESI) and counts the messages of each access:

* read hit, write hit in M (or E: the silent upgrade of MESI/MOESI): 0;
* read miss with no owner: GetS + Data = 2 (MESI/MOESI grant E when no one else holds it);
* read miss with an owner in M/E: GetS + Fwd + Data to the reader, plus (MESI) the
  owner's write-back to the home = 4; MOESI keeps the dirty line in O at the owner = 3;
* write without M, ``invalidate``: GetM + grant = 2, + Fwd when another unit owns the
  line, + Inv and InvAck per other sharer: ``2 + 2 (s - 1)`` for ``s`` holders - never
  fewer than ``s - 1`` messages (``tests/test_memory_coherence.py``);
* write, ``update``: the write goes to the home (Upd + Ack = 2) and the home updates every
  other sharer (Upd + Ack each): the copies stay valid, reads keep hitting.

Those are the counts of a directory that *forwards* (``forwarding="direct"``: the owner
sends the data straight to the requester, three hops). With ``forwarding="home"`` every
transfer from an owner goes through the home instead, as the protocol simulator
(:mod:`.sim`) runs it: the home recalls the line (Recall), the owner returns it
(RecallData, with the data) and the home sends it on (Data): a read of a line owned
elsewhere is 4 messages, 2 of them data, in every protocol (a MOESI owner of a dirty line
keeps it in O and stays the owner, so the next reader is recalled again), and a write
adds Recall + RecallData for another owner (2 + 2 + 2 per sharer), 4 trips.
``tests/test_memory_protocol.py`` checks the simulator's message count against this.

:func:`sharing_cost` drives it with a seeded access stream for a sharing pattern and
prices the messages on one fabric tier (control messages of ``header_bytes``, data
messages of ``header + line``; a miss waits 2 one-way trips, 3 with a forward, 4 with
invalidations).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from supernode.errors import InputError


class LineDirectory:
    """One line's directory state: its owner (M, E or O) and its sharers (S)."""

    def __init__(self, protocol: str = "mesi", policy: str = "invalidate",
                 forwarding: str = "direct") -> None:
        if protocol not in ("msi", "mesi", "moesi"):
            raise InputError("protocol", f"{protocol!r}: one of msi, mesi, moesi")
        if policy not in ("invalidate", "update"):
            raise InputError("policy", f"{policy!r}: one of invalidate, update")
        if forwarding not in ("direct", "home"):
            raise InputError("forwarding", f"{forwarding!r}: one of direct, home")
        self.protocol = protocol
        self.policy = policy
        self.forwarding = forwarding
        self.owner: int | None = None
        self.owner_state = ""          # M, E or O
        self.sharers: set[int] = set()

    def holders(self) -> set[int]:
        """Units holding a valid copy."""
        return self.sharers | ({self.owner} if self.owner is not None else set())

    def access(self, unit: int, write: bool) -> tuple[int, int, int]:
        """Apply one access: (messages, data messages among them, one-way trips waited)."""
        if not write:
            return self._read(unit)
        return self._write(unit) if self.policy == "invalidate" else self._update(unit)

    def _read(self, unit: int) -> tuple[int, int, int]:
        if unit in self.holders():
            return 0, 0, 0
        if self.owner is None:
            if not self.sharers and self.protocol != "msi":
                self.owner, self.owner_state = unit, "E"
            else:
                self.sharers.add(unit)
            return 2, 1, 2
        owner, state = self.owner, self.owner_state
        self.sharers.add(unit)
        home = self.forwarding == "home"
        if self.protocol == "moesi" and state in ("M", "O"):
            self.owner_state = "O"            # the dirty copy stays with the owner
            return (4, 2, 4) if home else (3, 1, 3)
        self.sharers.add(owner)
        self.owner, self.owner_state = None, ""
        if home:
            return 4, 2, 4                    # GetS, Recall, RecallData, Data
        return (4, 2, 3) if state == "M" else (3, 1, 3)

    def _write(self, unit: int) -> tuple[int, int, int]:
        if self.owner == unit and self.owner_state in ("M", "E") and not self.sharers:
            self.owner_state = "M"
            return 0, 0, 0
        others = self.holders() - {unit}
        messages, data, trips = 2, 1, 2
        if self.owner is not None and self.owner != unit:
            if self.forwarding == "home":     # Recall + RecallData through the home
                messages, data, trips = messages + 2, data + 1, 4
            else:
                messages += 1                 # forward to the owner, which sends the data
                trips = 3
        sharers = others - ({self.owner} if self.owner is not None else set())
        if sharers:
            messages += 2 * len(sharers)      # Inv and InvAck per sharer
            trips = 4
        self.owner, self.owner_state, self.sharers = unit, "M", set()
        return messages, data, trips

    def _update(self, unit: int) -> tuple[int, int, int]:
        others = self.holders() - {unit}
        self.sharers = self.holders() | {unit}
        self.owner, self.owner_state = None, ""
        return 2 + 2 * len(others), 1 + len(others), 4 if others else 2


@dataclass(frozen=True)
class SharingCost:
    """Per access, for a sharing pattern on one tier."""

    sharers: int
    write_fraction: float
    locality: float
    messages_per_access: float
    messages_per_write: float
    bytes_per_access: float
    latency_s_per_access: float
    bandwidth_bytes_per_s: float      # fabric traffic at ``accesses_per_s``

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return dict(self.__dict__)


def sharing_cost(sharers: int, write_fraction: float, line_bytes: int = 128,
                 region_bytes: int = 1 << 20, locality: float = 0.0,
                 protocol: str = "mesi", policy: str = "invalidate",
                 one_way_s: float = 1e-6, header_bytes: int = 16,
                 accesses_per_s: float = 1e6, samples: int = 20_000,
                 seed: int = 0, forwarding: str = "direct") -> SharingCost:
    """Mean messages, bytes and waiting time per access when ``sharers`` units access a
    shared region of ``region_bytes`` (lines of ``line_bytes``) uniformly, a
    ``write_fraction`` of them writes; a ``locality`` share of the accesses go to the
    unit's private data instead (no coherence messages); ``forwarding`` as
    :class:`LineDirectory`. Seeded."""
    if sharers < 1:
        raise InputError("sharers", f"must be >= 1, got {sharers}")
    if not (0 <= write_fraction <= 1 and 0 <= locality <= 1):
        raise InputError("write_fraction", "write_fraction and locality are in [0, 1]")
    lines = max(1, region_bytes // line_bytes)
    rng = random.Random(seed)
    dirs: dict[int, LineDirectory] = {}
    messages = data = trips = writes = write_messages = 0
    for _ in range(samples):
        if rng.random() < locality:
            continue
        line = rng.randrange(lines)
        d = dirs.get(line)
        if d is None:
            d = dirs[line] = LineDirectory(protocol, policy, forwarding)
        write = rng.random() < write_fraction
        m, dm, t = d.access(rng.randrange(sharers), write)
        messages, data, trips = messages + m, data + dm, trips + t
        if write:
            writes += 1
            write_messages += m
    per = 1 / samples
    nbytes = (messages * header_bytes + data * line_bytes) * per
    return SharingCost(sharers, write_fraction, locality, messages * per,
                       write_messages / writes if writes else 0.0, nbytes,
                       trips * per * one_way_s, nbytes * accesses_per_s)
