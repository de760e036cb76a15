"""hive/table_filter.py: Hive's table filter parsed into PostgreSQL's terms (run against PostgreSQL in
tests/e2e/test_thrift_table_filter.py and against Hive 2.3.10 in tests/e2e/test_thrift_differential.py)."""

from __future__ import annotations

import pytest

from hive.errors import InvalidArgument
from hive.table_filter import parse_table_filter


def test_the_parameters_a_filter_names_become_fields_in_first_use_order() -> None:
    parsed = parse_table_filter('hive_filter_field_params__b = "1" or (hive_filter_field_params__a <> "2" '
                                'and hive_filter_field_params__b LIKE "x.*")')
    assert parsed.parameter_keys == ("b", "a")
    predicate, params = parsed.to_sql(4)
    assert predicate.count("fields[3]") == 2 and "fields[4]" in predicate and "$6" in predicate
    assert params == ["1", "2", "(?p)^(?:x.*)$"]


def test_a_regular_expression_keeps_its_leading_flags_first() -> None:
    _, params = parse_table_filter('hive_filter_field_owner__ LIKE "(?i)ali.*"').to_sql(1)
    assert params == ["(?pi)^(?:ali.*)$"]


def test_the_empty_filter_selects_every_table() -> None:
    for text in ("", "  "):
        assert parse_table_filter(text).to_sql(4) == ("TRUE", [])


@pytest.mark.parametrize(("text", "why"), [
    ('hive_filter_field_params__k >= "5"', "position 29: a table parameter takes =, <>, != or LIKE only, not >="),
    ('hive_filter_field_params__k between "1" and "2"', "not BETWEEN"),
    ('hive_filter_field_last_access__ LIKE "5"', "LIKE does not apply to hive_filter_field_last_access__"),
    ('Hive_filter_field_owner__ = "a"', "unknown field 'Hive_filter_field_owner__'"),
    ('hive_filter_field_params__ = "a"', "unknown field 'hive_filter_field_params__'"),
    ('hive_filter_field_last_access__ = "soon"', "'soon' is not a valid bigint"),
])
def test_what_hive_refuses_is_refused_with_the_position(text: str, why: str) -> None:
    with pytest.raises(InvalidArgument, match="bad table filter") as caught:
        parse_table_filter(text)
    assert why in str(caught.value)


def test_a_table_filter_does_not_run_in_python() -> None:
    """Its LIKE is a regular expression: only PostgreSQL's engine, bounded by the statement time-out, runs it."""
    from hive.partition_filter import parse_filter
    from hive.table_filter import TABLE_FILTER, FIELDS

    with pytest.raises(ValueError, match="PostgreSQL only"):
        parse_filter('hive_filter_field_owner__ = "a"', FIELDS, TABLE_FILTER).matches(["a", "0"])
