"""Importers: turn what real machines report into cluster-file blocks.

Each importer is a pure function from tool output (text) to a document fragment that
validates against the cluster schema (:mod:`supernode.spec.cluster`), plus notes for
the user. Bad input is an :class:`~supernode.errors.InputError` naming the line.
"""
