"""Names that the exported files may hold: hosts, switches, label values, file names.

Each target has its own grammar; every name the exports write passes through one of these:

* :func:`hostname`: a DNS-1123 label (RFC 1123; Kubernetes node names, Slurm node names):
  lowercase ``[a-z0-9-]``, starts with a letter, ends alphanumeric, at most 63 characters;
* :func:`slurm_name`: a Slurm switch or block name, at most 64 characters (topology.conf(5):
  "cannot be longer than 64 characters"), ``[A-Za-z0-9_.-]`` (no hostlist brackets or
  commas, which Slurm would parse as a list);
* :func:`label_value`: a Kubernetes label value, at most 63 characters matching
  ``(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?``;
* :func:`object_name`: a Kubernetes object name (DNS-1123 subdomain, at most 253);
* :func:`file_name`: a file name without path separators, dots or dashes in front.

A name too long is cut in its text part, never in its trailing number, so names stay
unique and hostlist expressions (``node[001-144]``) still compress them.
"""

from __future__ import annotations

import re

LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
SLURM_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_LABEL_VALUE = 63
MAX_HOSTNAME = 63
MAX_SLURM_NAME = 64


def _fit(stem: str, suffix: str, limit: int, strip: str) -> str:
    """``stem + suffix`` cut to ``limit`` characters in the stem; trailing ``strip``
    characters of the cut stem removed."""
    room = max(limit - len(suffix), 0)
    return stem[:room].rstrip(strip) + suffix


def hostname(stem: str, suffix: str = "") -> str:
    """A DNS-1123 label from ``stem`` (text) and ``suffix`` (e.g. ``-0007``)."""
    text = re.sub(r"[^a-z0-9-]+", "-", stem.lower()).strip("-")
    text = re.sub(r"-{2,}", "-", text)
    if not text or not text[0].isalpha():
        text = "n" + text
    out = _fit(text, suffix, MAX_HOSTNAME, "-")
    return out if DNS_LABEL.match(out) else "n" + re.sub(r"[^a-z0-9]", "", out)[-62:]


def slurm_name(stem: str, suffix: str = "") -> str:
    """A Slurm switch/block name (≤ 64 characters of ``[A-Za-z0-9_.-]``)."""
    text = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.") or "s"
    return _fit(text, suffix, MAX_SLURM_NAME, "-.") or "s"


def label_value(text: str) -> str:
    """A valid Kubernetes label value from ``text`` (cut at the front to 63 characters,
    keeping the distinguishing end)."""
    value = re.sub(r"[^A-Za-z0-9_.-]+", "-", text)
    value = value[-MAX_LABEL_VALUE:].strip("-_.")
    return value if LABEL_VALUE.match(value) else ""


def object_name(text: str) -> str:
    """A Kubernetes object name (DNS-1123 subdomain) from ``text``."""
    value = re.sub(r"[^a-z0-9.-]+", "-", text.lower())
    value = re.sub(r"\.{2,}", ".", re.sub(r"-{2,}", "-", value)).strip("-.")[:253].strip("-.")
    return value or "supernode"


def file_name(text: str) -> str:
    """A file name from ``text``: no path separators, no leading dot or dash."""
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", text).lstrip(".-")[:100]
    return value or "cluster"


def is_label_key(key: str) -> bool:
    """True when ``key`` is a valid label key: optional DNS-subdomain prefix (≤ 253) and
    ``/``, then a name of at most 63 characters."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(LABEL_NAME.match(name))
