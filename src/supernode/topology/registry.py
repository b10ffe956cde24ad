"""A registry of named extension points that refuses duplicate names (docs/architecture.md)."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Generic, TypeVar

from supernode.errors import InputError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named entries of one kind (topology kinds, ...); a second entry of a name is refused."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name``; raise ``ValueError`` if the name is taken."""
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def get(self, name: str, path: str = "") -> T:
        """The entry called ``name``, or :class:`InputError` at ``path`` naming the known ones."""
        if name in self._entries:
            return self._entries[name]
        close = difflib.get_close_matches(name, list(self._entries), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(path, f"unknown {self.what} {name!r}{hint} "
                               f"(known: {', '.join(sorted(self._entries))})")

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)
