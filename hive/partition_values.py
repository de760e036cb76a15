"""Hive's get_partition_values: the rows of partition values it answers, from a table's partitions.

Design note. Hive's ObjectStore.listPartitionValues (2.3, and unchanged in 3.1 and 4) answers in one of
two ways, and the rows differ by more than the filter:

* Without a filter (getDistinctValuesForPartitionsNoTxn), a JDOQL query selects, for each requested key
  in the order asked (a key twice: twice), the substring of the partition's *name* holding that key's
  value, so each value comes back escaped as the name has it (`a%2Fb` for `a/b`: FileUtils.escapePathName,
  hive/names.py). With applyDistinct (its default) the query is SELECT DISTINCT; maxParts > 0 is the
  query's range (after DISTINCT), 0 or less every row. `ascending` is not read: the ordering is commented
  out in Hive's source, so the rows come in the database's order, which Hive promises nothing about
  (Derby's: DISTINCT rows sorted by their values, the others as stored). Here DISTINCT rows are sorted by
  their escaped values, code point by code point (what Derby answers), and the others, one per
  partition, come in partition-name order (as every listing here does); maxParts cuts those orders.
* With a filter (extractPartitionNamesByFilter), the partitions the filter selects, by name ascending
  (descending unless `ascending`), at most maxParts when it is 0 or more, and each row is *every* key's
  value, unescaped (Warehouse.makeValsFromName), whatever keys were asked for; no DISTINCT. The filter
  is read as get_partitions_by_filter reads it (hive/partition_filter.py); the caller selects.

Hive finds a requested key in the name by the key's name as a regular expression and by position
(first, last, in between); a name that is not one of the table's keys finds garbage there (`nope` of a
table keyed (year, month) answers year's values, by the arithmetic of a missing `/nope=`) or fails in
the database. Here the requested keys are the table's, by name in any case, and any other is refused
with the keys the table has (`requested_key_indexes`). An empty list, where Hive fails with an internal
error (it reads the first key before anything else), is refused the same way.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from hive.errors import InvalidArgument
from hive.limits import preview
from hive.names import escape_path_name
from hive.schema import FieldSchema

MAX_KEYS_NAMED = 1000
"""The most keys a request may name (a key may be named more than once); a table has at most a few."""


def requested_key_indexes(table_name: str, keys: Sequence[FieldSchema], requested: Sequence[str | None]) -> list[int]:
    """Where each requested key (by name, in any case, in the order asked) is among the table's partition
    keys; refused (InvalidArgument, naming the table's keys) when none is asked for, when one has no name,
    or names no partition key of the table."""
    have = ", ".join(k.name for k in keys) or "none: it is not partitioned"
    if not requested:
        raise InvalidArgument(f"get_partition_values of {table_name}: partitionKeys names no key; name one or "
                              f"more of its partition keys ({have})")
    if len(requested) > MAX_KEYS_NAMED:
        raise InvalidArgument(f"get_partition_values of {table_name}: partitionKeys names {len(requested)} keys, "
                              f"more than {MAX_KEYS_NAMED}; its partition keys are {have}")
    by_name = {k.name.lower(): i for i, k in enumerate(keys)}
    indexes: list[int] = []
    for at, name in enumerate(requested):
        if name is None:
            raise InvalidArgument(f"get_partition_values of {table_name}: partitionKeys[{at}] has no name; "
                                  f"its partition keys are {have}")
        index = by_name.get(name.lower())
        if index is None:
            raise InvalidArgument(f"get_partition_values of {table_name}: {preview(name, 80)} is not one of its "
                                  f"partition keys ({have})")
        indexes.append(index)
    return indexes


def unfiltered_rows(partitions: Iterable[Sequence[str]], indexes: Sequence[int], *, distinct: bool,
                    max_parts: int) -> list[list[str]]:
    """The rows without a filter (the module's note): of `partitions`' values (in key order, the
    partitions in name order), the escaped values at `indexes`; distinct rows sorted, the others in the
    partitions' order; at most `max_parts` when it is more than 0."""
    rows = [[escape_path_name(values[i]) for i in indexes] for values in partitions]
    if distinct:
        rows = [list(row) for row in sorted({tuple(row) for row in rows})]
    return rows[:max_parts] if max_parts > 0 else rows


def filtered_rows(selected: Sequence[Sequence[str]], *, ascending: bool, max_parts: int) -> list[list[str]]:
    """The rows with a filter (the module's note): the values of every key of each selected partition
    (`selected` in name order), in descending order unless `ascending`, at most `max_parts` when it is 0
    or more."""
    ordered = selected if ascending else selected[::-1]
    if max_parts >= 0:
        ordered = ordered[:max_parts]
    return [list(values) for values in ordered]


def scan_size(*, filtered: bool, distinct: bool, ascending: bool, max_parts: int) -> int | None:
    """How many partitions (in name order) a read must find to answer, None for every one: without a
    filter, max_parts of them when the rows are not distinct (distinct rows are sorted over all); with
    one, max_parts of them in ascending order (descending, the last ones are the first)."""
    if filtered:
        return max_parts if ascending and max_parts >= 0 else None
    return max_parts if not distinct and max_parts > 0 else None
