"""Public names of a package imported from their modules when first asked for (PEP 562).

A package's ``__init__`` that imports every module makes a command needing one of them
pay for all (``plan`` needs the topology's fat-tree sizing, not its graph builders and
metrics). :func:`lazy_names` gives the package a module ``__getattr__`` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_names(package: str, namespace: dict[str, Any], homes: dict[str, str]
               ) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``homes``
    (public name -> submodule) from its submodule on first use and keeps it in
    ``namespace`` (the package's globals). A name that is also a submodule's name must
    be imported eagerly instead: once that submodule is loaded, the attribute is it."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return __getattr__
