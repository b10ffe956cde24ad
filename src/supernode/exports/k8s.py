"""Kubernetes: node labels (NVIDIA topograph names by default), Kueue and Volcano objects.

* Labels. topograph v1.0 (``docs/reference/node-labels.md``): ``fabric.topograph.run/tier-N``
  for the switch tiers, tier 0 nearest the node; ``accelerator.topograph.run/domain`` for
  the NVLink-class domain and ``accelerator.topograph.run/sub-domain`` for a part of it
  (here: a rack, when a domain spans racks). ``nvidia-legacy`` is topograph's v0.x names
  ``network.topology.nvidia.com/{accelerator,leaf,spine,core}``. Custom keys: fabric keys
  closest first (only those tiers are labelled, as topograph's ``fabricLabels``) and an
  accelerator key. Every node also gets the flavor label (default
  ``supernode-cluster=<cluster>``; an unprefixed key is private to the user) that the Kueue
  ``ResourceFlavor`` selects.
* Kueue Topology Aware Scheduling (``kueue.x-k8s.io/v1beta2``): a ``Topology`` whose
  ``spec.levels`` run from the coarsest nested level to ``kubernetes.io/hostname``, and a
  ``ResourceFlavor`` naming it in ``spec.topologyName`` with ``spec.nodeLabels`` (required
  when a topology is set).
* Volcano (``topology.volcano.sh/v1alpha1``): one cluster-scoped ``HyperNode`` per value of
  each nested level; tier 1 holds nodes (``exactMatch`` by name), higher tiers hold the
  HyperNodes below; lower tier = faster network.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from supernode.errors import InputError
from supernode.exports.model import ExportModel, Level
from supernode.exports.names import is_label_key, label_value, object_name
from supernode.spec.documents import dump_yaml

HOSTNAME_LABEL = "kubernetes.io/hostname"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
VOLCANO_API = "topology.volcano.sh/v1alpha1"


@dataclass(frozen=True)
class LabelScheme:
    """Label keys: the accelerator domain, its sub-domain, fabric tiers closest first
    (``None``: ``fabric_pattern`` with the tier number, unlimited)."""

    accelerator: str
    sub_domain: str | None
    fabric: tuple[str, ...] | None
    fabric_pattern: str = "fabric.topograph.run/tier-{tier}"

    def fabric_key(self, tier: int) -> str | None:
        """Key of fabric tier ``tier`` (None when the scheme does not label it)."""
        if self.fabric is None:
            return self.fabric_pattern.format(tier=tier)
        return self.fabric[tier] if tier < len(self.fabric) else None

    def key(self, level: Level) -> str | None:
        """Key of a locality level (None when not labelled)."""
        if level.kind == "fabric":
            return self.fabric_key(level.tier)
        if level.kind == "domain":
            return self.accelerator
        if level.kind == "sub-domain":
            return self.sub_domain
        return HOSTNAME_LABEL


SCHEMES = {
    "topograph": LabelScheme("accelerator.topograph.run/domain",
                             "accelerator.topograph.run/sub-domain", None),
    "nvidia-legacy": LabelScheme("network.topology.nvidia.com/accelerator", None,
                                 ("network.topology.nvidia.com/leaf",
                                  "network.topology.nvidia.com/spine",
                                  "network.topology.nvidia.com/core")),
}


def label_scheme(name: str, fabric_keys: list[str] | None = None,
                 accelerator_key: str | None = None) -> LabelScheme:
    """The named scheme, with custom fabric keys (closest first) and accelerator key."""
    if name not in SCHEMES:
        raise InputError("--labels", f"unknown scheme {name!r}; known: {', '.join(SCHEMES)}")
    base = SCHEMES[name]
    for key, option in [*((k, "--fabric-label") for k in fabric_keys or ()),
                        *(((accelerator_key, "--accelerator-label"),) if accelerator_key
                          else ())]:
        if not is_label_key(key):
            raise InputError(option, f"{key!r} is not a Kubernetes label key (optional "
                                     "DNS-subdomain prefix and '/', then at most 63 of "
                                     "[A-Za-z0-9-_.], starting and ending alphanumeric)")
    return LabelScheme(accelerator_key or base.accelerator, base.sub_domain,
                       tuple(fabric_keys) if fabric_keys else base.fabric)


def parse_flavor_label(text: str | None, model: ExportModel) -> tuple[str, str]:
    """``KEY=VALUE`` of the flavor label; default ``supernode-cluster=<cluster>``."""
    if text is None:
        return "supernode-cluster", label_value(model.cluster.name) or "cluster"
    key, sep, value = text.partition("=")
    if not sep or not is_label_key(key) or label_value(value) != value or not value:
        raise InputError("--flavor-label", f"{text!r} must be KEY=VALUE with a valid label key "
                                           "and a label value (≤ 63 of [A-Za-z0-9-_.])")
    return key, value


def node_labels(model: ExportModel, scheme: LabelScheme, flavor: tuple[str, str]
                ) -> dict[str, dict[str, str]]:
    """Labels of every node: ``{node: {key: value}}`` (values valid label values)."""
    levels = [*model.fabric_levels(), *model.domain_levels()]
    out: dict[str, dict[str, str]] = {}
    for i, node in enumerate(model.nodes):
        labels = {}
        for level in levels:
            key = scheme.key(level)
            if key is not None:
                labels[key] = label_value(level.values[i])
        labels[flavor[0]] = flavor[1]
        out[node] = labels
    return out


def node_labels_yaml(labels: dict[str, dict[str, str]]) -> str:
    """A ``v1`` ``List`` of ``Node`` objects carrying only the labels."""
    doc = {"apiVersion": "v1", "kind": "List",
           "items": [{"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": node, "labels": values}}
                     for node, values in labels.items()]}
    return ("# Node labels written by `supernode export` (apply with label-nodes.sh, or merge "
            "into your node objects)\n" + dump_yaml(doc))


def label_script(labels: dict[str, dict[str, str]]) -> str:
    """A shell script of ``kubectl label node ... --overwrite`` commands."""
    lines = ["#!/bin/sh", "# Written by `supernode export`: label every node with its place "
             "in the topology.", "set -e"]
    for node, values in labels.items():
        pairs = " ".join(shlex.quote(f"{k}={v}") for k, v in values.items())
        lines.append(f"kubectl label node {shlex.quote(node)} {pairs} --overwrite")
    return "\n".join(lines) + "\n"


def kueue_objects(model: ExportModel, scheme: LabelScheme, flavor: tuple[str, str]
                  ) -> list[dict]:
    """The Kueue ``Topology`` and ``ResourceFlavor`` of the cluster."""
    keys = []
    for level in model.levels():
        key = scheme.key(level)
        if key is not None and key not in keys:
            keys.append(key)
    name = object_name(f"{model.cluster.name}-topology")
    topology = {"apiVersion": KUEUE_API, "kind": "Topology", "metadata": {"name": name},
                "spec": {"levels": [{"nodeLabel": k} for k in keys]}}
    flavour = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor",
               "metadata": {"name": object_name(f"{model.cluster.name}-tas")},
               "spec": {"nodeLabels": {flavor[0]: flavor[1]}, "topologyName": name}}
    return [topology, flavour]


def kueue_yaml(objects: list[dict], scheme: LabelScheme, model: ExportModel) -> str:
    """The Kueue objects as a multi-document YAML, with how jobs ask for a level."""
    keys = [lv["nodeLabel"] for lv in objects[0]["spec"]["levels"]]
    domain = [scheme.key(lv) for lv in model.levels() if lv.kind == "domain"]
    level = domain[0] if domain else (keys[-2] if len(keys) > 1 else keys[-1])
    head = ("# Kueue Topology Aware Scheduling objects written by `supernode export`.\n"
            f"# A job keeps its pods inside one level with the pod-template annotation\n"
            f"#   kueue.x-k8s.io/podset-required-topology: {level}\n")
    return head + dump_yaml(*objects)


TIER_NAMES = {"domain": "supernode", "sub-domain": "rack", "host": "node"}


def volcano_hypernodes(model: ExportModel) -> list[dict]:
    """One ``HyperNode`` per value of each nested level above the node, tier 1 first."""
    levels = model.levels()[:-1][::-1]
    out: list[dict] = []
    below: tuple[str, ...] | None = None
    for tier, level in enumerate(levels, start=1):
        members: dict[str, list[str]] = {}
        for i, value in enumerate(level.values):
            child = model.nodes[i] if below is None else below[i]
            members.setdefault(value, [])
            if child not in members[value]:
                members[value].append(child)
        kind = "Node" if below is None else "HyperNode"
        tier_name = TIER_NAMES.get(level.kind, _fabric_name(model, level))
        for value, children in members.items():
            out.append({"apiVersion": VOLCANO_API, "kind": "HyperNode",
                        "metadata": {"name": object_name(value)},
                        "spec": {"tier": tier, "tierName": tier_name,
                                 "members": [{"type": kind, "selector": {"exactMatch": {
                                     "name": c if kind == "Node" else object_name(c)}}}
                                     for c in children]}})
        below = level.values
    if not out:
        model.notes.append("no locality level above the node (one host): no Volcano "
                           "HyperNodes")
    return out


def _fabric_name(model: ExportModel, level: Level) -> str:
    tiers = model.hierarchy.fabric_tiers
    if level.tier == 0:
        return "port-group"
    if tiers == 3 and level.tier == 1:
        return "pod"
    return "core" if tiers == 3 else "spine"


def volcano_yaml(objects: list[dict]) -> str:
    """The HyperNodes as a multi-document YAML."""
    head = ("# Volcano HyperNodes written by `supernode export` (tier 1 = fastest). Jobs: "
            "spec.networkTopology: {mode: hard, highestTierAllowed: 1}\n")
    return head + dump_yaml(*objects)
