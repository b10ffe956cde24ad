"""The naming patterns of ``monitor --config`` (``names.host: "{cluster}-{host:04d}"``).

A pattern is a Python format string, but only a small part of that language is allowed:
literal text and the documented fields of the unit it names, each with at most a plain
format spec (fill, alignment, sign, zero padding, a width and a precision of at most
:data:`MAX_WIDTH`, a type). Attribute or index access (``{cluster.__class__}``), a
conversion (``!r``), a nested field in the spec and a wider width are refused with the
field path, so a pattern can neither reach into objects nor ask for gigabytes of padding.
"""

from __future__ import annotations

import re
import string

from supernode.errors import InputError

#: Widest width or precision a naming pattern may give one field, in characters.
MAX_WIDTH = 32
#: Longest naming pattern, in characters (a name is a label value).
MAX_PATTERN_CHARS = 256
#: Fields that hold text (the cluster's name, a switch tier); the others are integers.
TEXT_FIELDS = frozenset({"cluster", "tier"})

#: A plain format spec: [[fill]align][sign][#][0][width][,|_][.precision][type].
_SPEC = re.compile(r"(?:[^{}]?[<>=^])?[-+ ]?#?0?(?P<width>[0-9]*)[,_]?"
                   r"(?:\.(?P<precision>[0-9]+))?[bcdoxXs]?\Z")


def check_pattern(path: str, pattern: str, allowed: set[str] | frozenset[str]) -> None:
    """Refuse (InputError at ``path``, e.g. ``names.host``) a pattern that uses anything but
    the ``allowed`` fields with plain, bounded format specs, or that cannot format them."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InputError(path, f"a pattern of {len(pattern):,} characters; at most "
                               f"{MAX_PATTERN_CHARS}")
    try:
        parts = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        raise InputError(path, f"not a valid pattern: {exc}") from None
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in allowed:
            raise InputError(path, f"field {{{name}}} is not allowed: use only "
                                   f"{', '.join(sorted(allowed))} (no attribute or index "
                                   "access)")
        if conversion is not None:
            raise InputError(path, f"field {{{name}}}: no conversion (!{conversion}) allowed")
        match = _SPEC.match(spec or "")
        if match is None:
            raise InputError(path, f"field {{{name}}}: format spec {spec!r} is not allowed; "
                                   "give [fill]align, sign, 0, width, .precision, type")
        for part in ("width", "precision"):
            value = match.group(part)
            if value and int(value) > MAX_WIDTH:
                raise InputError(path, f"field {{{name}}}: {part} {int(value):,} is over the "
                                       f"limit of {MAX_WIDTH}")
    sample = {name: ("x" if name in TEXT_FIELDS else 1) for name in allowed}
    try:
        pattern.format(**sample)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise InputError(path, f"cannot format {pattern!r}: {exc}") from None
