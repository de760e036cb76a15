"""A latency histogram that keeps the tail: HDR-style log-linear buckets over integer microseconds.

Layout (sub-bucket bits B, default 7, so S = 2**B = 128): values below 2*S µs get one bucket per
microsecond (exact); above that, each power-of-two range [2**k, 2**(k+1)) is cut into S equal
buckets, so a bucket is never wider than 1/S of its lower bound. Percentiles report the bucket
midpoint clamped to the exact [min, max], which bounds the relative error by 2**-(B+1) (0.39% at
B=7) plus half a microsecond. Count, min, max and sum are kept exactly, so mean, min and max carry
no bucketing error at all.

`record()` sits in every request's path: it is one int conversion, one bit_length and one list
increment, with no allocation. Histograms with the same layout `merge()` exactly (bucket counts add),
which is how worker processes and stats intervals are combined; `to_dict()` keeps only non-zero
buckets, so a snapshot sent between processes is a few hundred numbers at most.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

_UNITS_PER_S = 1_000_000  # the bucket unit is one microsecond
_FORMAT = 1


class Histogram:
    """Counts of latencies (seconds) from 1 µs up to `highest_s`; larger values land in the top bucket
    (their exact value still shows in `max_s`). Not thread-safe; one per recording loop."""

    __slots__ = ("_bits", "_highest", "_counts", "_count", "_total", "_min", "_max")

    def __init__(self, highest_s: float = 60.0, sub_bucket_bits: int = 7) -> None:
        if not 1 <= sub_bucket_bits <= 16:
            raise ValueError(f"sub_bucket_bits must be in 1..16, got {sub_bucket_bits}")
        if not highest_s > 0:
            raise ValueError(f"highest_s must be positive, got {highest_s}")
        self._init_layout(sub_bucket_bits, max(1, int(highest_s * _UNITS_PER_S)))

    def _init_layout(self, bits: int, highest_units: int) -> None:
        self._bits = bits
        self._highest = highest_units
        self._counts = [0] * (self._index(highest_units) + 1)
        self._count = 0
        self._total = 0.0
        self._min = math.inf
        self._max = -math.inf

    # -- layout -------------------------------------------------------------------------------

    def _index(self, units: int) -> int:
        bits = self._bits
        length = units.bit_length()
        if length <= bits + 1:
            return units
        shift = length - bits - 1
        return (shift << bits) + (units >> shift)

    def _bucket_bounds(self, index: int) -> tuple[int, int]:
        """(lowest value in µs, width in µs) of bucket `index`."""
        bits = self._bits
        if index < (2 << bits):
            return index, 1
        shift = (index >> bits) - 1
        return (index - (shift << bits)) << shift, 1 << shift

    @property
    def relative_precision(self) -> float:
        """Upper bound on |reported - exact| / exact for percentiles (above 2*S µs)."""
        return 2.0 ** -(self._bits + 1)

    # -- recording ----------------------------------------------------------------------------

    def record(self, seconds: float) -> None:
        """Count one value in seconds. Negative values are a caller bug and raise ValueError."""
        if seconds < 0.0:
            raise ValueError(f"cannot record a negative latency ({seconds} s)")
        units = int(seconds * _UNITS_PER_S)
        if units > self._highest:
            units = self._highest
        length = units.bit_length()
        bits = self._bits
        if length <= bits + 1:
            self._counts[units] += 1
        else:
            shift = length - bits - 1
            self._counts[(shift << bits) + (units >> shift)] += 1
        self._count += 1
        self._total += seconds
        if seconds < self._min:
            self._min = seconds
        if seconds > self._max:
            self._max = seconds

    def record_many(self, seconds: float, times: int) -> None:
        """Count the same value `times` times (times >= 0)."""
        if times < 0:
            raise ValueError(f"times must be >= 0, got {times}")
        if times == 0:
            return
        if seconds < 0.0:
            raise ValueError(f"cannot record a negative latency ({seconds} s)")
        self._counts[self._index(min(int(seconds * _UNITS_PER_S), self._highest))] += times
        self._count += times
        self._total += seconds * times
        self._min = min(self._min, seconds)
        self._max = max(self._max, seconds)

    # -- reading ------------------------------------------------------------------------------

    @property
    def count(self) -> int:
        return self._count

    @property
    def min_s(self) -> float:
        """Smallest recorded value, exact; NaN when empty."""
        return self._min if self._count else math.nan

    @property
    def max_s(self) -> float:
        """Largest recorded value, exact; NaN when empty."""
        return self._max if self._count else math.nan

    @property
    def mean_s(self) -> float:
        return self._total / self._count if self._count else math.nan

    def percentile(self, p: float) -> float:
        """The nearest-rank p-th percentile (0 <= p <= 100) in seconds; NaN when empty.

        p=0 and p=100 return the exact min and max.
        """
        return self.percentiles((p,))[0]

    def percentiles(self, ps: Sequence[float]) -> list[float]:
        """Several percentiles in one pass over the buckets, in the order asked."""
        for p in ps:
            if not 0.0 <= p <= 100.0:
                raise ValueError(f"percentile must be within [0, 100], got {p}")
        if not self._count:
            return [math.nan] * len(ps)
        # round() absorbs float noise such as 99.9 * 1000 / 100 = 999.0000000000001 before ceil().
        ranks = sorted((max(1, math.ceil(round(p * self._count / 100.0, 9))), i) for i, p in enumerate(ps))
        out = [math.nan] * len(ps)
        pending = iter(ranks)
        rank, slot = next(pending)
        seen = 0
        done = False
        for index, n in enumerate(self._counts):
            if not n:
                continue
            seen += n
            while seen >= rank:
                out[slot] = self._representative(index)
                nxt = next(pending, None)
                if nxt is None:
                    done = True
                    break
                rank, slot = nxt
            if done:
                break
        for i, p in enumerate(ps):
            if p == 0.0:
                out[i] = self._min
            elif p == 100.0:
                out[i] = self._max
        return out

    def _representative(self, index: int) -> float:
        low, width = self._bucket_bounds(index)
        value = (low + width / 2.0) / _UNITS_PER_S
        return min(max(value, self._min), self._max)

    # -- combining and transport --------------------------------------------------------------

    def _check_compatible(self, other: Histogram) -> None:
        if (self._bits, self._highest) != (other._bits, other._highest):
            raise ValueError(
                "cannot merge histograms with different layouts "
                f"(bits {self._bits} vs {other._bits}, highest {self._highest} vs {other._highest} µs)"
            )

    def merge(self, other: Histogram) -> Histogram:
        """Add `other`'s counts into this histogram (exact); returns self."""
        self._check_compatible(other)
        counts = self._counts
        for index, n in enumerate(other._counts):
            if n:
                counts[index] += n
        self._count += other._count
        self._total += other._total
        self._min = min(self._min, other._min)
        self._max = max(self._max, other._max)
        return self

    def copy(self) -> Histogram:
        clone = Histogram.__new__(Histogram)
        clone._bits, clone._highest = self._bits, self._highest
        clone._counts = list(self._counts)
        clone._count, clone._total, clone._min, clone._max = self._count, self._total, self._min, self._max
        return clone

    def to_dict(self) -> dict[str, Any]:
        """A compact, JSON- and pickle-friendly form; `from_dict` restores it exactly."""
        flat: list[int] = []
        for index, n in enumerate(self._counts):
            if n:
                flat.append(index)
                flat.append(n)
        return {
            "format": _FORMAT, "bits": self._bits, "highest_us": self._highest, "count": self._count,
            "total_s": self._total, "min_s": self._min if self._count else None,
            "max_s": self._max if self._count else None, "buckets": flat,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Histogram:
        """Inverse of `to_dict`; raises ValueError on a malformed or inconsistent dict."""
        if data.get("format") != _FORMAT:
            raise ValueError(f"unknown histogram format {data.get('format')!r}")
        bits, highest = data["bits"], data["highest_us"]
        if not (isinstance(bits, int) and 1 <= bits <= 16 and isinstance(highest, int) and highest >= 1):
            raise ValueError(f"bad histogram layout: bits={bits!r} highest_us={highest!r}")
        hist = cls.__new__(cls)
        hist._init_layout(bits, highest)
        flat = data["buckets"]
        if len(flat) % 2:
            raise ValueError("histogram buckets must be (index, count) pairs")
        total = 0
        for i in range(0, len(flat), 2):
            index, n = flat[i], flat[i + 1]
            if not 0 <= index < len(hist._counts) or n <= 0:
                raise ValueError(f"bad histogram bucket {index}: {n}")
            hist._counts[index] += n
            total += n
        if total != data["count"]:
            raise ValueError(f"histogram buckets hold {total} values but count says {data['count']}")
        hist._count = total
        hist._total = float(data["total_s"])
        if total:
            hist._min, hist._max = float(data["min_s"]), float(data["max_s"])
        return hist

    def __repr__(self) -> str:
        if not self._count:
            return "Histogram(empty)"
        p50, p99 = self.percentiles((50, 99))
        return (
            f"Histogram(count={self._count}, p50={p50 * 1e3:.3f}ms, p99={p99 * 1e3:.3f}ms, max={self._max * 1e3:.3f}ms)"
        )


def percentile(values: Iterable[float], p: float) -> float:
    """The nearest-rank p-th percentile (0 <= p <= 100) of a list of non-negative samples in any unit, NaN
    when empty: what the benches that keep their samples report, through the same Histogram (so within
    its relative precision of the exact value)."""
    values = list(values)
    if not values:
        return math.nan
    hist = Histogram(highest_s=max(max(values), 1e-6) * 1.01)
    for v in values:
        hist.record(v)
    return hist.percentile(p)
