"""Per-request-name accumulators, the recorder users write to, and the interval snapshots workers send.

A worker's `StatsCollector` counts every request into a `RequestStats` per request name. Every stats
interval the engine `take()`s what was collected (the collector starts afresh) and ships it as an
`IntervalSnapshot` of *deltas*: the parent sums deltas, so merging workers and building the time
series are the same exact operation (`RequestStats.merge`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from loadtest.histogram import Histogram


class Recorder(Protocol):
    """Where a user reports each request."""

    def record(self, name: str, latency_s: float, *, error: str | None = None, items: int = 0) -> None:
        """Count one request. `error` is None on success, else a short failure kind (exception class).
        `items` (e.g. partitions returned) only counts for successful requests."""
        ...


class RequestStats:
    """Counts for one request name: requests, failures by kind, items, and a latency histogram.

    Latency covers failed requests too (a timeout's latency is part of what a caller sees).
    """

    __slots__ = ("requests", "failures", "items", "errors", "latency")

    def __init__(self, latency: Histogram | None = None) -> None:
        self.requests = 0
        self.failures = 0
        self.items = 0
        self.errors: dict[str, int] = {}
        self.latency = latency if latency is not None else Histogram()

    def record(self, latency_s: float, error: str | None, items: int) -> None:
        self.requests += 1
        self.latency.record(latency_s)
        if error is None:
            self.items += items
        else:
            self.failures += 1
            self.errors[error] = self.errors.get(error, 0) + 1

    def merge(self, other: RequestStats) -> RequestStats:
        """Add `other` into this one (exact); returns self."""
        self.requests += other.requests
        self.failures += other.failures
        self.items += other.items
        for kind, n in other.errors.items():
            self.errors[kind] = self.errors.get(kind, 0) + n
        self.latency.merge(other.latency)
        return self

    def copy(self) -> RequestStats:
        clone = RequestStats(self.latency.copy())
        clone.requests, clone.failures, clone.items = self.requests, self.failures, self.items
        clone.errors = dict(self.errors)
        return clone

    def empty_like(self) -> RequestStats:
        return RequestStats(self.latency.empty_like())

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "failures": self.failures,
            "items": self.items,
            "errors": dict(self.errors),
            "latency": self.latency.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestStats:
        stats = cls(Histogram.from_dict(data["latency"]))
        stats.requests, stats.failures, stats.items = data["requests"], data["failures"], data["items"]
        stats.errors = {str(k): int(v) for k, v in data["errors"].items()}
        if stats.requests != stats.latency.count:
            raise ValueError(f"{stats.requests} requests but {stats.latency.count} latencies")
        return stats

    def __repr__(self) -> str:
        return f"RequestStats(requests={self.requests}, failures={self.failures}, items={self.items}, {self.latency!r})"


def merge_all(stats: Mapping[str, RequestStats]) -> RequestStats:
    """All request names combined into one `RequestStats` (a new object)."""
    values = iter(stats.values())
    first = next(values, None)
    if first is None:
        return RequestStats()
    total = first.copy()
    for one in values:
        total.merge(one)
    return total


class StatsCollector:
    """The in-process `Recorder`: accumulates per request name until `take()`.

    One per event loop; `record` is called from user tasks and `take` from the ticker of the same
    loop, so there is no lock.
    """

    def __init__(self, new_histogram: Callable[[], Histogram] = Histogram) -> None:
        self._new_histogram = new_histogram
        self._stats: dict[str, RequestStats] = {}

    def record(self, name: str, latency_s: float, *, error: str | None = None, items: int = 0) -> None:
        stats = self._stats.get(name)
        if stats is None:
            stats = self._stats[name] = RequestStats(self._new_histogram())
        stats.record(latency_s if latency_s > 0.0 else 0.0, error, items)

    def take(self) -> dict[str, RequestStats]:
        """Everything recorded since the last take; the collector starts empty again."""
        taken, self._stats = self._stats, {}
        return taken


@dataclass(frozen=True)
class IntervalSnapshot:
    """What one worker recorded during stats window `index` ([index*I, (index+1)*I) after the start).

    Ownership of `stats` passes with the snapshot; nobody mutates it after it is built.
    """

    worker: int
    index: int
    stats: Mapping[str, RequestStats]

    def to_dict(self) -> dict[str, Any]:
        return {
            "worker": self.worker,
            "index": self.index,
            "stats": {name: s.to_dict() for name, s in self.stats.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IntervalSnapshot:
        return cls(
            worker=int(data["worker"]),
            index=int(data["index"]),
            stats={str(name): RequestStats.from_dict(s) for name, s in data["stats"].items()},
        )
