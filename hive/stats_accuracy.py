"""Hive's COLUMN_STATS_ACCURATE parameter of a table or partition (StatsSetupConst): which statistics
its readers may trust without reading the data. Hive's optimizer answers `count(*)`, `min` and `max`
from the metastore alone (hive.compute.query.using.stats) only for what this parameter marks.

Its value is JSON, as Hive 2.3 writes it: `{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true"}}`, the
basic statistics' flag only when set, the columns in Java's string order. A value that is not that
JSON reads as nothing marked, except Hive's old spelling `true` (any case): the basic statistics. Pure:
store/column_stats.py and store/catalog.py apply these rules to what they write.

An alter over Thrift (AlterContext) takes the mark out, as Hive's metastore does when it reads an
altered table's or partition's files again (the gateway reads no files: numFiles and totalSize stay
as sent), so that no engine answers from statistics of data the alter may have replaced.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

STATS_ACCURATE = "COLUMN_STATS_ACCURATE"
_BASIC, _COLUMNS = "BASIC_STATS", "COLUMN_STATS"


def _flag(value: Any) -> bool:
    """A JSON value as Hive's reader takes a flag: true, or a string equal to "true" in any case."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def parse(value: str | None) -> tuple[bool, dict[str, bool]]:
    """(basic statistics accurate, column -> accurate) of a parameter value, read as Hive's Jackson
    reader does: the two known fields only, anything after the JSON object ignored."""
    if value is None:
        return False, {}
    try:
        doc, _ = json.JSONDecoder().raw_decode(value.lstrip(" \t\r\n"))
    except ValueError:
        doc = None
    if isinstance(doc, dict) and set(doc) <= {_BASIC, _COLUMNS} and _scalar(doc.get(_BASIC)):
        columns = doc.get(_COLUMNS) or {}
        if isinstance(columns, dict) and all(_scalar(v) for v in columns.values()):
            return _flag(doc.get(_BASIC)), {name: _flag(v) for name, v in columns.items()}
    return value.lower() == "true", {}


def format_value(basic: bool, columns: Mapping[str, bool]) -> str:
    """The parameter's value as Hive writes it (Java's TreeMap order: UTF-16 code units)."""
    doc: dict[str, Any] = {}
    if basic:
        doc[_BASIC] = "true"
    if columns:
        doc[_COLUMNS] = {name: "true" if columns[name] else "false"
                         for name in sorted(columns, key=lambda c: c.encode("utf-16-be"))}
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def mark_columns(parameters: Mapping[str, str], columns: Iterable[str]) -> dict[str, str]:
    """The parameters after a statistics write of `columns` (Hive's setColumnStatsState): each one
    not yet listed becomes accurate; a listed one keeps its flag, as in Hive."""
    basic, marked = parse(parameters.get(STATS_ACCURATE))
    for column in columns:
        marked.setdefault(column, True)
    return {**parameters, STATS_ACCURATE: format_value(basic, marked)}


def unmark_columns(parameters: Mapping[str, str], columns: Iterable[str]) -> dict[str, str]:
    """The parameters after the statistics of `columns` went (Hive's removeColumnStatsState); the
    value is rewritten in Hive's form even when none of them was listed."""
    basic, marked = parse(parameters.get(STATS_ACCURATE))
    for column in columns:
        marked.pop(column, None)
    return {**parameters, STATS_ACCURATE: format_value(basic, marked)}


# Hive's basic statistics (StatsSetupConst.SUPPORTED_STATS).
BASIC_STATS = ("numFiles", "numRows", "totalSize", "rawDataSize")


def truncated(parameters: Mapping[str, str]) -> dict[str, str]:
    """The parameters after a truncate (Hive's updateStatsForTruncate): the basic statistics present
    become 0 and are accurate; column statistics no longer are."""
    out = {k: ("0" if k in BASIC_STATS else v) for k, v in parameters.items()}
    out[STATS_ACCURATE] = format_value(basic=True, columns={})
    return out


# StatsSetupConst's keys of an alter's EnvironmentContext, and its fastStats: the basic statistics Hive's
# metastore reads from the file system on an alter.
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"
STATS_GENERATED = "STATS_GENERATED"
# hive_metastoreConstants' keys of an alter's EnvironmentContext for a conditional alter (HIVE-26882, in
# Hive 2.3.10, 3 and 4): how Iceberg's HiveCatalog commits without a lock.
EXPECTED_PARAMETER_KEY = "expected_parameter_key"
EXPECTED_PARAMETER_VALUE = "expected_parameter_value"
FAST_STATS = ("numFiles", "totalSize")


@dataclass(frozen=True, slots=True)
class AlterContext:
    """What a Thrift alter's EnvironmentContext says: about statistics, `keep` when DO_NOT_UPDATE_STATS is
    "true" (compared exactly, as Hive does: Spark sends it with every alter), and `generated`, the
    STATS_GENERATED a statistics task ("TASK") or ALTER ... UPDATE STATISTICS ("USER") sends; and
    `expected`, the (key, value) of a conditional alter: it alters only a table whose parameter `key`
    holds `value` (both set, or no condition, as Hive reads them)."""

    keep: bool = False
    generated: str | None = None
    expected: tuple[str, str] | None = None

    @classmethod
    def of(cls, properties: Mapping[str, str] | None) -> AlterContext:
        properties = properties or {}
        key, value = properties.get(EXPECTED_PARAMETER_KEY), properties.get(EXPECTED_PARAMETER_VALUE)
        return cls(keep=properties.get(DO_NOT_UPDATE_STATS) == "true", generated=properties.get(STATS_GENERATED),
                   expected=(key, value) if key is not None and value is not None else None)


NO_CONTEXT = AlterContext()  # an alter sent without an EnvironmentContext: Hive's metastore updates the statistics


def after_table_alter(parameters: Mapping[str, str], context: AlterContext) -> dict[str, str]:
    """The parameters an alter of an unpartitioned table stores (the caller decides which alters: Hive's
    HiveAlterHandler leaves views and renames in place out), as Hive's updateTableStatsFast: a
    DO_NOT_UPDATE_STATS among the table's own parameters is taken out, and skips the rest when true (any
    case); else the mark goes, or only the basic statistics' flag is set when a statistics task sent it."""
    out = dict(parameters)
    if context.keep:
        return out
    if DO_NOT_UPDATE_STATS in out and out.pop(DO_NOT_UPDATE_STATS).lower() == "true":
        return out
    return _basic_state(out, context)


def after_partition_alter(stored: Mapping[str, str], sent: Mapping[str, str], context: AlterContext) -> dict[str, str]:
    """The parameters an alter of a partition stores, as Hive's requireCalStats and updateBasicState decide:
    kept as sent when the fast statistics sent are the stored ones (as numbers) and no statistics task
    sent them; else the mark goes, or only the basic statistics' flag is set for a statistics task."""
    out = dict(sent)
    if context.keep:
        return out
    if context.generated not in ("TASK", "USER") and _fast_stats_same(stored, out):
        return out
    return _basic_state(out, context)


def _fast_stats_same(stored: Mapping[str, str], sent: Mapping[str, str]) -> bool:
    """Hive's isFastStatsSame: both have each fast statistic, equal as numbers (Long.parseLong's; where it
    fails the call, the values count as different here: the mark goes, which is safe)."""
    def number(value: str | None) -> int | None:
        return int(value) if value is not None and _LONG.fullmatch(value) else None

    def same(stat: str) -> bool:
        before = number(stored.get(stat))
        return before is not None and before == number(sent.get(stat))
    return all(same(stat) for stat in FAST_STATS)


_LONG = re.compile(r"[+-]?[0-9]{1,19}")


def _basic_state(parameters: dict[str, str], context: AlterContext) -> dict[str, str]:
    """Hive's setBasicStatsState: TRUE for a statistics task (the columns' flags kept), else the mark removed."""
    if context.generated == "TASK":
        _, columns = parse(parameters.get(STATS_ACCURATE))
        parameters[STATS_ACCURATE] = format_value(basic=True, columns=columns)
    else:
        parameters.pop(STATS_ACCURATE, None)
    return parameters
