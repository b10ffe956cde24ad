"""Showing user-supplied text safely: in rich markup, in matplotlib labels, on one line.

Names come from user files (cluster, job, switch, axis values) and from the command line.
Rich reads ``[...]`` as markup and matplotlib reads ``$...$`` as mathtext; either can crash
a command or change what is shown. A newline or a terminal escape in a name would split
an ``error:`` line or drive the terminal; an undecodable byte of a file name (kept by
Python as a lone surrogate) cannot be encoded on output at all. Every user string shown
in a table goes through :func:`rich_safe`, in a plot through :func:`plot_safe`, and in an
error message through :func:`one_line`.

Generated files are read by other programs: a newline in a name written into a ``#``
comment of a shell script, a YAML or CSV file would end the comment and inject commands or
keys. Every user string in a generated file's comment or header goes through
:func:`comment_safe`, and every one in Markdown (report.md, decisions.md) through
:func:`markdown_safe`.
"""

from __future__ import annotations

import re

#: Longest user value quoted in a message or a table cell, in characters.
MAX_SHOWN_CHARS = 200

#: What rich would read as a markup tag (rich.markup's own pattern), with the backslashes
#: before it.
_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")

#: C0/C1 control characters (tab and newline included), DEL, lone surrogates (undecodable
#: bytes of file names), and the Unicode line/paragraph separators.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\x{code - 0xDC00:02x}"
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(match.group())
    if named:
        return named
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, limit: int | None = MAX_SHOWN_CHARS) -> str:
    """``text`` with control characters and undecodable bytes written as escapes
    (``\\n``, ``\\x1b``, ``\\xff``), cut to ``limit`` characters (``...`` marks the cut)."""
    out = _UNSHOWABLE.sub(_escape_char, str(text))
    if limit is not None and len(out) > limit:
        out = out[: max(limit - 3, 1)] + "..."
    return out


def one_line(text: object) -> str:
    """``text`` as one printable line of any length (for error messages)."""
    return printable(text, limit=None)


def rich_safe(text: object, limit: int | None = MAX_SHOWN_CHARS) -> str:
    """``text`` as a string that rich prints literally (markup brackets escaped), on one
    line and at most ``limit`` characters (None: whole, for notes and sentences).

    Every ``[`` that would open a tag gets a backslash (and the backslashes before it are
    doubled), as :func:`rich.markup.escape` does; unlike it, a trailing backslash is left
    single, so it prints as one (do not put a markup tag right after the result).
    """
    return _TAG.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), printable(text, limit))


def plot_safe(text: object) -> str:
    """``text`` as a string matplotlib draws literally (``$`` escaped, so no mathtext),
    on one line and at most :data:`MAX_SHOWN_CHARS` characters.

    Matplotlib treats a string as mathtext when it has an even number (> 0) of unescaped
    ``$``; otherwise it draws it with every ``\\$`` turned back into ``$``. Escaping each
    ``$`` therefore draws exactly the original text (backslashes elsewhere are drawn as is).
    """
    return printable(text).replace("$", r"\$")


def comment_safe(text: object) -> str:
    """``text`` safe inside one comment line of a generated file (``#`` in a shell script,
    YAML, CSV or Prometheus file): every character that is not printable (newlines, the
    line and paragraph separators, NEL, control characters, undecodable bytes) becomes a
    space, so the comment cannot end early and nothing after it is read as code or data."""
    return "".join(c if c.isprintable() else " " for c in str(text))


#: Characters Markdown (CommonMark, GitHub) may read as markup or raw HTML inside a line;
#: an underscore inside a word (``tp_inside_supernode``) never is.
_MARKDOWN = re.compile(r"[\\`*\[\]<>|~&#!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def markdown_safe(text: object) -> str:
    """``text`` as literal Markdown on one line: non-printable characters become spaces
    (:func:`comment_safe`: no new heading or list item) and every character Markdown could
    read as emphasis, a link, code, a table cell or raw HTML gets a backslash."""
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), comment_safe(text))


#: First characters a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell_safe(text: str) -> str:
    """A text cell of a generated CSV file that a spreadsheet shows as text, never runs as
    a formula: one that starts like a formula gets a leading ``'`` (OWASP's advice);
    non-printable characters become spaces (:func:`comment_safe`)."""
    text = comment_safe(text)
    return "'" + text if text.startswith(_FORMULA_START) else text
