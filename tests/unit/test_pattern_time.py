"""A client's pattern is matched in time about linear in the text, at every entry point that matches one in
Python on the event loop: Hive's name patterns (get_databases, get_tables, get_functions, get_table_meta),
the LIKE of a partition filter evaluated over cached partitions (gRPC's GetPartitionsByFilter, Thrift's
get_partitions_by_filter) and a duration a connection sets (setMetaConf's socket time-out).

Each input is one a security audit found freezing the gateway for seconds (Python's backtracking regular
expressions: `matches_hive_pattern('a'*128, '*a'*5 + '*b')` took 13.5 s). Each is timed against a trivial
input of the same size through the same entry point, in the same test, and must take at most FACTOR times
as long: a bound about machine speed, never an absolute budget."""

from __future__ import annotations

import time
from typing import Callable

import pytest

from hive import durations, names
from hive.partition_filter import HIVE_PARTITION_FILTER, PARTITION_FILTER, Dialect, parse_filter
from hive.schema import FieldSchema

FACTOR = 50
GIVE_UP_S = 2.0  # a round that takes this long is super-linear: no need to wait for the rest


def per_call_s(fn: Callable[[], object], *, calls: int = 50, rounds: int = 5) -> float:
    """The best over `rounds` of the mean time of `calls` calls of `fn`; the mean so far as soon as a round
    takes GIVE_UP_S (on the code before the fix, the first call alone takes seconds)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for done in range(1, calls + 1):
            fn()
            if (took := time.perf_counter() - start) > GIVE_UP_S:
                return took / done
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def assert_about_as_fast(pathological: Callable[[], object], trivial: Callable[[], object]) -> None:
    baseline = per_call_s(trivial)
    measured = per_call_s(pathological)
    assert measured <= FACTOR * baseline, \
        f"{measured * 1e6:,.1f} µs a call, {measured / baseline:.0f} times the trivial input's {baseline * 1e6:.1f} µs"


NAME_CASES = [  # (name, pattern): on the code before the fix, each took a second or more
    ("a" * 128, "*a" * 5 + "*b"),  # the audit's: 13.5 s
    ("a" * 127 + "b", "*a" * 4 + "*c*b"),  # the last piece matches, a middle one nowhere
    ("a" * 128, ".*a" * 5 + ".*b"),  # Hive 4's spelling of any run
    ("a" * 128, "x|" + "*a" * 5 + "*b|y"),  # among alternatives
    ("A" * 128, "*A" * 5 + "*B"),  # case folded
    ("a" * 128, "*a." * 4 + "*b"),  # `.`, one character, between
]


@pytest.mark.parametrize(("name", "pattern"), NAME_CASES)
def test_a_name_pattern_is_matched_in_about_linear_time(name: str, pattern: str) -> None:
    trivial = "a" * len(pattern)  # no wildcard: compared, never searched
    assert_about_as_fast(lambda: names.matches_hive_pattern(name, pattern),
                         lambda: names.matches_hive_pattern(name, trivial))


FILTER_CASES = [  # (dialect, LIKE pattern as quoted in the filter, value)
    (PARTITION_FILTER, "'%a%a%a%b'", "a" * 600),  # the audit's gRPC GetPartitionsByFilter: 3.5 s a partition
    (PARTITION_FILTER, "'%a%a%a%c%b'", "a" * 599 + "b"),
    (PARTITION_FILTER, "'%a_%a_%a_%b'", "a" * 600),
    (HIVE_PARTITION_FILTER, '".*a.*a.*a.*b"', "a" * 600),  # Thrift's get_partitions_by_filter
    (HIVE_PARTITION_FILTER, '"(?i).*A.*A.*A.*B"', "A" * 600),
]


@pytest.mark.parametrize(("dialect", "pattern", "value"), FILTER_CASES)
def test_a_partition_filters_like_is_matched_in_about_linear_time(dialect: Dialect, pattern: str, value: str) -> None:
    keys = (FieldSchema("ds", "string"),)
    pathological = parse_filter(f"ds like {pattern}", keys, dialect)
    quote = pattern[0]
    trivial = parse_filter(f"ds like {quote}{'a' * (len(pattern) - 2)}{quote}", keys, dialect)
    # The cached read path (store/cache/sharded.py) asks Filter.matches of every partition.
    assert_about_as_fast(lambda: pathological.matches([value]), lambda: trivial.matches([value]))


@pytest.mark.parametrize("value", ["1" * 5000 + "x", "1" * 2500 + "." + "1" * 2500 + "x", "1" + " " * 5000 + "x"])
def test_a_duration_is_read_in_about_linear_time(value: str) -> None:
    # A connection's setMetaConf of hive.metastore.client.socket.timeout: 5,000 digits and a letter took 6 s.
    def parse(text: str) -> Callable[[], object]:
        def call() -> object:
            try:
                return durations.parse_duration(text)
            except durations.DurationError:
                return None
        return call

    assert_about_as_fast(parse(value), parse("1" * (len(value) - 1) + "s"))
