"""``bom.csv`` of a report folder: the bill of materials (``results.json`` -> ``bom``,
:mod:`supernode.design.bom`), one row per component, units in the column names."""

from __future__ import annotations

import csv
import io
from typing import Any

from supernode.textsafe import csv_cell_safe

#: ``bom.csv`` columns (the keys of a ``bom.rows`` entry), units in the names.
CSV_COLUMNS = ("component", "category", "tier", "part", "count", "length_class",
               "cable_type", "stocked_length", "run_m", "reach_m", "capacity_bytes",
               "write_bandwidth_bytes_per_s", "price_key", "unit_price_usd",
               "extended_price_usd", "price_source", "derived_from")


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    return csv_cell_safe(value) if isinstance(value, str) else value


def bom_csv(bom: dict[str, Any]) -> str:
    """``bom.csv`` text: a header of :data:`CSV_COLUMNS` and one line per row (an empty
    cell: not applicable, or no price); text cells never read as spreadsheet formulas."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in bom["rows"]:
        writer.writerow({k: _cell(row[k]) for k in CSV_COLUMNS})
    return buffer.getvalue()
