"""Column statistics of tables and partitions (Hive's TAB_COL_STATS and PART_COL_STATS): what query
planners read (Trino before every plan, and at the end of every INSERT it merges and writes them back).

Rules, Hive 2.3's unless said (tests/e2e/test_thrift_differential.py checks them against it):
- A write names columns of the table (not its partition keys) and replaces the statistics of each
  column it names (or merges into them: `merge`); the other columns keep theirs. A partition's
  statistics need the partition.
- Statistics come in the kind the column's type has (`kinds_for_type`). Hive 2.3 stores any kind
  and reads it back as garbage; here a kind that does not fit the column is refused.
- They go with what they describe, in the same database transaction: dropping the table, a partition
  (a partition rename is a drop and an add, and Hive 2.3 loses them there too), or a column (or
  changing its type, for the table's own statistics) deletes them; so does the abort that discards a
  partition its txn added (store/txns.py). A table rename keeps them: they are keyed by the table's
  stable id (Hive 2.3 loses the partitions' statistics on rename). A partition dropped in a txn that
  then aborts comes back without them (Hive's drops are not undone at all).
- They are not versioned and carry no notification event (Hive 2.3 has neither), and nothing caches
  them: each read is one indexed query.
- Hive also marks the table's or partition's COLUMN_STATS_ACCURATE parameter on a write; the gateway
  does not, so Hive's optimizer does not answer a query from statistics alone (it reads the data).

Every function takes a connection inside the caller's transaction.
"""

from __future__ import annotations

import base64
import decimal
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import asyncpg

from hive import names as n
from store import catalog
from store.errors import InvalidArgument, NotFound
from store.models import Table
from store.sql import column_stats as sql

TABLE_LEVEL = ""  # the partition name of a table's own statistics

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


# -- JSON form (binary fields base64) --------------------------------------------------------------

def _to_json(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        if value is None:
            continue
        type_ = FIELDS[kind][name][0]
        if type_ == BYTES:
            value = base64.b64encode(value).decode("ascii")
        elif type_ == DECIMAL:
            value = {"unscaled": base64.b64encode(value["unscaled"]).decode("ascii"), "scale": value["scale"]}
        elif type_ == FLOAT and not math.isfinite(value):
            value = repr(float(value))  # JSON has no NaN or infinity
        out[name] = value
    return out


def _from_json(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in data.items():
        type_ = FIELDS[kind][name][0]
        if type_ == BYTES:
            value = base64.b64decode(value)
        elif type_ == DECIMAL:
            value = {"unscaled": base64.b64decode(value["unscaled"]), "scale": value["scale"]}
        elif type_ == FLOAT:
            value = float(value)
        out[name] = value
    return out


def _from_row(row: asyncpg.Record) -> ColumnStats:
    return ColumnStats(row["column_name"], row["column_type"], row["kind"], _from_json(row["kind"], row["data"]),
                       row["last_analyzed"])


def _in_column_order(table: Table, stats: Sequence[ColumnStats]) -> list[ColumnStats]:
    position = {c.name: i for i, c in enumerate(table.columns)}
    return sorted(stats, key=lambda s: position.get(s.column, len(position)))


# -- merging (Hive's ColumnStatsMerger, for set_aggr_stats_for's needMerge) ---------------------------

def _decimal_value(d: Mapping[str, Any]) -> decimal.Decimal:
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
            key = _decimal_value if FIELDS[new.kind][name][0] == DECIMAL else None
            merged[name] = (min if name == "lowValue" else max)(a, b, key=key)
    return ColumnStats(new.column, new.column_type, new.kind, merged, new.last_analyzed)


# -- writes ----------------------------------------------------------------------------------------

async def _partition_name(conn: asyncpg.Connection, table: Table, part_name: str) -> str:
    """The partition's stored name, its row locked so a concurrent drop waits for this write."""
    name = catalog.canonical_names(table, [part_name])[0]
    if not await catalog.lock_partitions(conn, table, [name]):
        raise NotFound(f"partition {name} of table {table.full_name} does not exist")
    return name


async def update(conn: asyncpg.Connection, db_name: str, table_name: str, part_name: str | None,
                 stats: Sequence[ColumnStats], now_s: int, *, merge_old: bool = False) -> None:
    """Replace the named columns' statistics of the table (`part_name` None) or of one partition, or
    with `merge_old` merge them into the old ones (`merge`); column names are stored lower case,
    `last_analyzed` is `now_s`."""
    if not stats:
        raise InvalidArgument("no column statistics given")
    # Shared lock on the table's row: a drop or rename waits until these rows are in, then sees them.
    table = await catalog.get_table(conn, db_name, table_name, lock="share")
    key = TABLE_LEVEL if part_name is None else await _partition_name(conn, table, part_name)
    types = {c.name: c.type for c in table.columns}
    stored: dict[str, ColumnStats] = {}  # a column named twice: the last one, as Hive's loop leaves it
    for s in stats:
        column = n.normalize_identifier(s.column, "column")
        if column not in types:
            raise InvalidArgument(f"column {column} is not a column of table {table.full_name} (partition keys "
                                  f"have no statistics); its columns: {', '.join(types) or 'none'}")
        s = ColumnStats(column, (s.column_type or types[column]).lower(), s.kind, s.data, now_s)
        check(s, types[column])
        stored[column] = s
    if merge_old:
        for row in await conn.fetch(sql.SELECT_FOR_UPDATE, table.table_id, [key], list(stored)):
            stored[row["column_name"]] = merge(_from_row(row), stored[row["column_name"]])
    rows = [{"part_name": key, "column_name": s.column, "column_type": s.column_type, "kind": s.kind,
             "data": _to_json(s.kind, s.data)} for s in stored.values()]
    await conn.execute(sql.UPSERT, table.table_id, rows, now_s)


@dataclass(frozen=True, slots=True)
class StatsUpdate:
    """A write of some columns' statistics of a table (`part_name` None) or of one of its partitions."""

    db_name: str
    table_name: str
    part_name: str | None
    stats: tuple[ColumnStats, ...]
    merge_old: bool = False  # merge into the old statistics (`merge`) rather than replace them


async def update_all(conn: asyncpg.Connection, updates: Sequence[StatsUpdate], now_s: int) -> None:
    """Several writes, all or nothing (Hive's set_aggr_stats_for)."""
    for u in updates:
        await update(conn, u.db_name, u.table_name, u.part_name, u.stats, now_s, merge_old=u.merge_old)


async def delete(conn: asyncpg.Connection, db_name: str, table_name: str, part_name: str | None,
                 column: str | None) -> None:
    """Delete one column's statistics (every column's when `column` is None) of the table or a
    partition; NotFound when there were none."""
    table = await catalog.get_table(conn, db_name, table_name, lock="share")
    key = TABLE_LEVEL if part_name is None else catalog.canonical_names(table, [part_name])[0]
    wanted = None if column is None else n.normalize_identifier(column, "column")
    status = await conn.execute(sql.DELETE, table.table_id, key, wanted)
    if status == "DELETE 0":
        of = f"partition {key} of table {table.full_name}" if part_name is not None else f"table {table.full_name}"
        raise NotFound(f"no column statistics {'for column ' + wanted + ' ' if wanted else ''}of {of}")


# -- reads -----------------------------------------------------------------------------------------

def _columns(columns: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(n.normalize_identifier(c, "column") for c in columns))


async def table_stats(conn: asyncpg.Connection, db_name: str, table_name: str,
                      columns: Sequence[str]) -> list[ColumnStats]:
    """The table's own statistics of the named columns that have them, in the table's column order."""
    table = await catalog.get_table(conn, db_name, table_name)
    rows = await conn.fetch(sql.SELECT, table.table_id, [TABLE_LEVEL], _columns(columns))
    return _in_column_order(table, [_from_row(r) for r in rows])


async def partition_stats(conn: asyncpg.Connection, db_name: str, table_name: str, part_names: Sequence[str],
                          columns: Sequence[str]) -> dict[str, list[ColumnStats]]:
    """Partition name -> its statistics of the named columns, for the named partitions that have any."""
    table = await catalog.get_table(conn, db_name, table_name)
    names = catalog.canonical_names(table, part_names) if part_names else []
    rows = await conn.fetch(sql.SELECT, table.table_id, names, _columns(columns))
    by_partition: dict[str, list[ColumnStats]] = {}
    for row in rows:
        by_partition.setdefault(row["part_name"], []).append(_from_row(row))
    return {name: _in_column_order(table, by_partition[name]) for name in names if name in by_partition}
