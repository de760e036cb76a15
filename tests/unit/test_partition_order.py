"""hive/partition_order.py: Hive 4's SHOW PARTITIONS ... ORDER BY spec and its metastore's sort on PostgreSQL."""

from __future__ import annotations

from typing import Sequence

import pytest

from hive.errors import InvalidArgument
from hive.partition_order import ordered, parse_order

DEFAULT = "__HIVE_DEFAULT_PARTITION__"


def test_the_order_spec_reads_positions_and_one_sign_each() -> None:
    assert parse_order("0,1:+-", 2) == [(0, False), (1, True)]
    assert parse_order("1:-", 2) == [(1, True)]
    assert parse_order(None, 2) == [] and parse_order("", 2) == [] and parse_order("0,1", 2) == []
    for bad in ("0,1:+", "2:+", "a:+", "0:*", "-1:+"):
        with pytest.raises(InvalidArgument, match="partition order"):
            parse_order(bad, 2)


def _names(rows: Sequence[Sequence[str]], keys: tuple[str, ...] = ("ds", "n")) -> list[str]:
    return ["/".join(f"{k}={v}" for k, v in zip(keys, row)) for row in rows]


def test_integral_keys_sort_as_numbers_and_the_default_partition_as_null() -> None:
    rows = [("a", "10"), ("a", "9"), ("a", DEFAULT), ("b", "-3"), ("a", "100")]
    names = _names(rows)
    by_n = ordered(names, rows, ["string", "int"], parse_order("1:+", 2), DEFAULT)
    assert by_n == _names([("b", "-3"), ("a", "9"), ("a", "10"), ("a", "100"), ("a", DEFAULT)])
    by_n_desc = ordered(names, rows, ["string", "int"], parse_order("1:-", 2), DEFAULT)
    assert by_n_desc == _names([("a", DEFAULT), ("a", "100"), ("a", "10"), ("a", "9"), ("b", "-3")])
    # As text, '10' < '100' < '9': a string key does not sort numerically.
    assert ordered(names, rows, ["string", "string"], parse_order("1:+", 2), DEFAULT)[:3] == _names(
        [("b", "-3"), ("a", "10"), ("a", "100")])


def test_several_keys_each_in_its_direction_then_by_name() -> None:
    rows = [("2024-01-02", "1"), ("2024-01-10", "2"), ("2024-01-02", "3"), (DEFAULT, "1"), ("2024-01-10", "1")]
    names = _names(rows)
    got = ordered(names, rows, ["date", "bigint"], parse_order("0,1:-+", 2), DEFAULT)
    assert got == _names([(DEFAULT, "1"), ("2024-01-10", "1"), ("2024-01-10", "2"), ("2024-01-02", "1"),
                          ("2024-01-02", "3")])
    assert ordered(names, rows, ["date", "bigint"], [], DEFAULT) == sorted(names)  # no order: by name
    # Two default partitions in one key sort alike, then by name.
    twice = [(DEFAULT, "2"), (DEFAULT, "1")]
    assert ordered(_names(twice), twice, ["date", "int"], parse_order("0:+", 2), DEFAULT) == sorted(_names(twice))


def test_timestamps_sort_as_time_not_text() -> None:
    rows = [("2024-01-01 10:00:00.5",), ("2024-01-01T09:00:00",), ("2024-01-01 10:00:00",)]
    names = _names(rows, ("ts",))
    got = ordered(names, rows, ["timestamp"], parse_order("0:+", 1), DEFAULT)
    # As text, '2024-01-01 10...' sorts before '2024-01-01T09...' (' ' before 'T').
    assert got == _names([("2024-01-01T09:00:00",), ("2024-01-01 10:00:00",), ("2024-01-01 10:00:00.5",)],
                         ("ts",))
