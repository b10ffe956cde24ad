"""The epoch protocol: map versions and the fence that retires old translations.

Seed 003 §2.3: when units come and go the map changes, and an access that still uses the
old map lands in the wrong memory. Every request carries the epoch of the translation it
used. A change (:mod:`supernode.memory.membership`) runs:

1. **freeze** the moving granules at their home (requests to them wait);
2. **copy** (or restore) them to their new owners;
3. **publish and fence** atomically: epoch ``e + 1`` becomes current and every home
   refuses requests stamped with an older epoch (a NACK: the requester refetches the map
   and retries, as a TLB shootdown would);
4. **unfreeze**.

So an access either resolves through the current map or is refused: none resolves to a
stale owner (the property ``tests/test_memory_map.py`` checks). The simulator of
:mod:`supernode.memory.sim` runs the same steps message by message; its ``stale-map``
fault skips the fence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from supernode.memory.addrmap import GranuleMap


class StaleTranslation(Exception):  # noqa: N818 - a protocol answer (a NACK), not a defect
    """The request's epoch is fenced: refetch the map and retry."""

    def __init__(self, epoch: int, current: int) -> None:
        super().__init__(f"epoch {epoch} is fenced (current {current})")
        self.epoch = epoch
        self.current = current


@dataclass
class EpochTable:
    """The versions of the map and the lowest epoch homes still accept."""

    maps: list[GranuleMap] = field(default_factory=list)
    fenced_below: int = 0
    frozen: frozenset[int] = frozenset()

    @property
    def current(self) -> GranuleMap:
        """The map of the newest epoch."""
        return self.maps[-1]

    def freeze(self, granules: tuple[int, ...]) -> None:
        """Step 1: requests to ``granules`` wait until :meth:`publish`."""
        self.frozen = frozenset(granules)

    def publish(self, new_map: GranuleMap, fence: bool = True) -> None:
        """Steps 3-4: ``new_map`` becomes current; with ``fence`` (the protocol) older
        epochs are refused from now on. ``fence=False`` is the stale-map defect."""
        assert new_map.epoch == self.current.epoch + 1, "epochs advance by one"
        self.maps.append(new_map)
        if fence:
            self.fenced_below = new_map.epoch
        self.frozen = frozenset()

    def resolve(self, address: int, epoch: int) -> tuple[int, int]:
        """(unit, local address) of ``address`` for a request stamped ``epoch``; raises
        :class:`StaleTranslation` for a fenced epoch (the NACK)."""
        if epoch < self.fenced_below:
            raise StaleTranslation(epoch, self.current.epoch)
        return self.maps[epoch].resolve(address)


def start(amap: GranuleMap) -> EpochTable:
    """An epoch table whose only version is ``amap``."""
    return EpochTable([amap])
