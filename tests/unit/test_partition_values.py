"""hive/partition_values.py: the rows of Hive's get_partition_values (checked against Hive Metastore 2.3.10
in tests/e2e/test_thrift_filter_differential.py, whose probes gave the answers quoted here)."""

from __future__ import annotations

import pytest

from hive.errors import InvalidArgument
from hive.names import DEFAULT_PARTITION_NAME
from hive.partition_values import filtered_rows, requested_key_indexes, scan_size, unfiltered_rows
from hive.schema import FieldSchema

KEYS = (FieldSchema("year", "string"), FieldSchema("month", "int"))
# in partition-name order: year=2019/month=12, year=2020/month=1, ..., year=2021/month=10
PARTS = [("2019", "12"), ("2020", "1"), ("2020", "2"), ("2020", "3"), ("2020", "4"), ("2021", "10")]


def test_distinct_rows_are_sorted_by_their_values_and_cut_after() -> None:
    assert unfiltered_rows(PARTS, [0], distinct=True, max_parts=-1) == [["2019"], ["2020"], ["2021"]]
    assert unfiltered_rows(PARTS, [1], distinct=True, max_parts=-1) == [["1"], ["10"], ["12"], ["2"], ["3"], ["4"]]
    assert unfiltered_rows(PARTS, [0], distinct=True, max_parts=2) == [["2019"], ["2020"]]
    assert unfiltered_rows(PARTS, [1, 0], distinct=True, max_parts=2) == [["1", "2020"], ["10", "2021"]]


def test_rows_that_are_not_distinct_are_one_per_partition_in_name_order() -> None:
    assert unfiltered_rows(PARTS, [0], distinct=False, max_parts=0) == [[y] for y, _ in PARTS]
    assert unfiltered_rows(PARTS, [0, 1], distinct=False, max_parts=2) == [["2019", "12"], ["2020", "1"]]


def test_a_key_asked_twice_is_answered_twice() -> None:
    assert unfiltered_rows(PARTS, [0, 0], distinct=True, max_parts=-1) == [["2019", "2019"], ["2020", "2020"],
                                                                           ["2021", "2021"]]


def test_values_without_a_filter_are_escaped_as_the_partition_name_has_them() -> None:
    parts = [("50%", "x"), (DEFAULT_PARTITION_NAME, "x"), ("a/b", "x"), ("c:d", "y"), ("sp ace", "x"), ("x=y", "z"),
             ("é", "q#1")]
    assert unfiltered_rows(parts, [0, 1], distinct=True, max_parts=-1) == [
        ["50%25", "x"], [DEFAULT_PARTITION_NAME, "x"], ["a%2Fb", "x"], ["c%3Ad", "y"], ["sp ace", "x"], ["x%3Dy", "z"],
        ["é", "q%231"]]


def test_filtered_rows_are_every_keys_values_unescaped_in_name_order_or_reversed() -> None:
    selected = [("2019", "12"), ("2020", "3"), ("a/b", "4")]
    assert filtered_rows(selected, ascending=True, max_parts=-1) == [list(v) for v in selected]
    assert filtered_rows(selected, ascending=False, max_parts=-1) == [list(v) for v in selected[::-1]]
    assert filtered_rows(selected, ascending=False, max_parts=1) == [["a/b", "4"]]  # the last by name
    assert filtered_rows(selected, ascending=True, max_parts=0) == []  # 0 is none with a filter


def test_keys_are_found_by_name_in_any_case() -> None:
    assert requested_key_indexes("db.t", KEYS, ["month", "YEAR", "Month"]) == [1, 0, 1]


@pytest.mark.parametrize(("requested", "message"), [
    ([], "names no key; name one or more of its partition keys \\(year, month\\)"),
    (["nope"], "'nope' is not one of its partition keys \\(year, month\\)"),
    (["year", None], "partitionKeys\\[1\\] has no name"),
    (["y.*"], "'y.\\*' is not one of"),  # not a pattern (Hive matches the first key's name against it)
    (["year"] * 1001, "1001 keys, more than 1000"),
])
def test_a_request_naming_no_partition_key_is_refused_with_the_tables_keys(requested: list[str | None],
                                                                           message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        requested_key_indexes("db.t", KEYS, requested)


def test_an_unpartitioned_table_says_so() -> None:
    with pytest.raises(InvalidArgument, match="none: it is not partitioned"):
        requested_key_indexes("db.flat", (), ["year"])


@pytest.mark.parametrize(("kwargs", "scan"), [
    ({"filtered": False, "distinct": True, "ascending": True, "max_parts": 2}, None),  # sorted over all
    ({"filtered": False, "distinct": False, "ascending": True, "max_parts": 2}, 2),
    ({"filtered": False, "distinct": False, "ascending": True, "max_parts": 0}, None),  # 0: every one
    ({"filtered": True, "distinct": True, "ascending": True, "max_parts": 0}, 0),
    ({"filtered": True, "distinct": False, "ascending": False, "max_parts": 2}, None),  # the last ones
    ({"filtered": True, "distinct": False, "ascending": True, "max_parts": -1}, None),
])
def test_a_read_finds_only_the_partitions_the_answer_needs(kwargs: dict[str, object], scan: int | None) -> None:
    assert scan_size(**kwargs) == scan  # type: ignore[arg-type]
