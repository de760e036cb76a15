"""The latency histogram's arithmetic, checked against exact nearest-rank percentiles."""

from __future__ import annotations

import json
import math
import pickle
import random
from fractions import Fraction

import pytest

from loadtest.histogram import Histogram

PERCENTILES = (0, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100)


def exact_percentile(sorted_values: list[float], p: float) -> float:
    """Nearest rank, computed with exact fractions so 99.9% of 10000 is rank 9990, not 9991."""
    if p == 0:
        return sorted_values[0]
    rank = math.ceil(Fraction(str(p)) * len(sorted_values) / 100)
    return sorted_values[max(1, rank) - 1]


def assert_within_precision(hist: Histogram, values: list[float]) -> None:
    ordered = sorted(values)
    for p in PERCENTILES:
        exact = exact_percentile(ordered, p)
        got = hist.percentile(p)
        # Bucket midpoint: half a bucket of relative error, plus half a microsecond of resolution.
        assert abs(got - exact) <= exact * hist.relative_precision + 0.5e-6, (p, got, exact)


def test_percentiles_of_1_to_10000_ms_are_within_the_relative_precision() -> None:
    values = [ms / 1000 for ms in range(1, 10001)]
    hist = Histogram()
    for v in values:
        hist.record(v)
    assert_within_precision(hist, values)
    assert hist.relative_precision <= 0.01
    # Exact facts carry no bucketing error at all.
    assert hist.count == 10000
    assert hist.min_s == 0.001
    assert hist.max_s == 10.0
    assert hist.mean_s == pytest.approx(5.0005, rel=1e-12)
    assert hist.percentile(50) == pytest.approx(5.0, rel=hist.relative_precision)
    assert hist.percentile(99.9) == pytest.approx(9.99, rel=hist.relative_precision)


def test_relative_error_bound_holds_from_microseconds_to_a_minute() -> None:
    rng = random.Random(7)
    values = [math.exp(rng.uniform(math.log(1e-6), math.log(60.0))) for _ in range(20000)]
    hist = Histogram()
    for v in values:
        hist.record(v)
    assert_within_precision(hist, values)


def test_finer_buckets_give_proportionally_smaller_error() -> None:
    rng = random.Random(3)
    values = [rng.lognormvariate(math.log(0.002), 1.0) for _ in range(5000)]
    for bits in (4, 7, 10):
        hist = Histogram(sub_bucket_bits=bits)
        for v in values:
            hist.record(v)
        assert_within_precision(hist, values)


def test_values_below_the_linear_limit_are_exact_to_the_microsecond() -> None:
    hist = Histogram()
    for us in range(1, 201):
        hist.record(us / 1e6)
    assert hist.percentile(50) == pytest.approx(100.5e-6, abs=1e-12)  # bucket [100, 101) µs, midpoint


def test_merge_equals_recording_everything_in_one_histogram() -> None:
    rng = random.Random(11)
    parts = [[rng.expovariate(1 / 0.003) for _ in range(3000)] for _ in range(4)]
    merged = Histogram()
    for part in parts:
        h = Histogram()
        for v in part:
            h.record(v)
        merged.merge(h)
    single = Histogram()
    for part in parts:
        for v in part:
            single.record(v)
    a, b = merged.to_dict(), single.to_dict()
    assert a["buckets"] == b["buckets"]
    assert (a["count"], a["min_s"], a["max_s"]) == (b["count"], b["min_s"], b["max_s"])
    assert merged.mean_s == pytest.approx(single.mean_s, rel=1e-12)
    assert merged.percentiles(PERCENTILES) == single.percentiles(PERCENTILES)


def test_merge_into_empty_and_of_empty_is_identity() -> None:
    h = Histogram()
    for v in (0.001, 0.002, 0.5):
        h.record(v)
    before = h.to_dict()
    h.merge(Histogram())
    assert h.to_dict() == before
    assert Histogram().merge(h).to_dict() == before


def test_merge_refuses_a_different_layout() -> None:
    with pytest.raises(ValueError, match="different layouts"):
        Histogram(sub_bucket_bits=7).merge(Histogram(sub_bucket_bits=8))


def test_dict_form_round_trips_through_json_and_pickle_and_stays_sparse() -> None:
    h = Histogram()
    for v in (0.0001, 0.0001, 0.002, 0.03, 4.0):
        h.record(v)
    data = h.to_dict()
    assert len(data["buckets"]) == 2 * 4  # only the four non-empty buckets travel
    for restored in (Histogram.from_dict(json.loads(json.dumps(data))), pickle.loads(pickle.dumps(h))):
        assert restored.to_dict() == data
        assert restored.percentiles(PERCENTILES) == h.percentiles(PERCENTILES)
    empty = Histogram.from_dict(Histogram().to_dict())
    assert empty.count == 0 and math.isnan(empty.percentile(50))


def test_from_dict_rejects_inconsistent_counts() -> None:
    data = Histogram().to_dict()
    data["buckets"] = [5, 2]
    data["count"] = 3
    with pytest.raises(ValueError, match="count"):
        Histogram.from_dict(data)


def test_values_beyond_the_range_land_in_the_top_bucket_but_max_is_exact() -> None:
    h = Histogram(highest_s=1.0)
    h.record(0.5)
    h.record(90.0)
    assert h.max_s == 90.0
    assert h.percentile(100) == 90.0
    assert h.percentile(99) <= 90.0


def test_empty_histogram_and_edge_percentiles() -> None:
    h = Histogram()
    assert h.count == 0
    assert all(math.isnan(x) for x in (h.min_s, h.max_s, h.mean_s, h.percentile(99)))
    h.record(0.004)
    assert h.percentile(0) == h.percentile(50) == h.percentile(100) == 0.004  # clamped into [min, max]
    with pytest.raises(ValueError):
        h.percentile(101)
    with pytest.raises(ValueError):
        h.record(-0.001)


def test_record_many_equals_repeated_record() -> None:
    a, b = Histogram(), Histogram()
    a.record_many(0.0123, 5)
    for _ in range(5):
        b.record(0.0123)
    assert a.to_dict()["buckets"] == b.to_dict()["buckets"]
    assert a.count == 5 and a.mean_s == pytest.approx(0.0123)


def test_percentiles_in_one_pass_match_single_queries_in_any_order() -> None:
    rng = random.Random(5)
    h = Histogram()
    for _ in range(1000):
        h.record(rng.random())
    asked = (99, 50, 0, 99.9, 100, 10)
    assert h.percentiles(asked) == [h.percentile(p) for p in asked]
