"""Parse ``nvidia-smi topo -m`` output into a :class:`TopoMatrix`.

The format (docs/import.md; a sample in ``data/samples/``): a tab-separated matrix whose
header row starts with a tab and may carry ANSI codes (``\\x1b[4m``); device columns
``GPU0..`` then ``NIC0..`` (older drivers name NICs directly, ``mlx5_0``); trailing columns
``CPU Affinity``, ``NUMA Affinity``, ``GPU NUMA ID`` (data rows carry one extra empty cell
before the last). The diagonal is ``X``; other cells are ``NV#`` (a bond of # NVLinks) or a
PCIe distance class, nearest first: PIX, PXB, PHB, NODE, SYS (``SOC`` on old drivers means
SYS). A ``Legend:`` section follows (ignored) and a ``NIC Legend:`` section mapping ``NIC0``
to its device (``mlx5_10``). Text pasted from a terminal, with tabs turned into spaces, is
accepted too.

Every malformed input is an :class:`InputError` whose path is ``line N``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from supernode.errors import InputError
from supernode.inputs import read_bytes_file

#: PCIe distance classes, nearest first (nvidia-smi's legend order reversed).
PCIE_CLASSES = ("PIX", "PXB", "PHB", "NODE", "SYS")
#: Refuse inputs larger than this (characters); a 1,024-device matrix is far smaller.
MAX_TEXT_CHARS = 2**20
#: Refuse matrices with more device columns than this.
MAX_DEVICES = 1024

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GPU = re.compile(r"GPU([0-9]{1,4})")
_NV = re.compile(r"NV([0-9]{1,4})")
_LEGEND_ENTRY = re.compile(r"\s*(\S+)\s*:\s*(\S+)\s*")
_NUMBER = re.compile(r"[0-9]{1,6}")
_LEGACY = {"SOC": "SYS"}
_TRAILING_WORDS = ("CPU", "NUMA", "GPU")


@dataclass(frozen=True)
class TopoMatrix:
    """One host's ``nvidia-smi topo -m``: devices, the cell between each pair, NUMA.

    ``cells[(row, column)]`` holds a normalised code: ``X``, ``NV18``, or a PCIe class.
    """

    gpus: tuple[str, ...]
    nics: tuple[str, ...]
    nic_devices: dict[str, str]
    cells: dict[tuple[str, str], str]
    cpu_affinity: dict[str, str]
    numa_node: dict[str, int | None]
    gpu_numa_id: dict[str, str]
    notes: tuple[str, ...]

    def nvlinks(self, a: str, b: str) -> int:
        """Bonded NVLinks between devices ``a`` and ``b`` (0 when not NVLink-connected)."""
        match = _NV.fullmatch(self.cells[(a, b)])
        return int(match.group(1)) if match else 0

    def distance(self, a: str, b: str) -> str:
        """The class between two devices: ``NV`` for NVLink, else the PCIe class."""
        code = self.cells[(a, b)]
        return "NV" if _NV.fullmatch(code) else code


def read_topo(path: str | Path) -> TopoMatrix:
    """Read a saved ``nvidia-smi topo -m`` output file and parse it (a regular file of at
    most :data:`MAX_TEXT_CHARS` bytes: a FIFO or ``/dev/zero`` is refused, not read)."""
    data = read_bytes_file(path, limit_bytes=MAX_TEXT_CHARS)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("", f"not text (invalid UTF-8 at byte {exc.start}); save the output of "
                             "`nvidia-smi topo -m` as plain text", source=str(path)) from None
    return parse_topo(text, source=str(path))


def parse_topo(text: str, source: str | None = None) -> TopoMatrix:
    """Parse the text of ``nvidia-smi topo -m``; raise :class:`InputError` with a line number."""
    try:
        return _Parser(_clean_lines(text)).parse()
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=source) from None


def _clean_lines(text: str) -> list[str]:
    if len(text) > MAX_TEXT_CHARS:
        raise InputError("", f"input is {len(text):,} characters; an nvidia-smi topo matrix is "
                             f"far smaller (limit {MAX_TEXT_CHARS:,})")
    if "\x00" in text:
        raise InputError("", "input contains NUL bytes: binary data, not nvidia-smi output")
    return [_ANSI.sub("", line).rstrip("\r\n") for line in text.splitlines()]


def _where(index: int) -> str:
    return f"line {index + 1}"


class _Parser:
    """State of one parse: the lines, the header's columns, and what rows gave."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.tabs = False
        self.devices: list[str] = []
        self.trailing = 0
        self.cells: dict[tuple[str, str], str] = {}
        self.row_line: dict[str, int] = {}
        self.extra: dict[str, list[str]] = {}
        self.notes: list[str] = []

    def split(self, line: str) -> list[str]:
        """Fields of a line: tab-separated, or whitespace-separated for pasted text."""
        return [f.strip() for f in line.split("\t")] if self.tabs else line.split()

    def parse(self) -> TopoMatrix:
        start = next((i for i, line in enumerate(self.lines) if line.strip()), None)
        if start is None:
            raise InputError("", "empty input: expected the output of `nvidia-smi topo -m`")
        self._header(start)
        end = self._rows(start + 1)
        gpus = tuple(d for d in self.devices if _GPU.fullmatch(d))
        nics = tuple(d for d in self.devices if d not in gpus)
        self._check_rows(gpus, end)
        self._symmetric()
        legend = self._legend(end, nics)
        cpu, numa, gpu_numa = self._affinity(gpus)
        return TopoMatrix(gpus, nics, legend, dict(self.cells), cpu, numa, gpu_numa,
                          tuple(self.notes))

    def _header(self, index: int) -> None:
        line = self.lines[index]
        self.tabs = "\t" in line
        fields = self.split(line)
        if self.tabs and fields and fields[0] == "":
            fields = fields[1:]
        devices: list[str] = []
        for name in fields:
            if " " in name or name in _TRAILING_WORDS or not name:
                break
            devices.append(name)
        rest = " ".join(fields[len(devices):])
        self.trailing = sum(rest.count(t) for t in ("CPU Affinity", "NUMA Affinity", "NUMA ID"))
        if not devices or devices[0] != "GPU0":
            raise InputError(_where(index), "expected the header row of `nvidia-smi topo -m` "
                                            "(a tab, then GPU0, GPU1, ...); got "
                                            f"{line.strip()[:60]!r}")
        if len(devices) > MAX_DEVICES:
            raise InputError(_where(index), f"{len(devices):,} device columns; at most "
                                            f"{MAX_DEVICES:,} are accepted")
        for position, name in enumerate(devices):
            if name in devices[:position]:
                raise InputError(_where(index), f"column {name!r} appears twice in the header")
        gpus = [d for d in devices if _GPU.fullmatch(d)]
        if gpus != [f"GPU{i}" for i in range(len(gpus))] or devices[: len(gpus)] != gpus:
            raise InputError(_where(index), "GPU columns must come first, numbered GPU0, GPU1, "
                                            f"... in order; got {', '.join(gpus)}")
        self.devices = devices

    def _rows(self, index: int) -> int:
        """Read matrix rows from ``index`` until a blank or legend line; return where it ends."""
        while index < len(self.lines):
            line = self.lines[index]
            if not line.strip() or line.strip().endswith(":"):
                break
            self._row(index, self.split(line))
            index += 1
        return index

    def _row(self, index: int, fields: list[str]) -> None:
        label, n = fields[0], len(self.devices)
        if label not in self.devices:
            raise InputError(_where(index), f"row {label[:40]!r} is not a device of the header "
                                            f"({', '.join(self.devices[:4])}, ...)")
        if label in self.row_line:
            raise InputError(_where(index), f"second row for {label} (first at "
                                            f"{_where(self.row_line[label])})")
        cells, extra = fields[1 : 1 + n], fields[1 + n :]
        allowed_extra = self.trailing + (1 if self.tabs and self.trailing else 0)
        if len(cells) < n or len(extra) > allowed_extra:
            raise InputError(_where(index), f"ragged row {label}: {len(fields) - 1} cells, but "
                                            f"the header has {n} devices and {self.trailing} "
                                            "affinity columns")
        for column, raw in zip(self.devices, cells, strict=True):
            self.cells[(label, column)] = self._cell(index, label, column, raw)
        self.row_line[label] = index
        self.extra[label] = extra

    def _cell(self, index: int, row: str, column: str, raw: str) -> str:
        code = _LEGACY.get(raw, raw)
        if row == column:
            if code != "X":
                raise InputError(_where(index), f"{row}/{column} is on the diagonal and must be "
                                                f"'X', got {raw[:20]!r}")
            return code
        match = _NV.fullmatch(code)
        if (match and int(match.group(1)) >= 1) or code in PCIE_CLASSES:
            return code
        allowed = f"NV# (# bonded NVLinks, # >= 1), {', '.join(PCIE_CLASSES)}"
        raise InputError(_where(index), f"{row}/{column}: unknown cell {raw[:20]!r}; "
                                        f"allowed: {allowed}")

    def _check_rows(self, gpus: tuple[str, ...], end: int) -> None:
        """Every GPU needs its row (reported where the matrix ends); NIC rows are optional."""
        missing = [g for g in gpus if g not in self.row_line]
        if missing:
            raise InputError(_where(end), f"no matrix row for {', '.join(missing)}")
        for nic in self.devices:
            if nic not in self.row_line:  # a NIC without its own row: mirror the GPU rows
                for other in self.devices:
                    if (other, nic) in self.cells:
                        self.cells[(nic, other)] = self.cells[(other, nic)]
                self.cells[(nic, nic)] = "X"

    def _symmetric(self) -> None:
        for (row, column), code in self.cells.items():
            back = self.cells.get((column, row))
            if back is not None and back != code:
                line = self.row_line.get(column, self.row_line.get(row, 0))
                raise InputError(_where(line), f"matrix is not symmetric: {row}/{column} is "
                                               f"{code} but {column}/{row} is {back}")

    def _legend(self, index: int, nics: tuple[str, ...]) -> dict[str, str]:
        """Map NIC column labels to device names from the ``NIC Legend:`` section."""
        names: dict[str, str] = {}
        in_legend = False
        for i in range(index, len(self.lines)):
            text = self.lines[i].strip()
            if text.endswith(":"):  # a section title: "Legend:", "NIC Legend:"
                in_legend = text == "NIC Legend:"
                continue
            if not in_legend or not text:
                continue
            match = _LEGEND_ENTRY.fullmatch(text)
            if match is None:
                raise InputError(_where(i), f"NIC Legend entries look like 'NIC0: mlx5_0'; got "
                                            f"{text[:60]!r}")
            names[match.group(1)] = match.group(2)
        unknown = sorted(set(names) - set(nics))
        if unknown:
            self.notes.append(f"NIC Legend names {', '.join(unknown)}, absent from the matrix")
        unnamed = [n for n in nics if n not in names]
        if unnamed and any(n.startswith("NIC") for n in unnamed):
            self.notes.append(f"no NIC Legend entry for {', '.join(unnamed)}: column labels kept")
        return {n: names.get(n, n) for n in nics}

    def _affinity(
        self, gpus: tuple[str, ...]
    ) -> tuple[dict[str, str], dict[str, int | None], dict[str, str]]:
        cpu: dict[str, str] = {}
        numa: dict[str, int | None] = {}
        gpu_numa: dict[str, str] = {}
        for gpu in gpus:
            extra = self.extra[gpu]
            cpu[gpu] = extra[0] if extra else "N/A"
            node = extra[1] if len(extra) > 1 else "N/A"
            numa[gpu] = int(node) if _NUMBER.fullmatch(node) else None
            if numa[gpu] is None and node not in ("N/A", ""):
                self.notes.append(f"{gpu}: NUMA affinity {node!r} is not one node; left out")
            gpu_numa[gpu] = next((v for v in reversed(extra[2:]) if v), "N/A")
        return cpu, numa, gpu_numa
