"""Which efficiency table a link is costed with: its generation and vendor.

Scale-up links are named by the catalog's ``scale_up_name`` (NVLink 3/4/5, Infinity
Fabric xGMI, ICI, NeuronLink, Unified Bus, an integrated Ethernet); a part the catalog does
not describe is known by its id (``data/catalog/scale_up_hints.yaml``: ``h800`` is on
NVLink 4) or borrows the NVLink generation nearest in bandwidth, and says so. Scale-out
links are InfiniBand (HDR, NDR, XDR by line rate) or RoCE (Ethernet switches); a
validation case does not name its fabric, so NVIDIA parts are taken to sit on InfiniBand
and AMD parts on RoCE (their platforms ship with Ethernet NICs: Pensando Pollara,
Broadcom Thor2), an assumption the docs state.
"""

from __future__ import annotations

from supernode.units import GBIT_PER_S, GBYTE_PER_S

#: Tables whose values are borrowed from NVLink 4 (no public measurement of the link).
BORROWED_TABLES = frozenset({"ici", "neuronlink", "ub", "roce_scale_up"})
#: Fragments of the catalog's scale_up_name -> (table, tier kind), first match wins.
_LINK_NAMES: tuple[tuple[str, str, str], ...] = (
    ("nvlink 5", "nvlink5", "switch"), ("nvlink 4", "nvlink4", "switch"),
    ("nvlink 3", "nvlink3", "switch"), ("xgmi", "xgmi", "full_mesh"),
    ("infinity fabric", "xgmi", "full_mesh"), ("ici", "ici", "torus"),
    ("neuronlink", "neuronlink", "torus"), ("unified bus", "ub", "switch"),
    ("roce", "roce", "switch"),
)


def _catalog_link(accelerator: str | None) -> tuple[str | None, str | None]:
    """(scale_up_name, vendor) of a catalog accelerator id; Nones when unknown."""
    if not accelerator:
        return None, None
    from supernode.catalog import accelerators

    spec = accelerators().get(accelerator.lower())
    return (spec.scale_up_name, spec.vendor) if spec is not None else (None, None)


def scale_up_link(accelerator: str | None, bandwidth_bytes_per_s: float,
                  link_name: str | None = None) -> tuple[str, str, bool]:
    """``(table, kind, borrowed)`` of a scale-up domain.

    By the link name (catalog ``scale_up_name``, looked up from the accelerator id when
    not given), else the id, else the NVLink generation nearest in per-GPU bandwidth
    (NVLink 3: 300, 4: 450, 5: 900 GB/s per direction). ``borrowed``: no public
    measurement calibrates that link (the nearest NVLink generation, or a table of
    :data:`BORROWED_TABLES`, whose values are NVLink 4's).
    """
    name = (link_name or _catalog_link(accelerator)[0] or "").lower()
    for fragment, table, kind in _LINK_NAMES:
        if fragment in name:
            return table, kind, table in BORROWED_TABLES
    key = (accelerator or "").lower()
    from supernode.catalog import scale_up_hints

    for hint in scale_up_hints():  # parts given by id only (a sourced catalog file)
        if hint.fragment in key:
            return hint.table, ("full_mesh" if hint.table == "xgmi" else "switch"), False
    if bandwidth_bytes_per_s >= 675 * GBYTE_PER_S:
        return "nvlink5", "switch", True
    return ("nvlink4" if bandwidth_bytes_per_s >= 375 * GBYTE_PER_S else "nvlink3"), "switch", True


def scale_up_efficiency_name(accelerator: str | None, bandwidth_bytes_per_s: float) -> str:
    """Efficiency table of a scale-up domain (see :func:`scale_up_link`)."""
    return scale_up_link(accelerator, bandwidth_bytes_per_s)[0]


def scale_out_efficiency_name(nic_bytes_per_s: float, ethernet: bool = False) -> str:
    """Scale-out table: ``roce`` on Ethernet (``roce_800g`` from 600 Gb/s per GPU), else
    the InfiniBand generation of the line rate per NIC port (HDR 200, NDR 400, XDR 800
    Gb/s)."""
    if ethernet:
        return "roce_800g" if nic_bytes_per_s >= 600 * GBIT_PER_S else "roce"
    if nic_bytes_per_s >= 600 * GBIT_PER_S:
        return "infiniband_xdr"
    return "infiniband_ndr" if nic_bytes_per_s >= 300 * GBIT_PER_S else "infiniband_hdr"


def vendor_uses_ethernet(accelerator: str | None) -> bool:
    """Assumption for validation systems: AMD Instinct platforms use RoCE NICs."""
    vendor = _catalog_link(accelerator)[1] or ""
    key = (accelerator or "").lower()
    return vendor.lower() == "amd" or key.startswith("mi")
