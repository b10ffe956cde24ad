"""Reading user files safely: regular files only, never more than a stated byte limit.

Every command that takes a path reads it through :func:`read_text_file` (or
:func:`read_bytes_file`), so a FIFO, a device node or a folder is refused with exit 2, and
a file is read with a byte limit (``st_size`` is 0 for ``/dev/zero``; the read itself is
bounded).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from supernode.errors import InputError

#: Default largest input file, in bytes (16 MiB).
DEFAULT_INPUT_LIMIT_BYTES = 16 * 2**20


def read_bytes_file(path: str | Path, option: str = "",
                    limit_bytes: int = DEFAULT_INPUT_LIMIT_BYTES) -> bytes:
    """The bytes of regular file ``path``, at most ``limit_bytes``; InputError otherwise."""
    source = str(path)
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError(option, "no such file", source=source) from None
    except OSError as exc:
        raise InputError(option, f"cannot read: {exc.strerror or exc.__class__.__name__}",
                         source=source) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(option, "not a regular file (a folder, FIFO or device); give a "
                                     "file", source=source)
        if info.st_size > limit_bytes:
            raise InputError(option, f"file is {info.st_size:,} bytes; the limit is "
                                     f"{limit_bytes:,}", source=source)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit_bytes:
                raise InputError(option, f"file is over the limit of {limit_bytes:,} bytes",
                                 source=source)
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(option, f"cannot read: {exc.strerror or exc.__class__.__name__}",
                         source=source) from None
    finally:
        os.close(fd)


def read_text_file(path: str | Path, option: str = "",
                   limit_bytes: int = DEFAULT_INPUT_LIMIT_BYTES) -> str:
    """The UTF-8 text of regular file ``path`` (at most ``limit_bytes``); InputError otherwise."""
    data = read_bytes_file(path, option, limit_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(option, f"cannot read: not UTF-8 text (byte {exc.start})",
                         source=str(path)) from None
