"""Property tests: whatever a cluster document holds, loading it succeeds or raises InputError.

Thousands of generated documents: random mutations of valid cluster documents (delete a key,
replace a value with a random JSON value, add a random or a real field name, set numbers to
0, negative, huge, NaN or infinite, nudge counts by one) and random or corrupted YAML text.
``parse_text`` + ``validate_document`` + ``resolve_cluster`` must either return a cluster or
raise :class:`InputError` with a short one-line message, fast; never anything else.
"""

from __future__ import annotations

import copy
import math
import signal
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supernode.cluster.resolve import resolve_cluster
from supernode.errors import InputError
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import parse_text, validate_document
from supernode.spec.resolved import MAX_ACCELERATORS
from supernode.spec.schema import json_schema

BASES_TEXT = [
    """\
name: su
host: {accelerator: h100-sxm-80gb, accelerators_per_host: 8,
       nics: {count: 8, speed_gbit_per_s: 400}, power_kw: 10.2}
scale_up: {kind: nvswitch, size: 8, switch: nvswitch-gen3, switch_chips: 4}
scale_out: {tiers: 2, switch: quantum2-qm9700, rail_optimized: true}
supernodes: 32
""",
    """\
name: torus
host: {accelerator: tpu-v4, accelerators_per_host: 4}
scale_up: {kind: torus, size: 64, dims: [4, 4, 4], dim_link_bandwidth_gbyte_per_s: [45, 45, 45]}
""",
    """\
name: hybrid
host: {accelerator: h100-sxm-80gb, accelerators_per_host: 8,
       nics: {count: 4, speed_gbit_per_s: 800}}
scale_up:
  kind: hybrid
  size: 64
  switch: nvswitch-gen3
  switch_chips: 8
  hybrid: {group_kind: full_mesh, group_size: 8, group_links_per_accelerator: 7,
           uplinks_per_accelerator: 11}
scale_out: {tiers: 3, switch: tiny, oversubscription: [2, 1.5], rail_optimized: false}
switches:
  - {name: tiny, radix_ports: 16, port_speed_gbit_per_s: 800}
supernodes: 8
""",
    """\
name: mesh
accelerators:
  - name: npu
    kind: npu
    peak_dense_tflops: {bf16: 300, fp8: 600}
    memory_gbyte: 64
    memory_bandwidth_tbyte_per_s: 1.6
    scale_up_ports: 7
    scale_up_port_bandwidth_gbyte_per_s: 56
host:
  accelerator: npu
  accelerators_per_host: 8
  cpus: [{model: cpu, count: 2, cores: 64}]
  pcie: {generation: 5}
  other_units: [{name: dpu, kind: dpu, count: 2}]
  local_topology:
    device_links: [{a: 0, b: 1, kind: xgmi, count: 1}]
    nic_affinity: [{nic: mlx5_0, accelerator: 0, distance: PIX}]
    numa_of_accelerator: [0, 0, 0, 0, 1, 1, 1, 1]
scale_up: {kind: full_mesh, size: 8}
racks: {hosts_per_rack: 4, power_kw: 40}
facility: {power_available_kw: 1000}
""",
]
BASES = [yaml.safe_load(text) for text in BASES_TEXT]


def _field_names() -> list[str]:
    schema = json_schema("cluster")
    names: set[str] = set()
    for model in [schema, *schema["$defs"].values()]:
        names |= set(model.get("properties", {}))
    return sorted(names)


FIELD_NAMES = _field_names()
SPECIAL_NUMBERS = [0, -1, -8, 1, 2, 3, 7, 9, 63, 10**6, 2**31, 10**12, 10**18, 10**30, 2**63,
                   0.5, -0.0, 1e-300, 1e308, -1e308, math.nan, math.inf, -math.inf, True, False]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats()
    | st.text(max_size=12) | st.sampled_from(SPECIAL_NUMBERS),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8) | st.sampled_from(FIELD_NAMES), inner, max_size=4),
    max_leaves=10,
)


class Hang(Exception):
    """An example took too long (the handler raises it; no code under test catches it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang("loading took more than 2 s")


def check(data: Any = None, text: str | None = None) -> None:
    """Load ``data`` (or parse ``text``); only success or a short InputError are allowed."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 2.0)
    try:
        if text is not None:
            data = parse_text(text)
        cluster = resolve_cluster(validate_document(data, ClusterSpec))
    except InputError as exc:
        assert exc.message or exc.path
        size = len(text) if text is not None else len(repr(data))
        assert len(exc.render()) < 2000 + size, "the message outgrew its input (alias bomb?)"
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # a loaded cluster keeps its contract: the derived figures every model reads exist
    assert 1 <= cluster.accelerators <= MAX_ACCELERATORS
    assert cluster.hosts >= 1
    assert cluster.scale_up.bandwidth_per_accelerator_bytes_per_s >= 0
    assert cluster.scale_out_bandwidth_per_accelerator_bytes_per_s >= 0


def _locations(node: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) pair in a document, depth first."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in list(items):
        out.append((node, key))
        if isinstance(value, (dict, list)):
            _locations(value, out)
    return out


def _containers(node: Any) -> list[Any]:
    found = [node] if isinstance(node, dict) else []
    for _, value in (node.items() if isinstance(node, dict) else enumerate(node)):
        if isinstance(value, (dict, list)):
            found += _containers(value)
    return found


def _mutate_once(data: st.DataObject, document: dict[str, Any]) -> None:
    operation = data.draw(st.sampled_from(
        ["delete", "replace", "special", "nudge", "add", "add_field", "wrong_type"]))
    if operation in ("add", "add_field"):
        container = data.draw(st.sampled_from(_containers(document)))
        key = data.draw(st.sampled_from(FIELD_NAMES) if operation == "add_field"
                        else st.text(max_size=10))
        container[key] = data.draw(json_values)
        return
    locations = _locations(document, [])
    if not locations:
        return
    container, key = data.draw(st.sampled_from(locations))
    value = container[key]
    if operation == "delete":
        del container[key]
    elif operation == "replace":
        container[key] = data.draw(json_values)
    elif operation == "special":
        container[key] = data.draw(st.sampled_from(SPECIAL_NUMBERS))
    elif operation == "nudge" and isinstance(value, (int, float)) and not isinstance(value, bool):
        container[key] = data.draw(st.sampled_from(
            [value + 1, value - 1, value * 2, value // 2 if isinstance(value, int) else value / 2,
             -value, 0]))
    elif operation == "wrong_type":
        container[key] = data.draw(st.sampled_from([str(value), [value], {"value": value},
                                                    None]))


PROPERTY = settings(max_examples=2000, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(st.data())
def test_mutated_documents_load_or_raise_input_error(data: st.DataObject) -> None:
    document = copy.deepcopy(data.draw(st.sampled_from(BASES)))
    for _ in range(data.draw(st.integers(1, 4))):
        _mutate_once(data, document)
    if data.draw(st.booleans()):
        check(document)
    else:  # through YAML text, as a file would arrive
        check(text=yaml.safe_dump(document, sort_keys=False, allow_unicode=True))


#: YAML-significant snippets to splice into valid text: tags, aliases, special scalars.
YAML_SNIPPETS = ["2001-13-45", "2001-02-03", ".inf", "-.inf", ".nan", "0x1F", "0o17", "1_000",
                 "1e999", "9" * 5000, "*a", "&a ", "!!binary aGk=", "!!python/object:os.system ",
                 "!!set {a, b}", "<<: ", "? ", "- ", ": ", "{", "}", "[", "]", "'", '"', "#",
                 "\t", "\x00", "\x07", "\ufeff", "\r", "\u2028", "---\n", "...\n", "%YAML 1.1\n"]


@settings(PROPERTY, max_examples=1000)
@given(st.sampled_from(BASES_TEXT), st.lists(
    st.tuples(st.integers(0, 2000), st.integers(0, 3),
              st.text(max_size=4) | st.sampled_from(YAML_SNIPPETS)), min_size=1, max_size=4))
def test_corrupted_yaml_text_loads_or_raises_input_error(
    text: str, edits: list[tuple[int, int, str]]
) -> None:
    for position, cut, insert in edits:
        position %= len(text) + 1
        text = text[:position] + insert + text[position + cut :]
    check(text=text)


@settings(PROPERTY, max_examples=500)
@given(st.text(max_size=200))
def test_random_text_loads_or_raises_input_error(text: str) -> None:
    check(text=text)


@settings(PROPERTY, max_examples=300)
@given(json_values)
def test_random_top_level_values(value: Any) -> None:
    check(value)


#: Per base, worked from its text: accelerators (supernodes x scale-up size), hosts
#: (accelerators / per host), scale-up bytes/s per accelerator (su, hybrid: the H100's
#: published 450 GB/s of NVLink; torus: 45 GB/s on 3 dimensions x 2 directions; mesh: 7
#: ports x 56 GB/s) and scale-out (su: 8 x 400 Gb/s NICs over 8 GPUs; hybrid: 4 x 800
#: Gb/s over 8; torus and mesh have none).
BASE_FIGURES = {
    "su": (32 * 8, 32, 450e9, 8 * 400e9 / 8 / 8),
    "torus": (64, 16, 3 * 2 * 45e9, 0.0),
    "hybrid": (8 * 64, 64, 450e9, 4 * 800e9 / 8 / 8),
    "mesh": (8, 1, 7 * 56e9, 0.0),
}


def test_bases_are_valid() -> None:
    """Every base document, which the properties above mutate, loads as the cluster its
    text describes."""
    assert [d["name"] for d in BASES] == list(BASE_FIGURES)
    for document in BASES:
        cluster = resolve_cluster(validate_document(document, ClusterSpec))
        accelerators, hosts, up, out = BASE_FIGURES[document["name"]]
        assert cluster.name == document["name"]
        assert (cluster.accelerators, cluster.hosts) == (accelerators, hosts)
        assert cluster.scale_up.bandwidth_per_accelerator_bytes_per_s == pytest.approx(up)
        assert cluster.scale_out_bandwidth_per_accelerator_bytes_per_s == pytest.approx(out)
