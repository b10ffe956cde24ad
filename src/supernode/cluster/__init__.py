"""A loaded cluster: read from a file or a bundled preset, resolved against the catalog,
checked for consistency, and grown to hold a job.

This package sits above :mod:`supernode.spec` (the documents), :mod:`supernode.catalog`
(the parts they name) and :mod:`supernode.topology` (whose fat-tree sizing the checks
use); every model package below the planner reads the :class:`~supernode.spec.resolved.
Cluster` it returns.
"""
