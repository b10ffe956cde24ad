"""Regressions: bad cluster files the loader mishandled, each with the fix it needs.

Each test's docstring says what happens today and where the fix goes (spec/loader.py,
spec/base.py, spec/cluster.py, spec/consistency.py, spec/hardware.py, topology/sizing.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_spec_errors import (
    MAX_LINES,
    PRESET_TEXT,
    domain,
    drop,
    load_document,
    load_text,
    mutate,
    put,
)

from supernode.cluster.load import load_cluster_spec


def test_non_finite_numbers_refused(tmp_path: Path) -> None:
    """Regression: ``.inf`` passes ``gt=0``. Fix: ``allow_inf_nan=False`` on StrictModel."""
    for path, value in [("host.nics.speed_gbit_per_s", float("inf")),
                        ("scale_out.oversubscription", [float("inf")]),
                        ("host.power_kw", "1e999")]:
        error = load_document(tmp_path, mutate(put(path, value)))
        assert error.path.startswith(path) and "finite" in error.message, error.render()


def test_huge_integer_literal(tmp_path: Path) -> None:
    """Regression: int() of a >4300-digit literal raises ValueError inside PyYAML / json."""
    for suffix, text in [(".yaml", PRESET_TEXT.replace("size: 8", "size: " + "9" * 5000)),
                         (".json", '{"name": "x", "supernodes": ' + "9" * 5000 + "}")]:
        error = load_text(tmp_path, text, suffix=suffix)
        assert "digits" in error.message, error.render()


def test_date_literals_are_text(tmp_path: Path) -> None:
    """Regression: PyYAML built ``2001-13-45`` as a date (``datetime`` raised ValueError) and
    ``2001-02-03`` as a ``date`` that JSON output cannot hold. Dates are text now (JSON's
    value types only, as YAML 1.2's core schema)."""
    for name in ("2001-13-45", "2001-02-03"):
        path = tmp_path / "cluster.yaml"
        path.write_text(PRESET_TEXT.replace("name: su", f"name: {name}"), encoding="utf-8")
        assert load_cluster_spec(path).name == name


def test_union_field_path_has_no_type_tag(tmp_path: Path) -> None:
    """Regression: the path is ``host.accelerator.str`` (a pydantic union branch tag)."""
    error = load_document(tmp_path, mutate(put("host.accelerator", 5)))
    assert error.path == "host.accelerator", error.render()


def test_bad_inline_accelerator_names_the_missing_field(tmp_path: Path) -> None:
    """Regression: a mapping for ``str | AcceleratorSpec`` reports the str branch
    ("Input should be a valid string") instead of the inline definition's missing field."""
    error = load_document(tmp_path, mutate(put("host.accelerator", {"name": "x"})))
    assert error.path.startswith("host.accelerator."), error.render()
    assert "required" in error.message


def test_oversubscription_path(tmp_path: Path) -> None:
    """Regression: model-level validators report the parent (``scale_out``) and prefix
    'Value error, '. Fix: field validators / a FieldError carrying the field name."""
    error = load_document(tmp_path, mutate(put("scale_out.oversubscription", [0.5])))
    assert error.path == "scale_out.oversubscription", error.render()
    assert not error.message.startswith("Value error")


@pytest.mark.parametrize("change,path", [
    (domain(kind="torus", size=64), "scale_up.dims"),
    (domain(kind="hybrid", size=64, switch="nvswitch-gen3"), "scale_up.hybrid"),
    (domain(kind="none", size=8), "scale_up.size"),
])
def test_scale_up_kind_needs_field_path(tmp_path: Path, change: Any, path: str) -> None:
    """Regression: ScaleUpSpec._kind_fields errors are reported at ``scale_up``."""
    error = load_document(tmp_path, mutate(change))
    assert error.path == path, error.render()


def test_switch_chips_missing_path(tmp_path: Path) -> None:
    """Regression: reported at ``scale_up.switch`` though the switch is given."""
    error = load_document(tmp_path, mutate(drop("scale_up.switch_chips")))
    assert error.path == "scale_up.switch_chips", error.render()


def test_empty_dims(tmp_path: Path) -> None:
    """Regression: message reads ' = 1 accelerators'. Fix: ``min_length=1`` on dims."""
    error = load_document(tmp_path, mutate(domain(kind="torus", size=8, dims=[])))
    assert error.path == "scale_up.dims" and "at least 1" in error.message, error.render()


def test_gigantic_domain_blames_the_domain(tmp_path: Path) -> None:
    """Regression: blamed on ``supernodes`` (which is 1)."""
    error = load_document(tmp_path, mutate(domain(kind="torus", size=10**9,
                                                     dims=[1000, 1000, 1000])))
    assert error.path == "scale_up.size" and "1,048,576" in error.message, error.render()


@pytest.mark.parametrize("field,value", [
    ("group_dims", [-2, -2, 2]),
])
def test_hybrid_group_dims_positive(tmp_path: Path, field: str, value: Any) -> None:
    """Regression: negative group dims that multiply to the group size are accepted."""
    hybrid = {"group_kind": "torus", "group_size": 8, "group_links_per_accelerator": 6,
              "uplinks_per_accelerator": 12, field: value}
    change = domain(kind="hybrid", size=64, switch="nvswitch-gen3", hybrid=hybrid)
    error = load_document(tmp_path, mutate(change))
    assert error.path.startswith("scale_up.hybrid.group_dims"), error.render()


def test_dim_bandwidth_positive(tmp_path: Path) -> None:
    """Regression: negative per-dimension bandwidths are accepted."""
    change = domain(kind="mesh", size=16, dims=[4, 4], dim_link_bandwidth_gbyte_per_s=[-1, 0])
    error = load_document(tmp_path, mutate(change))
    assert error.path.startswith("scale_up.dim_link_bandwidth_gbyte_per_s"), error.render()


def test_dim_bandwidth_needs_one_value_per_dim(tmp_path: Path) -> None:
    """Regression: accepted for kind nvswitch (only grids check it), then
    ``ScaleUp.bandwidth_per_accelerator_bytes_per_s`` raises ValueError from ``zip(strict)``."""
    error = load_document(tmp_path, mutate(_dims_with_one_bandwidth))
    assert error.path == "scale_up.dim_link_bandwidth_gbyte_per_s", error.render()


def _dims_with_one_bandwidth(document: dict[str, Any]) -> None:
    document["scale_up"].update(dims=[2, 4], dim_link_bandwidth_gbyte_per_s=[25])


def test_duplicate_keys_refused(tmp_path: Path) -> None:
    """Regression: PyYAML keeps the last of two equal keys silently."""
    error = load_text(tmp_path, PRESET_TEXT + "supernodes: 4\n")
    assert "'supernodes' is given twice" in error.message, error.render()


# --- hangs: huge counts must be refused (or sized) quickly --------------------------------


def test_huge_nic_count_is_fast(tmp_path: Path) -> None:
    """Regression: ``sizing._radix_needed`` walks radices 2, 4, 6, ... one by one (2 s for
    10**6 NICs, forever for 10**12). Fix: bound NicSpec.count and bisect the radix."""
    document = mutate(lambda d: (d["host"]["nics"].update(count=10**6),
                                 d["scale_out"].update(tiers=1)))
    error = load_document(tmp_path, document, max_lines=MAX_LINES // 4)
    assert error.path in ("host.nics.count", "scale_out.tiers"), error.render()


def test_prime_half_radix_is_fast(tmp_path: Path) -> None:
    """Regression: ``sizing._smallest_even_divisor`` counts up to a prime uplink count.
    Fix: bound SwitchSpec.radix_ports (``le=4096``)."""
    switch = {"name": "big", "radix_ports": 2 * (10**9 + 7), "port_speed_gbit_per_s": 400}
    document = mutate(lambda d: (d.update(switches=[switch]),
                                 d["scale_out"].update(switch="big")))
    error = load_document(tmp_path, document, max_lines=MAX_LINES // 4)
    assert error.path == "switches[0].radix_ports", error.render()


def test_long_unknown_key_is_shortened(tmp_path: Path) -> None:
    """Regression: a 1,000-character unknown key is echoed whole in the error's path."""
    error = load_text(tmp_path, PRESET_TEXT + "x" * 1000 + ": 1\n")
    assert error.message.startswith("unknown field") and len(error.render()) < 500
