"""Showing user-supplied text safely: in rich markup and in matplotlib labels.

Names come from user files (cluster, job, switch, axis values). Rich reads ``[...]`` as
markup and matplotlib reads ``$...$`` as mathtext; either can crash a command or change
what is shown. Every user string shown in a table or a plot goes through one of these.
"""

from __future__ import annotations

from rich.markup import escape as _rich_escape


def rich_safe(text: object) -> str:
    """``text`` as a string that rich prints literally (markup brackets escaped)."""
    return _rich_escape(str(text))


def plot_safe(text: object) -> str:
    """``text`` as a string matplotlib draws literally (``$`` escaped, no mathtext)."""
    return str(text).replace("\\", "\\\\").replace("$", r"\$")
