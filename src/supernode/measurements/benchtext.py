"""Lines of saved benchmark output, cleaned the same way for every importer.

Logs come from terminals and launchers: carriage returns, ANSI colour codes, and the tags
``mpirun --tag-output`` / ``srun --label`` put in front of each line (``[1,0]<stdout>:``,
``[0] ``, ``0: ``, ``[rank 3] ``). NCCL's own ``NCCL_DEBUG`` messages
(``host:pid:tid [dev] NCCL INFO ...``) may land in the middle of a tool's line when
several processes share a terminal; :func:`split_nccl_message` cuts them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Largest results file the importers read (bytes); a full nccl-tests sweep is < 100 kB. A
#: byte of results text costs about 150 bytes of memory while it is parsed and compared
#: (an 8 MiB file of 80,000 nccl-tests rows peaks at 1.2 GiB), so one file is at most
#: 8 MiB and all the files of one command at most 16 MiB together (64 MiB each, the limit
#: before, went far past 4 GiB).
MAX_RESULTS_BYTES = 8 * 2**20
#: Most bytes of results all the files of one command hold together.
MAX_RESULTS_TOTAL_BYTES = 16 * 2**20
#: Most results files one command reads.
MAX_RESULTS_FILES = 256

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TAG = re.compile(r"^(?:\[\d+(?:,\d+)*\](?:<std(?:out|err)>)?:?[ \t]?|\[rank \d+\][ \t]?"
                  r"|\d{1,6}: )")
_TRAILING_TAG = re.compile(r"\[\d+(?:,\d+)*\](?:<std(?:out|err)>)?:?\s*$")
_NCCL = re.compile(r"(?:(?P<host>[^\s\[\]]+):(?P<pid>\d+):(?P<tid>\d+)\s+)?"
                   r"(?:\[(?P<dev>\d+)\]\s+)?NCCL\s+(?P<level>INFO|WARN|ERROR|TRACE)\b\s?"
                   r"(?P<message>.*)$")


@dataclass(frozen=True)
class NcclMessage:
    """One ``NCCL INFO`` / ``NCCL WARN`` message and the line it was on (1-based)."""

    line: int
    level: str
    host: str | None
    message: str


def result_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, text)`` of every line, without CR, ANSI codes or launcher tags."""
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _ANSI.sub("", raw.replace("\r", "")) if "\x1b" in raw else raw.replace("\r", "")
        if line[:1] == "[" or line[:1].isdigit():
            line = _TAG.sub("", line, count=1)
        out.append((number, line))
    return out


def split_nccl_message(number: int, line: str) -> tuple[str, NcclMessage | None]:
    """Split ``line`` into the tool's own text and an NCCL debug message, if any.

    ``"  8192  2048  float  sum  -1h1:5:5 [0] NCCL INFO ..."`` gives the row fragment
    and the message; a line without ``NCCL INFO|WARN|ERROR`` comes back unchanged.
    """
    match = _NCCL.search(line) if "NCCL" in line else None
    if match is None:
        return line, None
    message = NcclMessage(number, match.group("level"), match.group("host"),
                          match.group("message").strip())
    data = _TRAILING_TAG.sub("", line[: match.start()])
    return _TAG.sub("", data.rstrip(), count=1), message


def decimals(token: str) -> int:
    """Digits after the decimal point of a printed number (``'92.57'`` -> 2)."""
    mantissa = token.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def half_unit(token: str) -> float:
    """Half of the last printed digit's unit: the rounding bound of ``token``."""
    lower = token.lower()
    exponent = int(lower.split("e")[1]) if "e" in lower else 0
    return 0.5 * 10.0 ** (exponent - decimals(token))
