"""Output of the admin commands: aligned text tables for people, JSON for scripts.

Every command produces rows (dicts with the same keys) and the column order to show them in;
this module is the only place that knows how they are printed, so the two forms never disagree.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence, TextIO

Row = Mapping[str, Any]


def text_table(columns: Sequence[tuple[str, str]], rows: Sequence[Row]) -> str:
    """Rows under `columns` ((key, header) pairs), each column as wide as its widest cell. Numbers are
    right-aligned; an empty cell prints as "-" so that columns stay countable for `awk` and eyes."""
    headers = [header for _key, header in columns]
    cells = [[_cell(row.get(key)) for key, _header in columns] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(isinstance(row.get(key), (int, float)) and not isinstance(row.get(key), bool)
                                  for row in rows) for key, _header in columns]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    for r in cells:
        lines.append("  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric)).rstrip())
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or "-"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items())) or "-"
    return str(value)


def emit(out: TextIO, columns: Sequence[tuple[str, str]], rows: Sequence[Row], *, as_json: bool,
         empty: str = "") -> None:
    """Print rows as a table (or `empty` when there are none), or as one JSON array."""
    if as_json:
        out.write(json.dumps([dict(r) for r in rows], indent=2, sort_keys=False) + "\n")
    elif not rows and empty:
        out.write(empty + "\n")
    else:
        out.write(text_table(columns, rows) + "\n")


def emit_record(out: TextIO, record: Row, *, as_json: bool) -> None:
    """One object: `key  value` lines (nested lists as indented tables), or a JSON object."""
    if as_json:
        out.write(json.dumps(dict(record), indent=2) + "\n")
        return
    scalars = [(k, v) for k, v in record.items() if not _is_table(v)]
    width = max((len(k) for k, _v in scalars), default=0)
    for key, value in scalars:
        out.write(f"{key.ljust(width)}  {_cell(value)}\n")
    for key, value in record.items():
        if _is_table(value) and value:
            out.write(f"\n{key}:\n")
            columns = [(k, k) for k in value[0]]
            out.write("\n".join("  " + line for line in text_table(columns, value).splitlines()) + "\n")


def _is_table(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value) and bool(value)
