"""Bad cluster files: each is refused with an InputError naming the field and what is allowed.

Every case goes through :func:`load_cluster` from a file on disk (parse, validate, resolve,
consistency). Cases are mutations of one valid document, a DGX H100 SuperPOD scalable unit
(kept here, not read from the preset, so that edits to the preset do not move these cases).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from work import counting_lines

from supernode.cluster.load import load_cluster, load_cluster_spec
from supernode.errors import InputError
from supernode.spec.loader import MAX_DOCUMENT_BYTES, parse_text

PRESET_TEXT = """\
name: su
description: One scalable unit, 32 DGX H100.
host:
  accelerator: h100-sxm-80gb
  accelerators_per_host: 8
  nics: {count: 8, speed_gbit_per_s: 400}
  power_kw: 10.2
scale_up:
  kind: nvswitch
  size: 8
  switch: nvswitch-gen3
  switch_chips: 4
scale_out:
  tiers: 2
  switch: quantum2-qm9700
supernodes: 32
"""
PRESET = yaml.safe_load(PRESET_TEXT)


class Hang(BaseException):
    """Raised by :func:`deadline` (a BaseException, so no ``except Exception`` swallows it)."""


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail fast instead of hanging: interrupt the block after ``seconds`` of wall time."""

    def _interrupt(signum: int, frame: Any) -> None:
        raise Hang(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, _interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def mutate(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """A deep copy of the preset with ``change`` applied."""
    document = copy.deepcopy(PRESET)
    change(document)
    return document


#: Python lines the loader may execute to refuse a bad file, once the catalog is cached
#: (:func:`warm_up`): a valid file takes about 6,000, the costliest refusal here about
#: 10,000; a walk over a huge count (a million radices) takes millions. Work in C (the
#: YAML parser) is not counted; the bomb tests bound the message instead.
MAX_LINES = 100_000
#: Wall-clock seconds after which a load counts as hung (a loop inside C code, which the
#: line count cannot see); a limit for hangs, not a performance target.
HANG_S = 60.0


@functools.cache
def warm_up() -> int:
    """Load the valid preset once per process (the catalog is read and cached then), so a
    case's count does not depend on which case ran first; the lines a valid load takes."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "valid.yaml"
        path.write_text(PRESET_TEXT, encoding="utf-8")
        load_cluster(path)
        with counting_lines() as work:
            load_cluster(path)
    return work.lines


def load_text(
    tmp_path: Path, text: str | bytes, suffix: str = ".yaml", max_lines: int = MAX_LINES
) -> InputError:
    """Write ``text`` to a file, load it, and return the InputError it must raise within
    ``max_lines`` executed Python lines (:mod:`work`: refusing bad input is cheap, on any
    machine at any load)."""
    warm_up()
    path = tmp_path / f"cluster{suffix}"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with deadline(HANG_S), pytest.raises(InputError) as info, counting_lines(max_lines):
        load_cluster(path)
    assert info.value.source == str(path)
    assert "\n" not in info.value.render(), "one line"
    return info.value


def load_document(tmp_path: Path, document: dict[str, Any],
                  max_lines: int = MAX_LINES) -> InputError:
    return load_text(tmp_path, yaml.safe_dump(document, sort_keys=False), max_lines=max_lines)


def put(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change that sets the dotted field ``path`` to ``value``."""

    def change(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = document
        for part in parents:
            node = node[part]
        node[last] = value

    return change


def drop(path: str) -> Callable[[dict[str, Any]], None]:
    """A change that deletes the dotted field ``path``."""

    def change(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = document
        for part in parents:
            node = node[part]
        del node[last]

    return change


def domain(**fields: Any) -> Callable[[dict[str, Any]], None]:
    """A change to a single domain (no scale-out) whose ``scale_up`` is ``fields``."""

    def change(document: dict[str, Any]) -> None:
        document["scale_up"] = fields
        document["supernodes"] = 1
        document.pop("scale_out")

    return change


INLINE_SWITCH = {"name": "tiny", "radix_ports": 8, "port_speed_gbit_per_s": 400}

#: name -> (change to the base document, expected path, fragment of the message; "a|b": either)
CASES: dict[str, tuple[Callable[[dict[str, Any]], Any], str, str]] = {
    # unknown fields: the nearest valid name is suggested
    "unknown scale_up field": (put("scale_up.sise", 3), "scale_up.sise", "did you mean 'size'"),
    "unknown top field": (put("supernode", 3), "supernode", "did you mean 'supernodes'"),
    "unknown host field": (put("host.accelerator_per_host", 8), "host.accelerator_per_host",
                           "did you mean 'accelerators_per_host'"),
    "unknown nic field": (put("host.nics.speed_gbps", 400), "host.nics.speed_gbps",
                          "did you mean 'speed_gbit_per_s'"),
    "misspelt required field": (lambda d: d["scale_up"].update(sise=d["scale_up"].pop("size")),
                                "scale_up.sise", "did you mean 'size'"),
    "unknown field named like a type": (put("float", 1), "float", "unknown field"),
    "missing field": (drop("host.accelerators_per_host"), "host.accelerators_per_host",
                      "required"),
    # wrong types
    "size not a number": (put("scale_up.size", "eight"), "scale_up.size", "valid integer"),
    "size fractional": (put("scale_up.size", 8.5), "scale_up.size", "fractional"),
    "kind not allowed": (put("scale_up.kind", "crossbar"), "scale_up.kind", "'nvswitch'"),
    "tiers not allowed": (put("scale_out.tiers", 4), "scale_out.tiers", "1, 2 or 3"),
    "scale_up a list": (put("scale_up", [8]), "scale_up", "dictionary"),
    "nics a list": (put("host.nics", [8]), "host.nics", "dictionary"),
    "name a list": (put("name", ["a"]), "name", "valid string"),
    # negative or zero sizes
    "size negative": (put("scale_up.size", -8), "scale_up.size", "greater than or equal to 1"),
    "size zero": (put("scale_up.size", 0), "scale_up.size", "greater than or equal to 1"),
    "supernodes zero": (put("supernodes", 0), "supernodes", "greater than or equal to 1"),
    "per host zero": (put("host.accelerators_per_host", 0), "host.accelerators_per_host",
                      "greater than or equal to 1"),
    "nic count negative": (put("host.nics.count", -1), "host.nics.count", "greater than"),
    "nic speed zero": (put("host.nics.speed_gbit_per_s", 0), "host.nics.speed_gbit_per_s",
                       "greater than 0"),
    "power negative": (put("host.power_kw", -1), "host.power_kw", "greater than 0"),
    "switch chips zero": (put("scale_up.switch_chips", 0), "scale_up.switch_chips",
                          "greater than or equal to 1"),
    # inconsistent counts
    "torus dims": (domain(kind="torus", size=64, dims=[4, 4, 3]), "scale_up.dims",
                   "must multiply to the size"),
    "torus dims negative": (domain(kind="torus", size=64, dims=[-4, -4, 4]), "scale_up.dims",
                            ">= 1|greater than 0"),
    "torus needs ports": (domain(kind="torus", size=256, dims=[4, 4, 4, 4],
                                    links_per_accelerator=6),
                          "scale_up.links_per_accelerator", "needs 8 ports"),
    "not a multiple of the host": (put("scale_up.size", 12), "scale_up.size", "multiple of 8"),
    "full mesh too few ports": (domain(kind="full_mesh", size=32),
                                "scale_up.links_per_accelerator", "needs 31 ports"),
    "more links than the chip": (put("scale_up.links_per_accelerator", 19),
                                 "scale_up.links_per_accelerator", "18 scale-up ports"),
    "nvswitch radix": (put("scale_up.switch_chips", 1), "scale_up.switch_chips",
                       "use at least 3 chips"),
    "fat tree radix": (put("supernodes", 2000), "scale_out.tiers", "at least 180 ports"),
    "one tier too small": (put("scale_out.tiers", 1), "scale_out.tiers", "at least 256 ports"),
    "too many ratios": (put("scale_out.oversubscription", [1, 2]), "scale_out.oversubscription",
                        "1 tier(s) below the top"),
    "no nics for scale_out": (drop("host.nics"), "host.nics", "count >= 1"),
    "hybrid group": (domain(kind="hybrid", size=64, switch="nvswitch-gen3",
                               hybrid={"group_size": 24, "group_links_per_accelerator": 7,
                                       "uplinks_per_accelerator": 11}),
                     "scale_up.hybrid.group_size", "must divide"),
    "hybrid ports": (domain(kind="hybrid", size=64, switch="nvswitch-gen3",
                               hybrid={"group_size": 8, "group_links_per_accelerator": 7,
                                       "uplinks_per_accelerator": 12}),
                     "scale_up.hybrid", "19 ports"),
    "hybrid no switch": (domain(kind="hybrid", size=64,
                                   hybrid={"group_size": 8, "group_links_per_accelerator": 7,
                                           "uplinks_per_accelerator": 11}),
                         "scale_up.switch", "needs a switch"),
    # unknown parts: the nearest catalog name is suggested
    "unknown accelerator": (put("host.accelerator", "h100-sxm-81gb"), "host.accelerator",
                            "did you mean h100-sxm-80gb"),
    "unknown scale-out switch": (put("scale_out.switch", "qm9700"), "scale_out.switch",
                                 "quantum2-qm9700"),
    "unknown scale-up switch": (put("scale_up.switch", "nvswitch-gen4"), "scale_up.switch",
                                "nvswitch-gen3"),
    "inline switch too small": (lambda d: (d.update(switches=[INLINE_SWITCH]),
                                           d["scale_out"].update(switch="tiny")),
                                "scale_out.tiers", "8-port switches hold at most"),
    # several domains need a fabric
    "supernodes without scale_out": (drop("scale_out"), "scale_out",
                                     "32 supernodes need a scale_out fabric"),
    # gigantic sizes: refused clearly and fast
    "gigantic supernodes": (put("supernodes", 10**15), "supernodes", "more than the 1,048,576"),
    "gigantic ports": (put("scale_up.links_per_accelerator", 10**18),
                       "scale_up.links_per_accelerator", "18 scale-up ports"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_cluster(tmp_path: Path, name: str) -> None:
    change, path, fragment = CASES[name]
    error = load_document(tmp_path, mutate(change))
    assert error.path == path or error.path.startswith(f"{path}["), error.render()
    assert any(f in error.message for f in fragment.split("|")), error.render()


def test_base_document_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "su.yaml"
    path.write_text(PRESET_TEXT)
    assert load_cluster(path).accelerators == 256


# --- whole-document problems -----------------------------------------------------------


def test_malformed_yaml_gives_line_and_column(tmp_path: Path) -> None:
    error = load_text(tmp_path, "name: x\nhost: [1, 2\nscale_up: {}\n")
    assert error.path == ""
    assert "line 3, column 9" in error.message and "not valid YAML" in error.message


def test_bad_indentation(tmp_path: Path) -> None:
    error = load_text(tmp_path, "name: x\nscale_up:\n    kind: nvswitch\n  size: 8\n")
    assert error.path == "" and "line 4, column 3" in error.message


def test_tab_indentation(tmp_path: Path) -> None:
    assert "line 2, column 1" in load_text(tmp_path, "name: x\n\thost: 1\n").message


def test_invalid_json(tmp_path: Path) -> None:
    error = load_text(tmp_path, '{"name": "x",}', suffix=".json")
    assert "not valid JSON at line 1" in error.message


@pytest.mark.parametrize("text,kind", [("", "NoneType"), ("# only a comment\n", "NoneType"),
                                       ("- a\n- b\n", "list"), ("42\n", "int"),
                                       ("just a string\n", "str")])
def test_top_level_not_a_mapping(tmp_path: Path, text: str, kind: str) -> None:
    error = load_text(tmp_path, text)
    assert error.path == "" and "mapping" in error.message and kind in error.message


def test_binary_garbage_not_utf8(tmp_path: Path) -> None:
    error = load_text(tmp_path, bytes(range(128, 256)) * 8)
    assert error.path == "" and "cannot read" in error.message


@pytest.mark.parametrize("garbage", ["\x00\x01\x02\x03", "name: a\x07b\n", "\x1b[31mname\n"])
def test_control_characters_are_input_errors(tmp_path: Path, garbage: str) -> None:
    """Regression: PyYAML's ReaderError ("unacceptable character #x0000") is raised while the
    loader is built, so building it must sit inside the ``try`` of ``parse_text``."""
    error = load_text(tmp_path, garbage)
    assert error.path == "" and "character" in error.message


def test_huge_file_refused_before_reading(tmp_path: Path, monkeypatch) -> None:
    """Refused on its size alone: not one byte of it is read (``os.read`` fails here)."""
    path = tmp_path / "huge.yaml"
    with path.open("wb") as stream:  # sparse: cheap to create, huge to read
        stream.truncate(MAX_DOCUMENT_BYTES + 1)
    reads: list[int] = []

    def no_read(fd: int, size: int) -> bytes:
        reads.append(size)
        raise AssertionError("the file was read before its size was checked")

    with monkeypatch.context() as patch:
        patch.setattr(os, "read", no_read)
        with pytest.raises(InputError, match="the limit is") as info:
            load_cluster(path)
    assert reads == [] and f"{MAX_DOCUMENT_BYTES + 1:,} bytes" in info.value.message


def test_huge_text_refused() -> None:
    with pytest.raises(InputError, match="the limit is"):
        parse_text("#" * (MAX_DOCUMENT_BYTES + 1))


def test_deeply_nested(tmp_path: Path) -> None:
    error = load_text(tmp_path, "name: " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nests too deeply" in error.message


def test_deeply_nested_mappings(tmp_path: Path) -> None:
    error = load_text(tmp_path, "a: " + "{b: " * 3000 + "1" + "}" * 3000 + "\n")
    assert "nests too deeply" in error.message


def test_deeply_nested_json(tmp_path: Path) -> None:
    """Regression: ``json.loads`` raises RecursionError; read_document must catch it."""
    error = load_text(tmp_path, '{"name": ' + "[" * 5000 + "]" * 5000 + "}", suffix=".json")
    assert "nests too deeply" in error.message


def billion_laughs(levels: int, where: str) -> str:
    """The classic alias bomb: ``levels`` levels of 9 aliases each, used at ``where``."""
    anchors = ["&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    anchors += [f"&l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    lines = PRESET_TEXT.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().startswith(where))
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    lines[index] = f"{indent}{where} [{', '.join(anchors)}]"
    return "\n".join(lines) + "\n"


def test_billion_laughs_refused(tmp_path: Path) -> None:
    """Regression: aliases are shared, not copied, so counting constructed nodes never trips;
    the expanded value blows up later (in the error message's ``repr``). The loader counts
    the *expanded* size of the node graph before constructing it."""
    error = load_text(tmp_path, billion_laughs(9, "description:"))
    assert "alias" in error.message and len(error.message) < 300


def test_alias_bomb_in_an_enum_field_is_refused_with_a_short_message(tmp_path: Path) -> None:
    """Regression: 9**6 aliased leaves in ``scale_up.kind`` gave a 3 MB error message (depth 9
    hung in ``repr``)."""
    error = load_text(tmp_path, billion_laughs(5, "kind:"))
    assert len(error.message) < 300 and "alias" in error.message


def test_recursive_alias(tmp_path: Path) -> None:
    error = load_text(tmp_path, PRESET_TEXT.replace("kind: nvswitch", "kind: &r [*r]"))
    assert error.path.startswith("scale_up.kind")


def test_load_cluster_spec_no_such_preset() -> None:
    with pytest.raises(InputError) as info:
        load_cluster_spec("dgx-h100-superpod")
    assert "did you mean dgx-h100-superpod-su" in info.value.message
