"""The order of Hive 4's SHOW PARTITIONS ... ORDER BY, as its metastore sorts partition names on PostgreSQL.

Hive sends the order as `partColIndex[,partColIndex]*:[-|+]+` (MetaStoreUtils.makeOrderSpecs): the
0-based positions of partition keys, then one `+` (ascending) or `-` (descending) per key; `0,1:+-` sorts
by the first key ascending, then the second descending. Its MetaStoreDirectSql.getPartitionNamesViaSql
sorts the values as their key's type says: integral keys (tinyint to bigint) as numbers, date and
timestamp keys as such, every other type as text; the default partition's value (`defaultPartName`) is
SQL NULL, which PostgreSQL puts after every value ascending and before every value descending. Without
an order, by partition name. Partitions that sort alike keep their order by name here (SQL leaves it
open). Text is compared by code point, where PostgreSQL compares in its database's collation: the two
agree on ASCII digits, letters of one case and punctuation, not on mixed case under a linguistic
collation.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Callable, Sequence

from hive.errors import InvalidArgument
from hive.limits import preview

_INTEGRAL = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})


def parse_order(spec: str | None, key_count: int) -> list[tuple[int, bool]]:
    """(key position, descending) per ordering key; [] for none (no spec, or one that is not two parts
    around a `:`, as Hive's makeOrderSpecs reads it). A position out of range, a count that differs or a
    sign other than + and - is refused."""
    parts = (spec or "").split(":")
    if len(parts) != 2:
        return []
    positions, signs = parts
    try:
        indexes = [int(p) for p in positions.split(",")]
    except ValueError:
        raise InvalidArgument(f"partition order {preview(spec or '', 40)}: the positions before ':' must be "
                              "numbers, as in '0,1:+-'") from None
    if len(indexes) != len(signs) or any(s not in "+-" for s in signs):
        raise InvalidArgument(f"partition order {preview(spec or '', 40)}: one '+' or '-' per position after ':', "
                              "as in '0,1:+-'")
    if any(not 0 <= i < key_count for i in indexes):
        raise InvalidArgument(f"partition order {preview(spec or '', 40)}: a position is not one of the table's "
                              f"{key_count} partition keys (0 to {key_count - 1})")
    return [(i, s == "-") for i, s in zip(indexes, signs)]


def _typed(type_name: str) -> Callable[[str], Any]:
    base = type_name.lower().split("(")[0].strip()
    if base in _INTEGRAL:
        return Decimal
    if base == "date":
        return dt.date.fromisoformat
    if base == "timestamp":
        return dt.datetime.fromisoformat
    return str


def ordered(names: Sequence[str], values: Sequence[Sequence[str]], key_types: Sequence[str],
            order: list[tuple[int, bool]], default_partition_name: str) -> list[str]:
    """`names` (each partition's, its `values` beside it) in `order` (parse_order), ties by name; by name
    alone for no order."""
    rows = sorted(zip(names, values), key=lambda row: row[0])
    for position, descending in reversed(order):  # stable sorts, the last key first
        typed = _typed(key_types[position])

        def key(row: tuple[str, Sequence[str]], typed: Callable[[str], Any] = typed,
                position: int = position) -> tuple[int, Any]:
            value = row[1][position]
            if value == default_partition_name:
                return (2, 0)  # NULL: last ascending, first descending; alike among themselves
            try:
                return (0, typed(value))
            except (ValueError, ArithmeticError):  # one its key's type does not read (the store lets none in)
                return (1, value)  # after the typed ones, as text

        rows.sort(key=key, reverse=descending)
    return [name for name, _ in rows]
