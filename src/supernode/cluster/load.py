"""Load a cluster from a file path or a bundled preset name, all the way to SI."""

from __future__ import annotations

import difflib
from pathlib import Path

from supernode.catalog import cluster_presets
from supernode.cluster.resolve import resolve_cluster
from supernode.errors import InputError
from supernode.inputs import check_path_text, exists
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import read_document, validate_document
from supernode.spec.resolved import Cluster


def load_cluster_spec(name_or_path: str | Path) -> ClusterSpec:
    """Read and validate a cluster document (a preset name or a YAML/JSON path)."""
    presets = cluster_presets()
    path = Path(name_or_path)
    if str(name_or_path) in presets and not exists(path):
        path = presets[str(name_or_path)]
    elif not exists(path):
        check_path_text(name_or_path)  # a name the OS cannot take says why
        close = difflib.get_close_matches(str(name_or_path), list(presets), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(
            "", f"no such file or preset{hint} (presets: {', '.join(sorted(presets))})",
            source=str(name_or_path),
        )
    return validate_document(read_document(path), ClusterSpec, source=str(path))


def load_cluster(name_or_path: str | Path) -> Cluster:
    """Load, validate and resolve a cluster (preset name or file) into the SI model."""
    spec = load_cluster_spec(name_or_path)
    try:
        return resolve_cluster(spec)
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=str(name_or_path)) from None
