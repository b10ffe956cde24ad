"""The one XML reader of the toolkit: bounded in size, depth and elements, no entities.

:func:`parse_xml` builds an ElementTree from text with the standard library's expat
parser, fed incrementally through :class:`xml.etree.ElementTree.XMLPullParser` so that
the limits hold while the text is read, before any deep structure is walked:

* a DOCTYPE or an entity declaration is refused (no entity expansion: no "billion
  laughs", no external entities);
* nesting deeper than :data:`MAX_XML_DEPTH` elements is refused at the first element
  past it;
* more than :data:`MAX_XML_ELEMENTS` elements are refused;
* the text itself is bounded by the caller (``import nccl-xml``: 1 MiB).

:func:`xml_int` reads an integer attribute within a stated range (the input-limits rule
of :mod:`supernode.bounds`), so a 400-digit ``speed`` is a refusal naming the attribute,
never an overflow.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from supernode.bounds import MAX_INT64, number_problem
from supernode.errors import InputError

#: Deepest element nesting read (NCCL topologies nest about 10 levels).
MAX_XML_DEPTH = 64
#: Most elements read from one document.
MAX_XML_ELEMENTS = 100_000
#: Longest integer attribute read, in characters (``-0x`` and 64 bits fit).
MAX_INT_CHARS = 24
_CHUNK = 1 << 16


def parse_xml(text: str, where: str, source: str | None = None) -> ET.Element:
    """The root element of XML ``text`` within the module's limits; InputError at
    ``where`` (the root element's name) otherwise."""
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise InputError(where, "DOCTYPE or entity declarations are not read",
                         source=source)
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    depth = elements = 0
    root: ET.Element | None = None
    try:
        for start in range(0, max(len(text), 1), _CHUNK):
            parser.feed(text[start:start + _CHUNK])
            for item in parser.read_events():
                event, element = item[0], item[-1]
                if event == "end":
                    depth -= 1
                    continue
                depth += 1
                elements += 1
                if root is None and isinstance(element, ET.Element):
                    root = element
                if depth > MAX_XML_DEPTH:
                    raise InputError(where, f"elements nest more than {MAX_XML_DEPTH} "
                                            f"levels deep (the limit)", source=source)
                if elements > MAX_XML_ELEMENTS:
                    raise InputError(where, f"more than {MAX_XML_ELEMENTS:,} elements "
                                            f"(the limit)", source=source)
        parser.close()
    except ET.ParseError as exc:
        raise InputError(where, f"not well-formed XML: {exc}", source=source) from None
    if root is None:
        raise InputError(where, "no element: not an XML document", source=source)
    return root


def xml_int(node: ET.Element, attr: str, where: str, source: str | None = None,
            default: int | None = None, low: int | None = None,
            high: int | None = MAX_INT64) -> int:
    """Integer attribute ``attr`` of ``node`` (decimal or ``0x`` hex) in ``low``..``high``;
    ``default`` when absent (if given); InputError at ``where.attr`` otherwise."""
    text = node.get(attr)
    if text is None and default is not None:
        return default
    field = f"{where}.{attr}"
    if text is None:
        raise InputError(field, "missing: an integer is required", source=source)
    value = None
    if len(text.strip()) <= MAX_INT_CHARS:
        try:
            value = int(text, 0)
        except ValueError:
            value = None
    if value is None:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise InputError(field, f"must be an integer within 64 bits (at most "
                                f"{MAX_INT64:,} in size), got {shown!r}", source=source)
    problem = number_problem(value, low, high)
    if problem is not None:
        raise InputError(field, problem, source=source)
    return value
