"""Hive's column statistics as values: the kinds of its ColumnStatisticsData union and their fields,
which kinds a column type takes, the checks a write must pass, and how new statistics merge into old
ones (Hive's ColumnStatsMerger, for set_aggr_stats_for's needMerge). Pure: store/column_stats.py keeps
them, hive/stats_aggregation.py aggregates them over partitions.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from typing import Any, Mapping

from hive.errors import InvalidArgument

# A field's value: an i64, a double, bytes, or Hive's Decimal ({"unscaled": big-endian two's complement, "scale"}).
INT, FLOAT, BYTES, DECIMAL = "int", "float", "bytes", "decimal"

# The fields of each member of Hive's ColumnStatisticsData union, with Hive's names: kind -> field -> (type, required).
_NDV = {"numNulls": (INT, True), "numDVs": (INT, True), "bitVectors": (BYTES, False)}
_RANGE_OF = {
    INT: {"lowValue": (INT, False), "highValue": (INT, False)},
    FLOAT: {"lowValue": (FLOAT, False), "highValue": (FLOAT, False)},
    DECIMAL: {"lowValue": (DECIMAL, False), "highValue": (DECIMAL, False)},
}
_HISTOGRAM = {"histogram": (BYTES, False)}  # Hive 4's
FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    "boolean": {"numTrues": (INT, True), "numFalses": (INT, True), "numNulls": (INT, True),
                "bitVectors": (BYTES, False)},
    "long": {**_RANGE_OF[INT], **_NDV, **_HISTOGRAM},
    "double": {**_RANGE_OF[FLOAT], **_NDV, **_HISTOGRAM},
    "string": {"maxColLen": (INT, True), "avgColLen": (FLOAT, True), **_NDV},
    "binary": {"maxColLen": (INT, True), "avgColLen": (FLOAT, True), "numNulls": (INT, True),
               "bitVectors": (BYTES, False)},
    "decimal": {**_RANGE_OF[DECIMAL], **_NDV, **_HISTOGRAM},
    "date": {**_RANGE_OF[INT], **_NDV, **_HISTOGRAM},       # days since the epoch
    "timestamp": {**_RANGE_OF[INT], **_NDV, **_HISTOGRAM},  # seconds since the epoch (Hive 4)
}

# Hive's column type (its name before any parameters) -> the kinds its statistics may have. Timestamps
# take long statistics from Hive 2.3-era writers (Trino's) and timestamp statistics from Hive 4.
_KINDS_BY_TYPE = {
    "boolean": ("boolean",), "tinyint": ("long",), "smallint": ("long",), "int": ("long",),
    "integer": ("long",), "bigint": ("long",), "float": ("double",), "double": ("double",),
    "string": ("string",), "varchar": ("string",), "char": ("string",), "binary": ("binary",),
    "decimal": ("decimal",), "date": ("date",), "timestamp": ("long", "timestamp"),
}
_I64 = (-(2**63), 2**63 - 1)
MAX_BYTES = 1 << 20  # a bit vector or histogram (Hive's are a few KiB)


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """One column's statistics: `kind` names the union member, `data` its fields (FIELDS)."""

    column: str
    column_type: str
    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)
    last_analyzed: int = 0  # seconds since the epoch; set by the store on write


def kinds_for_type(column_type: str) -> tuple[str, ...]:
    """The statistics kinds a column of this Hive type takes; () for types without statistics
    (array, map, struct, uniontype)."""
    return _KINDS_BY_TYPE.get(column_type.split("(", 1)[0].strip().lower(), ())


def _check_value(where: str, type_: str, value: Any) -> None:
    if type_ == INT:
        if isinstance(value, bool) or not isinstance(value, int) or not _I64[0] <= value <= _I64[1]:
            raise InvalidArgument(f"{where} must be a 64-bit integer, got {value!r}")
    elif type_ == FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidArgument(f"{where} must be a number, got {value!r}")
    elif type_ == BYTES:
        if not isinstance(value, bytes) or len(value) > MAX_BYTES:
            raise InvalidArgument(f"{where} must be bytes, at most {MAX_BYTES}")
    else:  # DECIMAL
        if not isinstance(value, Mapping) or set(value) != {"unscaled", "scale"}:
            raise InvalidArgument(f"{where} must be a Decimal (unscaled bytes and scale)")
        _check_value(f"{where}.unscaled", BYTES, value["unscaled"])
        scale = value["scale"]
        if isinstance(scale, bool) or not isinstance(scale, int) or not 0 <= scale <= 38:
            raise InvalidArgument(f"{where}.scale must be 0 to 38, got {scale!r}")


def check(stats: ColumnStats, table_column_type: str) -> None:
    """Refuse statistics whose kind does not fit the column's type, or whose fields are not the kind's."""
    kinds = kinds_for_type(table_column_type)
    if stats.kind not in kinds:
        fits = " or ".join(kinds) if kinds else "none (Hive keeps no statistics for this type)"
        raise InvalidArgument(f"column {stats.column} is {table_column_type}: its statistics kind must be {fits}, "
                              f"not {stats.kind or 'unset'}")
    spec = FIELDS[stats.kind]
    unknown = set(stats.data) - set(spec)
    if unknown:
        raise InvalidArgument(f"{stats.kind} statistics of column {stats.column} have no field(s) "
                              f"{', '.join(sorted(unknown))}")
    for name, (type_, required) in spec.items():
        value = stats.data.get(name)
        if value is None:
            if required:
                raise InvalidArgument(f"{stats.kind} statistics of column {stats.column} need {name}")
            continue
        _check_value(f"{stats.kind} statistics of column {stats.column}: {name}", type_, value)


# -- writing over old statistics, and merging (Hive's ColumnStatsMerger, for set_aggr_stats_for's needMerge) --

def overlay(old: ColumnStats, new: ColumnStats) -> ColumnStats:
    """New statistics written over a column's old ones, as Hive's metastore writes them into the old row
    (StatObjectConverter.setFieldsIntoOldStats): a value the new ones leave unset (a low or high value, a
    sketch) keeps the old one. Of another kind than the old (a retyped column), the new replace them."""
    if old.kind != new.kind:
        return new
    data = {**old.data, **{name: value for name, value in new.data.items() if value is not None}}
    return ColumnStats(new.column, new.column_type, new.kind, data, new.last_analyzed)


def decimal_value(d: Mapping[str, Any]) -> decimal.Decimal:
    return decimal.Decimal(int.from_bytes(d["unscaled"], "big", signed=True)).scaleb(-int(d["scale"]))


_SUMMED = ("numNulls", "numTrues", "numFalses")
_LARGER = ("numDVs", "maxColLen", "avgColLen")


def merge(old: ColumnStats, new: ColumnStats) -> ColumnStats:
    """New statistics of more rows merged into a column's old ones, as Hive merges an INSERT's: counts
    of nulls (and trues, falses) add up; the range widens; the distinct count and lengths are the larger.
    Hive merges the bit vectors' sketches to estimate the distinct count; the gateway cannot, so the merged
    statistics carry none (nor a histogram). Of another kind than the old (a retyped column), the new replace them."""
    if old.kind != new.kind:
        return new
    merged: dict[str, Any] = {}
    for name in FIELDS[new.kind]:
        a, b = old.data.get(name), new.data.get(name)
        if name in ("bitVectors", "histogram") or (a is None and b is None):
            continue
        if a is None or b is None:
            merged[name] = b if a is None else a
        elif name in _SUMMED:
            merged[name] = a + b
        elif name in _LARGER:
            merged[name] = max(a, b)
        else:  # lowValue / highValue
            key = decimal_value if FIELDS[new.kind][name][0] == DECIMAL else None
            merged[name] = (min if name == "lowValue" else max)(a, b, key=key)
    return ColumnStats(new.column, new.column_type, new.kind, merged, new.last_analyzed)
