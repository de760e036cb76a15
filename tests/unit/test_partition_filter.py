"""Partition filters: grammar, typed comparisons, NULL (default partition) semantics, errors."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from decimal import Decimal
from typing import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.errors import InvalidArgument
from hive.schema import FieldSchema
from hive.names import DEFAULT_PARTITION_NAME as DEFAULT
from hive.partition_filter import (HIVE_PARTITION_FILTER, PARTITION_FILTER, And, Between, Comparison, Dialect,
                                   InList, Like, Not, Or, parse_filter)

KEYS = (FieldSchema("ds", "date"), FieldSchema("hr", "int"), FieldSchema("region", "string"))


def selected(text: str, rows: Sequence[tuple[str, ...]], keys: tuple[FieldSchema, ...] = KEYS) -> list[tuple[str, ...]]:
    f = parse_filter(text, keys)
    return [r for r in rows if f.matches(r)]


def hours(text: str, values: list[str]) -> list[str]:
    """The hr values (as stored) that `text` selects, the other keys fixed."""
    return [r[1] for r in selected(text, [("2024-01-01", v, "us") for v in values])]


HRS = ["1", "5", "9", "10", DEFAULT]


@pytest.mark.parametrize(("text", "expected"), [
    ("hr = 5", ["5"]), ("hr == 5", ["5"]), ("hr != 5", ["1", "9", "10"]), ("hr <> 5", ["1", "9", "10"]),
    ("hr < 9", ["1", "5"]), ("hr <= 9", ["1", "5", "9"]), ("hr > 9", ["10"]), ("hr >= 9", ["9", "10"]),
    ("hr IN (1, 10, 11)", ["1", "10"]), ("hr NOT IN (1, 10)", ["5", "9"]),
    ("hr BETWEEN 5 AND 9", ["5", "9"]), ("hr NOT BETWEEN 5 AND 9", ["1", "10"]), ("hr BETWEEN 9 AND 5", []),
    ("hr LIKE '1%'", ["1", "10"]), ("hr NOT LIKE '1%'", ["5", "9"]), ("hr LIKE '_'", ["1", "5", "9"]),
])
def test_each_operator(text: str, expected: list[str]) -> None:
    assert hours(text, HRS) == expected


@pytest.mark.parametrize("op", ["=", "==", "!=", "<>", "<", "<=", ">", ">="])
def test_a_value_on_the_left_mirrors_the_operator(op: str) -> None:
    mirrored = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
    assert hours(f"9 {op} hr", HRS) == hours(f"hr {mirrored} 9", HRS)
    assert parse_filter(f"'2024-01-02' {op} ds", KEYS).root == parse_filter(f"ds {mirrored} '2024-01-02'", KEYS).root


def test_and_binds_tighter_than_or_and_not_tighter_than_and() -> None:
    a, b, c = (Comparison(1, "=", n) for n in (1, 2, 3))
    assert parse_filter("hr = 1 OR hr = 2 AND hr = 3", KEYS).root == Or((a, And((b, c))))
    assert parse_filter("hr = 1 AND hr = 2 OR hr = 3", KEYS).root == Or((And((a, b)), c))
    assert parse_filter("NOT hr = 1 AND hr = 2", KEYS).root == And((Not(a), b))
    assert parse_filter("NOT (hr = 1 AND hr = 2)", KEYS).root == Not(And((a, b)))
    assert parse_filter("(hr = 1 OR hr = 2) AND hr = 3", KEYS).root == And((Or((a, b)), c))
    assert parse_filter("NOT NOT hr = 1", KEYS).root == Not(Not(a))
    assert parse_filter("hr = 1 or hr = 2 or hr = 3", KEYS).root == Or((a, b, c))
    assert hours("hr = 1 OR hr = 5 AND hr = 9", HRS) == ["1"]
    assert hours("(hr = 1 OR hr = 5) AND hr = 9", HRS) == []


def test_a_group_of_the_same_junction_merges_into_it_so_parentheses_do_not_nest_it() -> None:
    """(a OR b) OR c is a OR b OR c (and alike for AND), in SQL's three-valued logic too. Hudi's Hive sync
    writes the partitions it names one level deeper each, `((((p = 'a') OR (p = 'b')) OR (p = 'c')) ...)`,
    up to 1,000 of them (hoodie.datasource.hive_sync.filter_pushdown_max_size), which Hive's parser takes."""
    a, b, c = (Comparison(1, "=", n) for n in (1, 2, 3))
    assert parse_filter("(hr = 1 OR hr = 2) OR hr = 3", KEYS).root == Or((a, b, c))
    assert parse_filter("hr = 1 AND (hr = 2 AND (hr = 3))", KEYS).root == And((a, b, c))
    assert parse_filter("(hr = 1 OR hr = 2) AND hr = 3", KEYS).root == And((Or((a, b)), c))
    assert parse_filter("NOT (hr = 1 OR hr = 2) OR hr = 3", KEYS).root == Or((Not(Or((a, b))), c))
    assert parse_filter("(" * 500 + "hr = 1" + ")" * 500, KEYS).root == a
    hudi = "(" * 999 + "(hr = 0)" + "".join(f" OR (hr = {n}))" for n in range(1, 1000))
    for dialect in (HIVE_PARTITION_FILTER, PARTITION_FILTER):
        f = parse_filter(hudi, KEYS, dialect)
        assert f.root == Or(tuple(Comparison(1, "=", n) for n in range(1000)))
        assert hours(hudi, ["5", "999", "1000", DEFAULT]) == ["5", "999"]
        assert len(f.to_sql(1)[1]) == 1000


def test_what_stays_nested_is_bounded() -> None:
    ok, deep = ("(hr = 1 OR (hr = 2 AND " * n + "hr = 3" + "))" * n for n in (32, 33))
    assert parse_filter(ok, KEYS).root is not None  # 64 levels, alternating OR and AND
    with pytest.raises(InvalidArgument, match="nests NOT, AND and OR more than 64 deep"):
        parse_filter(deep, KEYS)
    assert parse_filter("NOT " * 64 + "hr = 1", KEYS).root is not None
    with pytest.raises(InvalidArgument, match="more than 64 deep"):
        parse_filter("NOT " * 5000 + "hr = 1", KEYS)
    with pytest.raises(InvalidArgument, match=r"expected '\)' to close the '\(' at position 1"):
        parse_filter("(" * 3 + "hr = 1" + ")" * 2, KEYS)
    with pytest.raises(InvalidArgument, match=r"expected AND, OR or the end of the filter, found '\)'"):
        parse_filter("(hr = 1))", KEYS)


@pytest.mark.parametrize("dialect", [HIVE_PARTITION_FILTER, PARTITION_FILTER])
def test_an_unquoted_date_is_a_date_literal_as_in_hives_grammar(dialect: Dialect) -> None:
    """Filter.g's DateLiteral (Hive 0.13 on; Hudi's Hive sync writes a date key's value so): a date against a
    date key, its text against a string key (Hive Metastore 2.3.10 answers both so); not a date: refused."""
    rows = [("2024-01-15", "1", "2024-01-15"), ("2024-02-01", "1", "x")]
    keys = KEYS
    assert [r[0] for r in rows if parse_filter("ds = 2024-01-15", keys, dialect).matches(r)] == ["2024-01-15"]
    assert [r[0] for r in rows if parse_filter("ds > 2024-01-15", keys, dialect).matches(r)] == ["2024-02-01"]
    between = parse_filter("ds BETWEEN 2024-01-01 AND 2024-01-31 OR (ds) IN (2024-02-01)", keys, dialect)
    assert [r[0] for r in rows if between.matches(r)] == ["2024-01-15", "2024-02-01"]
    assert [r[0] for r in rows if parse_filter("region = 2024-01-15", keys, dialect).matches(r)] == ["2024-01-15"]
    assert parse_filter("ds = 2024-01-15", keys, dialect).root == parse_filter("ds = '2024-01-15'", keys, dialect).root
    for text, message in (("ds = 2024-02-30", "not a valid date"), ("hr = 2024-01-15", "is a date, but key 'hr'"),
                          ("ds = 2024-1-5", "'2024-1-5' is not a date"), ("ds = 2024-01-15x", "is not a date")):
        with pytest.raises(InvalidArgument, match=message):
            parse_filter(text, keys, dialect)
    mixed = {"(ds) IN (2024-01-15, '2024-02-01')": ["2024-01-15", "2024-02-01"],
             "ds BETWEEN '2024-01-01' AND 2024-01-31": ["2024-01-15"]}
    for text, selects in mixed.items():  # Hive's grammar takes one kind of literal in a list; the gateway's own, any
        if dialect is HIVE_PARTITION_FILTER:
            with pytest.raises(InvalidArgument, match="unquoted dates"):
                parse_filter(text, keys, dialect)
        else:
            assert [r[0] for r in rows if parse_filter(text, keys, dialect).matches(r)] == selects


def test_keywords_and_key_names_are_case_insensitive() -> None:
    lower = parse_filter("hr in (1) and not hr between 2 and 3 or region like 'u%'", KEYS).root
    mixed = parse_filter("HR In (1) AnD NoT Hr BETWEEN 2 aNd 3 oR REGION LiKe 'u%'", KEYS).root
    assert lower == mixed == parse_filter("`HR` IN (1) AND NOT `hr` BETWEEN 2 AND 3 OR `Region` LIKE 'u%'", KEYS).root
    assert parse_filter("hr NOT IN (1)", KEYS).root == Not(InList(1, (1,)))
    assert parse_filter("b = true OR B = False", [FieldSchema("b", "boolean")]).root == \
        Or((Comparison(0, "=", True), Comparison(0, "=", False)))


def test_a_key_in_parentheses_is_the_key_as_in_hive_2_3() -> None:
    """Hive 2.3's grammar takes IN only as `(key) IN (...)`, which Spark SQL's Hive client sends."""
    assert parse_filter('(region) in ("us", "eu")', KEYS).root == InList(2, ("us", "eu"))
    assert parse_filter("(hr) NOT IN (1, 2)", KEYS).root == parse_filter("hr NOT IN (1, 2)", KEYS).root
    assert parse_filter("((hr)) BETWEEN 1 AND 2 OR 3 = (hr)", KEYS).root == \
        Or((Between(1, 1, 2), Comparison(1, "=", 3)))
    # Parentheses beyond the key's enclose a sub-expression.
    assert parse_filter("((hr) IN (1) OR (`HR`) = 2) AND (hr = 3)", KEYS).root == \
        And((Or((InList(1, (1,)), Comparison(1, "=", 2))), Comparison(1, "=", 3)))
    assert hours("(hr) in (1, 10) and not ((hr) in (10))", HRS) == ["1"]


@pytest.mark.parametrize(("regex", "like"), [
    ("2024.*", "2024%"), (".*-01-.*", "%-01-%"), ("a.b", "a_b"), ("a\\.b", "a.b"), ("100%", "100\\%"),
    ("a_b", "a\\_b"), ("[12]+|x?", "[12]+|x?"), ("a*", "a*"), ("a\\", "a\\\\"), ("a\\\\b", "a\\\\\\\\b"),
    ("a\\%", "a\\\\%"), ("a\\d", "a\\\\d"), ("..*", "_%"), ("", ""),
])
def test_hive_like_is_the_sql_like_hive_2_3_makes_of_a_regular_expression(regex: str, like: str) -> None:
    if not regex.endswith("\\"):  # a string may not end with a backslash: it keeps the quote from closing it
        assert parse_filter(f'region like "{regex}"', KEYS, HIVE_PARTITION_FILTER).root == Like(2, like)


@pytest.mark.parametrize(("literal", "value"), [
    (r'"a\b"', "a\\b"), (r'"a\\b"', "a\\\\b"), (r'"a\"b"', 'a\\"b'), (r"'it\'s'", "it\\'s"), ('"a\nb"', "a\nb"),
    ('"it\'s"', "it's"),
])
def test_hive_2_3_strings_keep_their_backslashes(literal: str, value: str) -> None:
    """Hive's lexer lets a backslash keep the next character from ending the string and drops nothing:
    Spark's Hive client quotes a value with a backslash as it is, `ds = "a\\b"`, and means a\\b."""
    assert parse_filter(f"region = {literal}", KEYS, HIVE_PARTITION_FILTER).root == Comparison(2, "=", value)


def test_hive_like_ignores_the_case_of_ascii_letters_after_a_leading_flag_and_takes_string_keys_only() -> None:
    f = parse_filter('region like "(?i)Us.*"', KEYS, HIVE_PARTITION_FILTER)
    assert f.root == Like(2, "us%", ascii_case_blind=True)
    matched = [r for r in ("us", "US-east", "uS", "ús", "u") if f.matches(("2024-01-01", "1", r))]
    assert matched == ["us", "US-east", "uS"]
    assert "lower(" in f.to_sql(1)[0]
    assert parse_filter('region like "x(?i)"', KEYS, HIVE_PARTITION_FILTER).root == Like(2, "x(?i)")
    with pytest.raises(InvalidArgument, match="position 13: with \\(\\?i\\), a LIKE pattern may hold ASCII letters"):
        parse_filter('region like "(?i)é"', KEYS, HIVE_PARTITION_FILTER)
    with pytest.raises(InvalidArgument, match="position 4: LIKE applies to keys of type string only, and 'hr' has"):
        parse_filter('hr like "1"', KEYS, HIVE_PARTITION_FILTER)
    assert hours("hr LIKE '1%'", HRS) == ["1", "10"]  # gRPC's LIKE: any key's stored text, SQL's wildcards


@pytest.mark.parametrize(("literal", "value"), [
    ("'us'", "us"), ('"us"', "us"), (r"'it\'s'", "it's"), (r'"say \"hi\""', 'say "hi"'), ("'say \"hi\"'", 'say "hi"'),
    ('"it\'s"', "it's"), (r"'a\\b'", "a\\b"), (r"'a\nb'", "anb"), ("''", ""), ("'日本 😀'", "日本 😀"),
    ("'a\nb'", "a\nb"), ("'and'", "and"), ("'05'", "05"), ('"-1.50"', "-1.50"),
])
def test_string_literals_quotes_and_escapes(literal: str, value: str) -> None:
    assert parse_filter(f"region = {literal}", KEYS).root == Comparison(2, "=", value)


def test_like_wildcards_escapes_and_case() -> None:
    regions = ["us", "us-east", "US", "u_s", "100%", "a\\b", "x\ny", "日本", DEFAULT]
    def like(pattern: str) -> list[str]:
        return [r[2] for r in selected(f"region LIKE {pattern}", [("2024-01-01", "1", v) for v in regions])]
    assert like("'us%'") == ["us", "us-east"]
    assert like("'u_s'") == ["u_s"]                      # _ is any one character...
    assert like(r"'u\\_s'") == ["u_s"]                   # ...unless escaped in the pattern (\\ in the string)
    assert like(r"'u\_s'") == ["u_s"]                    # \_ in the string is just _: a wildcard again
    assert like(r"'%\\%'") == ["100%"]
    assert like(r"'%\\\\%'") == ["a\\b"]
    assert like("'x_y'") == ["x\ny"]                     # wildcards match newlines
    assert like("'__'") == ["us", "US", "日本"]           # characters, not bytes
    assert like("'%'") == [r for r in regions if r != DEFAULT]
    assert like("'U%'") == ["US"]                         # case-sensitive
    assert like("'a.b'") == [] and like("'(%'") == []     # regex characters are literal


@pytest.mark.parametrize("dialect", [PARTITION_FILTER, HIVE_PARTITION_FILTER], ids=["grpc", "hive"])
@pytest.mark.parametrize(("text", "position", "number"), [
    ("region = 01", 10, "01"), ("region > 5", 10, "5"), ("region <= -1", 11, "-1"), ("region <> 1.5", 11, "1.5"),
    ("5 < region", 1, "5"), ("region IN ('a', 2)", 17, "2"), ("(region) NOT IN (1)", 18, "1"),
    ("region BETWEEN 1 AND 5", 16, "1"), ("region = 'us' OR region = 1", 27, "1"),
    ("region = 99999999999999999999", 10, "99999999999999999999"),
])
def test_a_number_against_a_string_key_is_refused_in_both_dialects(dialect: Dialect, text: str, position: int,
                                                                    number: str) -> None:
    """Hive Metastore 2.3.10 refuses every one of these (MetaException "Filtering is supported only on partition
    keys of type string", probed on PostgreSQL and Derby); the gateway answered them comparing text before."""
    with pytest.raises(InvalidArgument) as e:
        parse_filter(text, KEYS, dialect)
    assert str(e.value).startswith(f"bad partition filter at position {position}: key 'region' has type string, "
                                   f"but {number} is a number: quote it (\"{number}\") to compare text"), e.value
    long = "region = " + "9" * 1000
    with pytest.raises(InvalidArgument) as e:
        parse_filter(long, KEYS, dialect)
    assert "but 9999999999999999999999999999999999999999... is a number: quote it to compare text" in str(e.value)
    assert len(str(e.value)) < 400
    for key_type in ("varchar(10)", "char(3)"):  # the same rule for every text key
        with pytest.raises(InvalidArgument, match=f"key 'v' has type {re.escape(key_type)}, but 1 is a number"):
            parse_filter("v = 1", [FieldSchema("v", key_type)], dialect)
    assert parse_filter('region = "01"', KEYS, dialect).root == Comparison(2, "=", "01")  # quoted: text
    assert parse_filter("hr = 1", KEYS, dialect).root == Comparison(1, "=", 1)  # Spark's, for an int key


def test_comparisons_follow_the_key_type() -> None:
    assert hours("hr > '9'", ["10", "9", "08", "+12", "-3"]) == ["10", "+12"]  # numbers, not text
    assert selected("region > '9'", [("2024-01-01", "1", "10")]) == []         # text for string keys
    assert selected("ds > '2024-01-09'", [("2024-01-10", "1", "x"), ("2024-01-09", "1", "x")]) == \
        [("2024-01-10", "1", "x")]
    dec = (FieldSchema("amt", "decimal(10,2)"),)
    assert selected("amt = 1.5", [("1.50",), ("1.5",), ("1.05",), ("15e-1",)], dec) == [("1.50",), ("1.5",), ("15e-1",)]
    assert selected("amt IN ('1.5')", [("1.50",)], dec) == [("1.50",)]
    dbl = (FieldSchema("x", "double"),)
    assert selected("x > 0.1", [("0.10000000000000001",), ("0.1",), ("1e-1",)], dbl) == [("0.10000000000000001",)]
    ts = (FieldSchema("t", "timestamp"),)
    rows = [("2024-01-01 10:00:00",), ("2024-01-01T10:00",), ("2024-01-01 10:00:00.5",), ("2024-01-01",)]
    assert selected("t = '2024-01-01 10:00'", rows, ts) == rows[:2]
    assert selected("t < '2024-01-01T00:00:01'", rows, ts) == [("2024-01-01",)]
    b = (FieldSchema("b", "boolean"),)
    assert selected("b = TRUE", [("true",), ("TRUE",), ("false",)], b) == [("true",), ("TRUE",)]
    assert selected("b = 'false'", [("true",), ("False",)], b) == [("False",)]
    assert selected("b < true", [("true",), ("false",)], b) == [("false",)]
    assert parse_filter("hr = '007'", KEYS).root == Comparison(1, "=", 7)
    assert parse_filter("ds = '2024-02-29'", KEYS).root == Comparison(0, "=", dt.date(2024, 2, 29))
    assert parse_filter("amt = 1e1", dec).root == Comparison(0, "=", Decimal("1e1"))


def test_the_default_partition_never_matches_a_condition_on_its_key() -> None:
    for text in ["hr = 1", "hr != 1", "hr < 1", "hr >= 1", "hr IN (1)", "hr NOT IN (1)", "hr BETWEEN 0 AND 99",
                 "hr NOT BETWEEN 0 AND 1", "hr LIKE '%'", "hr NOT LIKE 'x'", "NOT hr = 1", "NOT NOT hr != 1",
                 "NOT (hr = 1 OR hr = 2)", "NOT (hr = 1 AND region = 'us')"]:
        assert hours(text, [DEFAULT]) == [], text
    assert selected("region LIKE '%'", [("2024-01-01", "1", DEFAULT)]) == []
    assert selected("region = '__HIVE_DEFAULT_PARTITION__'", [("2024-01-01", "1", DEFAULT)]) == []


def test_unknown_combines_as_in_sql() -> None:
    null_hr = [("2024-01-01", DEFAULT, "us")]
    assert selected("hr = 1 OR region = 'us'", null_hr) == null_hr       # unknown OR true = true
    assert selected("hr = 1 OR region = 'eu'", null_hr) == []            # unknown OR false = unknown
    assert selected("NOT (hr = 1 AND region = 'eu')", null_hr) == null_hr  # NOT (unknown AND false) = true
    assert selected("NOT (hr = 1 OR region = 'eu')", null_hr) == []      # NOT unknown = unknown


def test_values_the_type_does_not_accept_are_null() -> None:
    assert hours("hr > 0 OR NOT hr > 0", ["abc", " 5", "1e3", "0x10", "1_0", "١", "5"]) == ["5"]
    bad_days = [("2023-02-29", "1", "x"), ("2024-1-1", "1", "x"), ("20240101", "1", "x")]
    assert selected("ds < '3000-01-01' OR NOT ds < '3000-01-01'", bad_days) == []


def test_to_sql_keeps_values_out_of_the_text_and_numbers_parameters_from_first_param() -> None:
    f = parse_filter("region = 'x\\'; DROP TABLE p; --' OR hr IN (1, 2) AND ds BETWEEN '2024-01-01' AND '9999-12-31'",
                     KEYS)
    sql, params = f.to_sql(3)
    assert params == ["x'; DROP TABLE p; --", [1, 2], "2024-01-01", "9999-12-31"]  # dates travel as ISO text
    assert "DROP" not in sql and "9999" not in sql
    assert [f"${n}" in sql for n in (2, 3, 4, 5, 6, 7)] == [False, True, True, True, True, False]
    assert 'part_values[3], \'__HIVE_DEFAULT_PARTITION__\') COLLATE "C" = $3::text' in sql
    assert "= ANY($4::numeric[])" in sql and "$5::text::date" in sql
    assert f.to_sql(1, column="pv.part_values")[0].count("pv.part_values[1]") == 3
    with pytest.raises(ValueError):
        f.to_sql(0)
    with pytest.raises(ValueError):
        f.to_sql(1, column="part_values; --")


def test_string_order_in_sql_is_byte_order() -> None:
    sql, _ = parse_filter("region < 'b' OR region LIKE 'a%' OR region BETWEEN 'a' AND 'b'", KEYS).to_sql(1)
    assert sql.count('COLLATE "C"') == 3


def test_a_filter_is_immutable_and_reusable() -> None:
    f = parse_filter("hr > 1", KEYS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.text = "hr > 2"  # type: ignore[misc]
    assert [f.matches(("2024-01-01", str(h), "x")) for h in range(4)] == [False, False, True, True]
    assert f == parse_filter("hr > 1", KEYS) and f.root == parse_filter("HR > 1", KEYS).root
    assert isinstance(parse_filter("hr BETWEEN 1 AND 2", KEYS).root, Between)
    assert isinstance(parse_filter("region LIKE 'a'", KEYS).root, Like)


def test_error_message_shows_position_and_caret() -> None:
    with pytest.raises(InvalidArgument) as e:
        parse_filter("ds > '2024-01-01' AND hr > ", KEYS)
    assert str(e.value) == (
        "bad partition filter at position 28: expected a value after '>', found the end of the filter\n"
        "  ds > '2024-01-01' AND hr > \n"
        "                             ^"
    )


@pytest.mark.parametrize(("text", "position", "message"), [
    ("", 1, "the filter is empty"),
    ("   ", 4, "the filter is empty"),
    ("hr > ", 6, "expected a value after '>'"),
    ("zone = 1", 1, "unknown partition key 'zone' (the keys are ds, hr, region)"),
    ("hr = 1 AND `Zone` = 1", 12, "unknown partition key 'Zone'"),
    ("hr > 'abc'", 6, "'abc' is not a valid int for key 'hr'"),
    ("hr > 1.5", 6, "'1.5' is not a valid int for key 'hr'"),
    ("hr IN (1, 'x')", 11, "'x' is not a valid int"),
    ("ds = '2024-02-30'", 6, "'2024-02-30' is not a valid date for key 'ds'"),
    ("ds = 20240101", 6, "key 'ds' has type date: write its value as a quoted string"),
    ("hr = TRUE", 6, "TRUE is a boolean, but key 'hr' has type int"),
    ("(hr = 1", 8, "expected ')' to close the '(' at position 1"),
    ("((hr = 1) OR hr = 2", 20, "expected ')' to close the '(' at position 1"),
    ("hr = 1)", 7, "expected AND, OR or the end of the filter, found ')'"),
    ("hr = 1 hr = 2", 8, "expected AND, OR or the end of the filter, found 'hr'"),
    ("hr = 1 AND", 11, "expected a partition key or a value at the start of a condition"),
    ("()", 2, "expected a partition key or a value at the start of a condition, found ')'"),
    ("hr ~ 1", 4, "unexpected character '~'"),
    ("region = 'abc", 10, "unterminated string: no closing '"),
    ('region = "abc\\"', 10, 'unterminated string: no closing "'),
    ("hr = hr", 6, "expected a value after '=', found partition key 'hr'"),
    ("1 = 2", 5, "expected a partition key after '=', found '2'"),
    ("1 IN (1)", 1, "IN needs a partition key on its left"),
    ("hr", 3, "expected a comparison operator, IN, BETWEEN or LIKE after 'hr', found the end of the filter"),
    ("hr NOT = 1", 8, "expected IN, BETWEEN or LIKE after NOT, found '='"),
    ("hr IN 1", 7, "expected '(' after IN"),
    ("hr IN ()", 8, "expected a value in the IN list, found ')'"),
    ("hr IN (1 2)", 10, "expected ',' or ')' in the IN list at position 4"),
    ("hr BETWEEN 1 OR 2", 14, "expected AND between the bounds of BETWEEN, found 'OR'"),
    ("region LIKE 5", 13, "expected a quoted pattern after LIKE"),
    ("region LIKE 'a\\\\'", 13, "a LIKE pattern must not end with its escape character"),
    ("region = AND", 10, "expected a value after '=', found 'AND'"),
    ("(hr)", 5, "expected a comparison operator, IN, BETWEEN or LIKE after 'hr', found the end of the filter"),
    ("(nope) IN (1)", 2, "unknown partition key 'nope'"),
    ("((hr) IN (1)", 13, "expected ')' to close the '(' at position 1"),
    ("hr > -", 6, "unexpected character '-'"),
])
def test_errors_name_their_position(text: str, position: int, message: str) -> None:
    with pytest.raises(InvalidArgument) as e:
        parse_filter(text, KEYS)
    first_line, shown, caret = str(e.value).split("\n")
    assert first_line.startswith(f"bad partition filter at position {position}: {message}"), first_line
    assert caret == "  " + " " * (position - 1) + "^"
    assert shown == "  " + text


def test_unsupported_key_types_and_unpartitioned_tables() -> None:
    with pytest.raises(InvalidArgument, match="position 1: partition key 'blob' has type binary"):
        parse_filter("blob = 'x'", [FieldSchema("blob", "binary")])
    with pytest.raises(InvalidArgument, match="unknown partition key 'ds' \\(the keys are none"):
        parse_filter("ds = '2024-01-01'", [])


def test_long_filters_show_a_window_around_the_error() -> None:
    text = "hr IN (" + ", ".join(str(i) for i in range(100)) + ", 'x')"
    with pytest.raises(InvalidArgument) as e:
        parse_filter(text, KEYS)
    _, shown, caret = str(e.value).split("\n")
    assert shown.startswith("  ...") and len(shown) < 130
    assert shown[caret.index("^"):].startswith("'x'")


@given(st.text(alphabet=st.sampled_from(list("hrdsregion()'\"\\`,=<>!%_ 019.-eANDORNOTINBETWEENLIKE")), max_size=40))
def test_any_text_parses_or_raises_invalid_argument(text: str) -> None:
    try:
        f = parse_filter(text, KEYS)
    except InvalidArgument as e:
        assert str(e).startswith("bad partition filter at position ")
    else:
        f.to_sql(1)
        f.matches(("2024-01-01", "1", "us"))
