"""hive/table_filter.py: Hive's table filter parsed into PostgreSQL's terms (run against PostgreSQL in
tests/e2e/test_thrift_table_filter.py and against Hive 2.3.10 in tests/e2e/test_thrift_differential.py,
where Hive Metastore 2.3.10 confirms the readings below)."""

from __future__ import annotations

import pytest

from hive.errors import InvalidArgument
from hive.partition_filter import Comparison, Like, parse_filter
from hive.table_filter import FIELDS, TABLE_FILTER, parse_table_filter


def test_the_parameters_a_filter_names_become_fields_in_first_use_order() -> None:
    parsed = parse_table_filter('hive_filter_field_params__b = "1" or (hive_filter_field_params__a <> "2" '
                                'and hive_filter_field_params__b LIKE "x.*")')
    assert parsed.parameter_keys == ("b", "a")
    predicate, params = parsed.to_sql(4)
    assert predicate.count("fields[3]") == 3 and predicate.count("fields[4]") == 2 and "$6" in predicate
    assert params == ["1", "2", "x%"]


def test_a_table_without_a_named_parameter_is_never_selected() -> None:
    """Hive's JDO query joins TABLE_PARAMS for each parameter it names: an OR does not bring the table back."""
    predicate, _ = parse_table_filter('hive_filter_field_owner__ = "a" or hive_filter_field_params__k = "1" '
                                      'or hive_filter_field_params__j = "2"').to_sql(1)
    assert predicate.endswith(" AND fields[3] IS NOT NULL AND fields[4] IS NOT NULL")
    assert "IS NOT NULL" not in parse_table_filter('hive_filter_field_owner__ = "a"').to_sql(1)[0]


@pytest.mark.parametrize(("text", "root"), [
    # LIKE as Hive 2.3.10's metastore runs it: SQL LIKE made from the pattern, as for partitions.
    ('hive_filter_field_owner__ LIKE "ali.*"', Like(0, "ali%")),
    ('hive_filter_field_owner__ LIKE "(?i)ALI.*"', Like(0, "ali%", ascii_case_blind=True)),
    ('hive_filter_field_owner__ LIKE "[ab]|c+"', Like(0, "[ab]|c+")),
    ('hive_filter_field_owner__ LIKE "x(?i)"', Like(0, "x(?i)")),
    # A string keeps its backslashes (Hive's lexer drops none), and LIKE reads them as partitions' LIKE does.
    (r'hive_filter_field_owner__ LIKE "a\.b"', Like(0, "a.b")),
    (r'hive_filter_field_owner__ LIKE "a\\.b"', Like(0, r"a\\\\_b")),
    (r'hive_filter_field_owner__ LIKE "a\b"', Like(0, r"a\\b")),
    (r'hive_filter_field_owner__ = "x\y"', Comparison(0, "=", "x\\y")),
    (r'hive_filter_field_owner__ = "a\"b"', Comparison(0, "=", 'a\\"b')),
    # A number is a Java long; against text, the long's own text.
    ("hive_filter_field_params__k = 010", Comparison(2, "=", "10")),
    ("hive_filter_field_params__k = -0", Comparison(2, "=", "0")),
    ("-5 <> hive_filter_field_owner__", Comparison(0, "<>", "-5")),
    ("hive_filter_field_params__k LIKE 010", Like(2, "10")),
    ("hive_filter_field_last_access__ > 05", Comparison(1, ">", 5)),
    ("hive_filter_field_last_access__ = 9223372036854775807", Comparison(1, "=", 2**63 - 1)),
])
def test_hive_2_3_reads_like_strings_and_numbers_so(text: str, root: object) -> None:
    assert parse_filter(text, FIELDS, TABLE_FILTER).root == root


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
    ("hive_filter_field_params__k = 1.0", "position 31: a number in a table filter is a whole number"),
    ("hive_filter_field_last_access__ = +5", "a number in a table filter is a whole number"),
    ("hive_filter_field_params__k = 9223372036854775808", "does not fit a Java long"),
    ("hive_filter_field_owner__ LIKE 5", "expected a quoted pattern after LIKE"),  # Hive: only a parameter's
    ('hive_filter_field_owner__ LIKE "(?i)é"', "with (?i), a LIKE pattern may hold ASCII letters only"),
])
def test_what_hive_refuses_is_refused_with_the_position(text: str, why: str) -> None:
    with pytest.raises(InvalidArgument, match="bad table filter") as caught:
        parse_table_filter(text)
    assert why in str(caught.value)


def test_whitespace_between_tokens_is_hive_2_3_lexers_alone() -> None:
    """Hive 2.3's lexer (the partition filter's) skips space, tab, CR and LF only: a no-break space there is
    a MetaException in Hive Metastore 2.3.10 (probed with get_table_names_by_filter); inside a string it is
    itself."""
    with pytest.raises(InvalidArgument, match="position 26: unexpected character '\\\\xa0'"):
        parse_table_filter('hive_filter_field_owner__\u00a0= "alice"')
    assert parse_filter('hive_filter_field_owner__\t=\r\n"a\u00a0b"', FIELDS, TABLE_FILTER).root == \
        Comparison(0, "=", "a\u00a0b")
