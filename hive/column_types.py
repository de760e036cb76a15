"""Which column type changes Hive allows (hive.metastore.disallow.incompatible.col.type.changes, on by
default): a column may become only a type its stored values convert to implicitly (a number to a
wider number or to a string), so the files written before the change can be read as the new type.
Hive 2.3's rule (TypeInfoUtils.implicitConvertible), applied by alter_table position by position. Pure.
"""

from __future__ import annotations

from typing import Sequence

from hive.errors import InvalidArgument

# Hive's primitive types by PrimitiveGrouping.
_GROUP = {
    **dict.fromkeys(("tinyint", "smallint", "int", "bigint", "float", "double", "decimal"), "numeric"),
    **dict.fromkeys(("string", "char", "varchar"), "string"),
    # Hive 3's timestamp with local time zone (spelled without spaces here) is in the date group too.
    **dict.fromkeys(("date", "timestamp", "timestampwithlocaltimezone"), "date"),
    "boolean": "boolean", "binary": "binary", "void": "void",
    "interval_year_month": "interval", "interval_day_time": "interval",
}
# Numbers widen along this order (a string takes any of them), decimals before floating point as in Hive.
_WIDENING = {name: rank for rank, name in enumerate(
    ("tinyint", "smallint", "int", "bigint", "decimal", "float", "double", "string"))}


def _spelled(type_name: str) -> str:
    return "".join(type_name.split()).lower()


def _primitive(type_name: str) -> str | None:
    """The primitive type's name without its parameters (`varchar(10)` -> varchar); None for a complex
    type or a name Hive does not know."""
    name = _spelled(type_name).split("(", 1)[0]
    return name if name in _GROUP else None


def implicitly_convertible(old: str, new: str) -> bool:
    """Whether a column of type `old` may become `new` (complex types only when unchanged)."""
    if _spelled(old) == _spelled(new):
        return True
    source, target = _primitive(old), _primitive(new)
    if source is None or target is None:
        return False
    if source == target:  # other parameters: varchar(10) -> varchar(20), decimal(10,2) -> decimal(12,4)
        return True
    source_group, target_group = _GROUP[source], _GROUP[target]
    if source_group == "string" and (target == "double" or target_group == "string"):
        return True
    if source == "void" or (source_group in ("date", "numeric") and target_group == "string"):
        return True
    return source in _WIDENING and target in _WIDENING and _WIDENING[source] <= _WIDENING[target]


def check_type_changes(table: str, old: Sequence[tuple[str, str]], new: Sequence[tuple[str, str]]) -> None:
    """Refuse an alter whose columns (name, type), compared by position as Hive does, change a type
    incompatibly; the message names each such column with its old and new type."""
    bad = [f"{name} ({was} to {now})" for (_, was), (name, now) in zip(old, new)
           if not implicitly_convertible(was, now)]
    if bad:
        raise InvalidArgument(
            f"the columns of {table} would change to types their existing data cannot be read as, position by "
            f"position: {', '.join(bad[:10])}{' ...' if len(bad) > 10 else ''}; change them to a wider type "
            "(int to bigint, float to double, any number or date to string), or add new columns "
            "(hive.metastore.disallow.incompatible.col.type.changes=false allows it, as in Hive)")
