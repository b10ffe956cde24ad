"""Parse nccl-tests and rccl-tests stdout (``all_reduce_perf``, ``alltoall_perf``, ...).

The format (nccl-tests ``src/util.cu``, ``writeResultHeader`` / ``writeBenchmarkLine*``):
an optional preamble (``# nccl-tests version``, ``# Collective test starting: X_perf``,
``# nThread .. nGpus .. minBytes ..``, ``rccl-tests: Version``, ``NCCL version``), the
``# Using devices`` list (``#  Rank  0 Group  0 Pid 123 on host device  0 [0x0f] NAME``),
a table header (``#  size  count  type  redop  root  time  algbw  busbw  #wrong`` for the
out-of-place then the in-place run; ``i_min i_max i_p99 i_cv%`` after each with ``-I 1``;
``timestamp`` last with ``-S 1``; ``cputime`` with ``-C 1``), one row per size, comments
(``# Truncated smaller message sizes`` and the like, written by people who trimmed the
output), and a footer (``# Out of bounds values``, ``# Avg bus bandwidth``, ``# Collective
test concluded``). ``#wrong`` is ``N/A`` where the test cannot check (alltoall in-place).
A file may hold several tests. NCCL debug lines are passed on, even when they split a row.

Malformed or cut-off rows raise :class:`~supernode.errors.InputError` at ``line N``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from supernode.errors import InputError
from supernode.measurements.benchtext import NcclMessage, result_lines, split_nccl_message

_PROGRAM = re.compile(r"#\s*Collective test starting:\s*(\S+)")
_PARAMS = re.compile(r"#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_TESTS_VERSION = re.compile(r"#\s*nccl-tests version\s+(\S+)")
_RCCL_TESTS = re.compile(r"rccl-tests:\s*Version\s+(\S+)", re.IGNORECASE)
_LIBRARY = re.compile(r"^\s*#?\s*(NCCL|RCCL) version\s+(\S+)")
_RANK = re.compile(r"#\s*Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+"
                   r"(\d+)\s+\[([^\]]*)\]\s*(.*)$")
_HEADER = re.compile(r"#\s*size\s+count\s+type\s+redop\s+root\s+(.*)$")
_ELISION = re.compile(r"^\s*(\.\.\.|…)\s*$")
_TRUNCATED = re.compile(r"truncat|smaller message sizes", re.IGNORECASE)
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([-+0-9.eE]+|nan|inf)")
_BOUNDS = re.compile(r"#\s*Out of bounds values\s*:\s*(\d+)")
_CONCLUDED = re.compile(r"#\s*Collective test concluded")
_REDUCED = re.compile(r"#\s*Reducing maxBytes to\s+(\d+)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"-?\d+")

#: Fields of one placement, by table layout.
PLACEMENT_FIELDS = ("time", "algbw", "busbw", "wrong")
ITERATION_FIELDS = ("i_min", "i_max", "i_p99", "i_cv")


@dataclass
class RawRow:
    """A row's tokens as printed, with the line it starts on."""

    line: int
    tokens: list[str]


@dataclass
class RawBlock:
    """One test of a results file, as printed (no inference yet)."""

    start_line: int
    program: str | None = None
    tests_version: str | None = None
    rccl: bool = False
    library: str | None = None
    library_version: str | None = None
    params: dict[str, int] = field(default_factory=dict)
    ranks: list[tuple[int, str, int, str, str, int]] = field(default_factory=list)
    elided: bool = False
    per_iteration: bool = False
    timestamp: bool = False
    cputime: bool = False
    rows: list[RawRow] = field(default_factory=list)
    truncated: bool = False
    average_busbw: float | None = None
    out_of_bounds: int | None = None
    reduced_max_bytes: int | None = None

    @property
    def placement_width(self) -> int:
        """Tokens of one placement's fields."""
        return len(PLACEMENT_FIELDS) + (len(ITERATION_FIELDS) if self.per_iteration else 0)

    @property
    def row_width(self) -> int:
        """Tokens of a complete row."""
        return 5 + 2 * self.placement_width + (2 if self.timestamp else 0)


@dataclass
class ParsedOutput:
    """Every test block of a file and the NCCL debug messages found in it."""

    blocks: list[RawBlock]
    nccl_messages: list[NcclMessage]


def looks_like_nccl_tests(text: str) -> bool:
    """True when ``text`` holds an nccl-tests/rccl-tests result table header."""
    return any(_HEADER.search(line) for _, line in result_lines(text[: 4 * 2**20]))


class _Parser:
    """Line-by-line state machine over one file."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.blocks: list[RawBlock] = []
        self.messages: list[NcclMessage] = []
        self.block: RawBlock | None = None
        self.pending: RawRow | None = None
        self.in_table = False

    def error(self, line: int, message: str) -> InputError:
        """An InputError at ``line N`` of this file."""
        return InputError(f"line {line}", message, source=self.source)

    def current(self, line: int) -> RawBlock:
        """The open block (a new one if none)."""
        if self.block is None:
            self.block = RawBlock(start_line=line)
            self.blocks.append(self.block)
        return self.block

    def close(self) -> None:
        """End the open block (a cut-off row in it is an error)."""
        self.check_pending()
        self.block, self.in_table = None, False

    def check_pending(self) -> None:
        """Refuse a row left incomplete before anything else starts."""
        if self.pending is not None:
            got, need = len(self.pending.tokens), self.current(self.pending.line).row_width
            raise self.error(self.pending.line, f"row is cut off: {got} of its {need} fields "
                                                "(truncated output?)")

    def feed(self, number: int, text: str) -> None:
        """Take one line: NCCL messages out, then a comment, an elision or a row fragment."""
        data, message = split_nccl_message(number, text)
        if message is not None:
            self.messages.append(message)
        stripped = data.strip()
        if not stripped:
            return
        if stripped.startswith("#") or _LIBRARY.match(stripped) or _RCCL_TESTS.search(stripped):
            self.comment(number, stripped)
        elif _ELISION.match(stripped):
            self.current(number).elided = True
        elif self.in_table and (stripped[0].isdigit() or stripped[0] in "-+."
                                or stripped.startswith("N/A")):
            self.fragment(number, stripped.split())

    def comment(self, number: int, line: str) -> None:
        """A ``#`` line: program, header, device list, parameters, versions, footer."""
        if (m := _PROGRAM.search(line)) is not None:
            self.close()
            self.current(number).program = m.group(1)
            return
        if (m := _HEADER.search(line)) is not None:
            self.header(number, m.group(1))
            return
        self.check_pending()
        block = self.current(number)
        if (m := _RANK.search(line)) is not None:
            block.ranks.append((int(m.group(1)), m.group(4), int(m.group(5)), m.group(6),
                                m.group(7).strip(), int(m.group(2))))
        elif (m := _PARAMS.search(line)) is not None:
            block.params = dict(zip(("nthreads", "ngpus", "min_bytes", "max_bytes"),
                                    map(int, m.groups()), strict=True))
        elif (m := _TESTS_VERSION.search(line)) is not None:
            block.tests_version = m.group(1)
        elif (m := _RCCL_TESTS.search(line)) is not None:
            block.rccl, block.tests_version = True, m.group(1)
        elif (m := _LIBRARY.match(line)) is not None:
            block.library, block.library_version = m.group(1), m.group(2)
            block.rccl = block.rccl or m.group(1) == "RCCL"
        elif (m := _AVG.search(line)) is not None:
            block.average_busbw = _float_or_none(m.group(1))
        elif (m := _BOUNDS.search(line)) is not None:
            block.out_of_bounds = int(m.group(1))
        elif (m := _REDUCED.search(line)) is not None:
            block.reduced_max_bytes = int(m.group(1))
        elif _CONCLUDED.search(line):
            self.close()
        elif _TRUNCATED.search(line):
            block.truncated = True

    def header(self, number: int, rest: str) -> None:
        """The table header: which columns each row has (a second header starts a block)."""
        self.check_pending()
        if self.block is not None and self.block.rows:
            previous = self.block
            self.close()
            self.current(number).program = previous.program
        block = self.current(number)
        names = rest.split()
        block.per_iteration = "i_min" in names
        block.timestamp = "timestamp" in names
        block.cputime = "cputime" in names
        if names.count("algbw") != 2 or names.count("busbw") != 2:
            raise self.error(number, "table header must name time, algbw, busbw and #wrong "
                                     "for the out-of-place and the in-place run")
        self.in_table = True

    def fragment(self, number: int, tokens: list[str]) -> None:
        """Tokens of a row, or of the rest of a row that NCCL lines split."""
        block = self.current(number)
        starts_row = (len(tokens) >= 3 and _INT.fullmatch(tokens[0]) is not None
                      and _INT.fullmatch(tokens[1]) is not None
                      and _WORD.fullmatch(tokens[2]) is not None)
        if starts_row:
            self.check_pending()
            self.pending = RawRow(number, list(tokens))
        elif self.pending is not None:
            self.pending.tokens.extend(tokens)
        else:
            raise self.error(number, f"values outside any row: {' '.join(tokens)[:60]!r}; a "
                                     "row starts with size, count and type")
        if len(self.pending.tokens) >= block.row_width:
            row = self.pending
            self.pending = None
            if len(row.tokens) > block.row_width:
                raise self.error(row.line, f"row has {len(row.tokens)} fields; the table "
                                           f"header announces {block.row_width}")
            block.rows.append(row)

    def finish(self) -> ParsedOutput:
        """The blocks with rows, after checking that no row was left cut off."""
        self.check_pending()
        blocks = [b for b in self.blocks if b.rows]
        return ParsedOutput(blocks, self.messages)


def _float_or_none(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_nccl_tests_text(text: str, source: str = "<input>", *,
                          require_rows: bool = True) -> ParsedOutput:
    """Every test block (rows as printed) and every NCCL debug message of ``text``.

    Raises :class:`InputError` naming the line for a cut-off or overlong row, and (with
    ``require_rows``) for a file with no result row at all.
    """
    parser = _Parser(source)
    for number, line in result_lines(text):
        parser.feed(number, line)
    parsed = parser.finish()
    if not parsed.blocks and require_rows:
        raise InputError("", "no nccl-tests/rccl-tests result rows found (expected the "
                             "'#  size  count  type  redop  root  time  algbw  busbw' table "
                             "followed by rows)", source=source)
    return parsed
