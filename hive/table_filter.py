"""Hive's table filter: the text `get_table_names_by_filter` selects a database's tables with.

Trino lists a schema's views with it (`hive_filter_field_params__presto_view = "true"`, then the same
with LIKE), so SHOW TABLES and information_schema in Trino need it. The language is the partition
filter's (hive/partition_filter.py) over three fields Hive names in hive_metastoreConstants, written
exactly (case matters, as in Hive 2.3.10):

* `hive_filter_field_owner__`: the owner's name, compared as text by code point;
* `hive_filter_field_last_access__`: the last access time, an integer; no LIKE (Hive refuses it);
* `hive_filter_field_params__KEY`: the table parameter KEY (case matters), with =, <>, != and LIKE
  only, as Hive allows; a number stands for its text (`= 10` means "10").

A table without the parameter is neither equal nor unequal to anything (SQL's NULL), as Hive's
query over its TABLE_PARAMS answers. LIKE is a regular expression matched against the whole value
(Hive 2.3 runs Java's String.matches: `LIKE "t.*"`, `LIKE "(?i)alice"`), here by PostgreSQL's engine,
which reads the common syntax alike and refuses, as an invalid regular expression, Java's extras
(`\\p{Alpha}`, flags other than at the start). An empty filter selects every table. Beyond Hive
2.3's grammar, NOT and IN work as they do for partitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hive.partition_filter import Dialect, Filter, parse_filter
from hive.schema import FieldSchema

OWNER_FIELD = "hive_filter_field_owner__"
LAST_ACCESS_FIELD = "hive_filter_field_last_access__"
PARAMS_PREFIX = "hive_filter_field_params__"

FIELDS = (  # every table filter has these; the parameters it names follow
    FieldSchema(OWNER_FIELD, "string"), FieldSchema(LAST_ACCESS_FIELD, "bigint"))
_PARAMS_OPERATORS = frozenset(["=", "==", "<>", "!=", "LIKE", "IN"])


def _admit(name: str) -> FieldSchema | None:
    """A parameter's field, named on first use; any other unknown name is an error."""
    return FieldSchema(name, "string") if name.startswith(PARAMS_PREFIX) and len(name) > len(PARAMS_PREFIX) else None


def _refuse(field: FieldSchema, operator: str) -> str | None:
    if field.name.startswith(PARAMS_PREFIX) and operator.upper() not in _PARAMS_OPERATORS:
        return f"a table parameter takes =, <>, != or LIKE only, not {operator} (Hive's rule)"
    if field.name == LAST_ACCESS_FIELD and operator.upper() == "LIKE":
        return f"LIKE does not apply to {LAST_ACCESS_FIELD}, a number (Hive's rule)"
    return None


def _hint(_: Sequence[FieldSchema]) -> str:
    return f"the fields are {OWNER_FIELD}, {LAST_ACCESS_FIELD} and {PARAMS_PREFIX}<parameter>, written exactly"


TABLE_FILTER = Dialect("table filter", "field", exact_names=True, regex_like=True,
                       admit=_admit, refuse=_refuse, keys_hint=_hint)


@dataclass(frozen=True, slots=True)
class TableFilter:
    """A parsed table filter. It runs in PostgreSQL only (`to_sql`): its LIKE is a regular expression,
    which PostgreSQL's engine checks and its statement time-out bounds (hive/partition_filter.Dialect)."""

    parameter_keys: tuple[str, ...]  # the table parameters it names, in the order `fields` holds them
    _filter: Filter | None  # None: the empty filter, which selects every table

    def to_sql(self, first_param: int, *, column: str = "fields") -> tuple[str, list[object]]:
        """A PostgreSQL predicate over the text[] `column` = [owner, last access time, then the
        values of `parameter_keys`, NULL where a table lacks one], and its parameters from `$first_param`."""
        if self._filter is None:
            return "TRUE", []
        return self._filter.to_sql(first_param, column=column)


def parse_table_filter(text: str) -> TableFilter:
    """Parse a table filter; raises InvalidArgument naming the position for any error in it."""
    if not text.strip():
        return TableFilter((), None)
    parsed = parse_filter(text, FIELDS, TABLE_FILTER)
    keys = tuple(key.name[len(PARAMS_PREFIX):] for key in parsed.keys[len(FIELDS):])
    return TableFilter(keys, parsed)
