"""Exports of a cluster's topology to the tools that schedule and run on it.

``export_files(cluster, formats, options)`` returns ``{file name: text}`` for the formats
of :data:`EXPORT_FORMATS` (a registry that refuses duplicate names):

| format | files | for |
|---|---|---|
| ``slurm-tree`` | ``topology.conf`` | Slurm ``TopologyPlugin=topology/tree`` |
| ``slurm-block`` | ``topology.conf`` | Slurm ``topology/block`` (NVL72-style domains) |
| ``slurm-yaml`` | ``topology.yaml`` | Slurm ≥ 25.05: tree and block topologies |
| ``k8s-labels`` | ``node-labels.yaml``, ``label-nodes.sh`` | node labels (topograph v1.0) |
| ``kueue`` | ``kueue-topology.yaml`` | Kueue ``Topology`` + ``ResourceFlavor`` |
| ``volcano`` | ``volcano-hypernodes.yaml`` | Volcano ``HyperNode`` objects |
| ``nccl-xml`` | ``nccl-topo-<host>.xml`` | ``NCCL_TOPO_FILE`` of the host type |

The hierarchy written is the placement simulator's (:mod:`supernode.topology.hierarchy`);
names are sanitised for each target (:mod:`supernode.exports.names`). See
``docs/exports.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from supernode.errors import InputError
from supernode.exports import k8s, nccl_xml, slurm
from supernode.exports.model import ExportModel, export_model
from supernode.spec.resolved import Cluster


@dataclass(frozen=True)
class ExportOptions:
    """Choices of the exports: node names, label scheme and keys, the flavor label."""

    node_prefix: str | None = None
    labels: str = "topograph"
    fabric_labels: tuple[str, ...] = ()
    accelerator_label: str | None = None
    flavor_label: str | None = None


@dataclass
class ExportResult:
    """Files per format, and what a reader should know."""

    files: dict[str, dict[str, str]]
    model: ExportModel
    notes: list[str] = field(default_factory=list)

    def to_dict(self, written: dict[str, str] | None = None) -> dict:
        """``{"cluster", "nodes", "switches", "formats": [{format, files}], "notes"}``."""
        return {"cluster": self.model.cluster.name, "nodes": len(self.model.nodes),
                "switches": [s.name for s in self.model.tree()],
                "formats": [{"format": f, "files": [written.get(n, n) if written else n
                                                    for n in names]}
                            for f, names in self.files.items()],
                "notes": self.notes}


Writer = Callable[[ExportModel, ExportOptions], dict[str, str]]


class ExportRegistry:
    """Export formats by name; registering a name twice is an error."""

    def __init__(self) -> None:
        self._writers: dict[str, Writer] = {}

    def register(self, name: str) -> Callable[[Writer], Writer]:
        """Decorator adding a writer under ``name``."""
        def add(writer: Writer) -> Writer:
            """Register ``writer`` under the name."""
            if name in self._writers:
                raise ValueError(f"export format {name!r} is already registered")
            self._writers[name] = writer
            return writer
        return add

    def names(self) -> list[str]:
        """Registered formats, in registration order."""
        return list(self._writers)

    def get(self, name: str) -> Writer:
        """The writer of ``name``; InputError when unknown."""
        if name not in self._writers:
            raise InputError("--format", f"unknown format {name!r}; known: "
                                         f"{', '.join(self._writers)}, all")
        return self._writers[name]


EXPORT_FORMATS = ExportRegistry()
#: What ``--format all`` means (slurm-block also writes topology.conf: export it alone).
ALL_FORMATS = ("slurm-tree", "slurm-yaml", "k8s-labels", "kueue", "volcano", "nccl-xml")


@EXPORT_FORMATS.register("slurm-tree")
def _slurm_tree(model, options):
    return {"topology.conf": slurm.topology_conf_tree(model)}


@EXPORT_FORMATS.register("slurm-block")
def _slurm_block(model, options):
    return {"topology.conf": slurm.topology_conf_block(model)}


@EXPORT_FORMATS.register("slurm-yaml")
def _slurm_yaml(model, options):
    return {"topology.yaml": slurm.topology_yaml(model)}


def _labels(model, options):
    scheme = k8s.label_scheme(options.labels, list(options.fabric_labels),
                              options.accelerator_label)
    return scheme, k8s.parse_flavor_label(options.flavor_label, model)


@EXPORT_FORMATS.register("k8s-labels")
def _k8s_labels(model, options):
    scheme, flavor = _labels(model, options)
    labels = k8s.node_labels(model, scheme, flavor)
    return {"node-labels.yaml": k8s.node_labels_yaml(labels),
            "label-nodes.sh": k8s.label_script(labels)}


@EXPORT_FORMATS.register("kueue")
def _kueue(model, options):
    scheme, flavor = _labels(model, options)
    return {"kueue-topology.yaml": k8s.kueue_yaml(k8s.kueue_objects(model, scheme, flavor),
                                                  scheme, model)}


@EXPORT_FORMATS.register("volcano")
def _volcano(model, options):
    return {"volcano-hypernodes.yaml": k8s.volcano_yaml(k8s.volcano_hypernodes(model))}


@EXPORT_FORMATS.register("nccl-xml")
def _nccl(model, options):
    return {nccl_xml.xml_file_name(model.cluster): nccl_xml.nccl_topology_xml(model.cluster)}


def resolve_formats(formats: list[str]) -> list[str]:
    """The formats asked for (``all`` expanded), each once; InputError for unknown names or
    two formats writing the same file."""
    out: list[str] = []
    for name in formats:
        for f in (ALL_FORMATS if name == "all" else (name,)):
            EXPORT_FORMATS.get(f)
            if f not in out:
                out.append(f)
    if {"slurm-tree", "slurm-block"} <= set(out):
        raise InputError("--format", "slurm-tree and slurm-block both write topology.conf: "
                                     "export them to different folders")
    return out


def export_files(cluster: Cluster, formats: list[str], options: ExportOptions | None = None
                 ) -> ExportResult:
    """Every file of ``formats`` for ``cluster`` (nothing is written here)."""
    options = options or ExportOptions()
    model = export_model(cluster, options.node_prefix)
    files = {f: EXPORT_FORMATS.get(f)(model, options) for f in resolve_formats(formats)}
    return ExportResult(files, model, list(dict.fromkeys(model.notes)))


__all__ = ["ALL_FORMATS", "EXPORT_FORMATS", "ExportOptions", "ExportResult", "export_files",
           "resolve_formats"]
