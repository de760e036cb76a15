"""Hive's table filter: the text `get_table_names_by_filter` selects a database's tables with.

Trino lists a schema's views with it (`hive_filter_field_params__presto_view = "true"`, then the same
with LIKE), so SHOW TABLES and information_schema in Trino need it. The language is the partition
filter's (hive/partition_filter.py) over three fields Hive names in hive_metastoreConstants, written
exactly (case matters, as in Hive 2.3.10):

* `hive_filter_field_owner__`: the owner's name, compared as text by code point;
* `hive_filter_field_last_access__`: the last access time, an integer; no LIKE (Hive refuses it);
* `hive_filter_field_params__KEY`: the table parameter KEY (case matters), with =, <>, != and LIKE
  only, as Hive allows.

What Hive Metastore 2.3.10 answers, probed on Derby and on PostgreSQL alike, and what this dialect
(TABLE_FILTER) does:

* A filter that names a table parameter selects only tables that have it, wherever it is named, even
  in one arm of an OR: `hive_filter_field_last_access__ = 0 or hive_filter_field_params__k = "x"`
  selects no table without k. Hive's JDO query reads `parameters.get("k")` through an inner join of
  TABLE_PARAMS (TableFilter.to_sql adds the same condition).
* LIKE is not a regular expression, though Hive's query writes String.matches: DataNucleus turns it
  into SQL LIKE, as for a partition filter (hive/partition_filter.py `_hive_like`): `.*` any run, `.`
  one character, a leading `(?i)` ignores the case of ASCII letters, and every other character is
  itself, `%`, `_`, `[`, `|` and `+` included. It matches the whole value, line ends and all.
* A quoted string keeps its backslashes (`"x\\y"` is x, a backslash, y): Hive's lexer only stops a
  backslash's next character from ending the string.
* A number is an integral literal, digits after an optional minus (`1.0` and `+5` are refused), read
  as a Java long; against the owner or a parameter it stands for that long's text (`= 010` means
  "10"), and a parameter's LIKE takes one too (`LIKE 10`).

An empty filter selects every table. Beyond Hive 2.3's grammar, NOT and IN work as they do for
partitions, and a quoted number compared with the last access time is that number (Hive 2.3 matches
nothing).
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


def _is_parameter(field: FieldSchema) -> bool:
    return field.name.startswith(PARAMS_PREFIX)


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


TABLE_FILTER = Dialect("table filter", "field", exact_names=True, hive_like=True, verbatim_strings=True,
                       integral_numbers=True, text_numbers=True, like_numbers=_is_parameter, admit=_admit,
                       refuse=_refuse, keys_hint=_hint, hive_whitespace=True)


@dataclass(frozen=True, slots=True)
class TableFilter:
    """A parsed table filter, run in PostgreSQL (`to_sql`) over the tables of one database."""

    parameter_keys: tuple[str, ...]  # the table parameters it names, in the order `fields` holds them
    _filter: Filter | None  # None: the empty filter, which selects every table

    def to_sql(self, first_param: int, *, column: str = "fields") -> tuple[str, list[object]]:
        """A PostgreSQL predicate over the text[] `column` = [owner, last access time, then the
        values of `parameter_keys`, NULL where a table lacks one], and its parameters from `$first_param`.
        A table that lacks a parameter the filter names is not selected, whatever the rest says (Hive's
        inner join of TABLE_PARAMS: the module's docstring)."""
        if self._filter is None:
            return "TRUE", []
        predicate, params = self._filter.to_sql(first_param, column=column)
        present = "".join(f" AND {column}[{i}] IS NOT NULL"
                          for i in range(len(FIELDS) + 1, len(FIELDS) + len(self.parameter_keys) + 1))
        return predicate + present, params


def parse_table_filter(text: str) -> TableFilter:
    """Parse a table filter; raises InvalidArgument naming the position for any error in it."""
    if not text.strip():
        return TableFilter((), None)
    parsed = parse_filter(text, FIELDS, TABLE_FILTER)
    keys = tuple(key.name[len(PARAMS_PREFIX):] for key in parsed.keys[len(FIELDS):])
    return TableFilter(keys, parsed)
