"""hive/column_types.py: the column type changes Hive allows. HIVE_2_3 is what Hive 2.3.10's
TypeInfoUtils.implicitConvertible answers for every pair of these types (run with Java 17 on the jars of
the installed pyspark; each type also converts to itself), so the rule here is Hive's pair for pair."""

from __future__ import annotations

import pytest

from hive.column_types import check_type_changes, implicitly_convertible
from hive.errors import InvalidArgument

HIVE_2_3: dict[str, set[str]] = {
    "tinyint": {
        "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "decimal(20,4)", "string", "char(3)",
        "varchar(10)", "varchar(20)"},
    "smallint": {
        "int", "bigint", "float", "double", "decimal(10,2)", "decimal(20,4)", "string", "char(3)", "varchar(10)",
        "varchar(20)"},
    "int": {
        "bigint", "float", "double", "decimal(10,2)", "decimal(20,4)", "string", "char(3)", "varchar(10)",
        "varchar(20)"},
    "bigint": {"float", "double", "decimal(10,2)", "decimal(20,4)", "string", "char(3)", "varchar(10)", "varchar(20)"},
    "float": {"double", "string", "char(3)", "varchar(10)", "varchar(20)"},
    "double": {"string", "char(3)", "varchar(10)", "varchar(20)"},
    "decimal(10,2)": {"float", "double", "decimal(20,4)", "string", "char(3)", "varchar(10)", "varchar(20)"},
    "decimal(20,4)": {"float", "double", "decimal(10,2)", "string", "char(3)", "varchar(10)", "varchar(20)"},
    "string": {"double", "char(3)", "varchar(10)", "varchar(20)"},
    "char(3)": {"double", "string", "varchar(10)", "varchar(20)"},
    "varchar(10)": {"double", "string", "char(3)", "varchar(20)"},
    "varchar(20)": {"double", "string", "char(3)", "varchar(10)"},
    "date": {"string", "char(3)", "varchar(10)", "varchar(20)"},
    "timestamp": {"string", "char(3)", "varchar(10)", "varchar(20)"},
    "boolean": set(),
    "binary": set(),
    "void": {
        "tinyint", "smallint", "int", "bigint", "float", "double", "decimal(10,2)", "decimal(20,4)", "string",
        "char(3)", "varchar(10)", "varchar(20)", "date", "timestamp", "boolean", "binary", "interval_year_month",
        "interval_day_time"},
    "interval_year_month": set(),
    "interval_day_time": set(),
    "array<int>": set(),
    "array<bigint>": set(),
    "map<string,int>": set(),
    "struct<a:int>": set(),
    "struct<a:int,b:int>": set(),
}


@pytest.mark.parametrize("old", list(HIVE_2_3))
def test_each_type_converts_to_what_hive_allows(old: str) -> None:
    allowed = {new for new in HIVE_2_3 if implicitly_convertible(old, new)}
    assert allowed == HIVE_2_3[old] | {old}


def test_spelling_does_not_matter_but_parameters_of_complex_types_do() -> None:
    assert implicitly_convertible("DECIMAL(10, 2)", "decimal(12,4)")
    assert implicitly_convertible("Array< INT >", "array<int>")
    assert not implicitly_convertible("array<int>", "array<string>")
    assert not implicitly_convertible("uniontype<int>", "string")  # not a type this rule knows: unchanged only


def test_an_alter_is_checked_position_by_position() -> None:
    check_type_changes("db.t", [("id", "int"), ("note", "string")], [("id", "bigint"), ("note", "string"),
                                                                      ("added", "boolean")])
    check_type_changes("db.t", [("id", "int"), ("amount", "double")], [("id", "int")])  # a dropped last column
    with pytest.raises(InvalidArgument) as refused:
        # Dropping a middle column moves the next one into its place: Hive compares them by position too.
        check_type_changes("db.t", [("a", "string"), ("b", "double"), ("c", "boolean")],
                           [("a", "string"), ("c", "boolean")])
    assert "c (double to boolean)" in str(refused.value)
    assert "hive.metastore.disallow.incompatible.col.type.changes" in str(refused.value)


def test_timestamp_with_local_time_zone_is_in_hive_3s_date_group() -> None:
    """Hive 3's type (Hive 2.3 has none such: the pairs are Hive 3's TypeInfoUtils.implicitConvertible, its
    PrimitiveGrouping putting TIMESTAMPLOCALTZ in DATE_GROUP): it becomes a string, not another date type."""
    tz = "timestamp with local time zone"
    assert implicitly_convertible(tz, "TIMESTAMP WITH LOCAL TIME ZONE")
    assert implicitly_convertible(tz, "string") and implicitly_convertible(tz, "varchar(40)")
    assert implicitly_convertible("void", tz)
    assert not implicitly_convertible(tz, "timestamp") and not implicitly_convertible("timestamp", tz)
    assert not implicitly_convertible("string", tz) and not implicitly_convertible(tz, "bigint")
