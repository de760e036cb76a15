"""Statistics of a run, from the request to the report: per-name accumulators (`RequestStats`, one
`Histogram` each), the recorder users write to (`StatsCollector`), the interval snapshots workers send
(`IntervalSnapshot`), the parent's merge of them into totals and a time series (`RunAggregator` ->
`RunResult`), and the live progress line (`ProgressLine`).

A worker's collector is `take()`n every stats interval and shipped as a snapshot of *deltas*: the parent
sums deltas, so merging workers and building the time series are the same exact operation
(`RequestStats.merge`). Windows are aligned to the run's common start, so window k of every worker
covers the same second. On a terminal the progress line is rewritten in place a few times a second;
anywhere else (CI logs, captured stderr) one full line is written every few seconds.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, TextIO

if TYPE_CHECKING:
    from loadtest.engine import RunConfig
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests, "failures": self.failures, "items": self.items, "errors": dict(self.errors),
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
            "worker": self.worker, "index": self.index,
            "stats": {name: s.to_dict() for name, s in self.stats.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IntervalSnapshot:
        return cls(
            worker=int(data["worker"]), index=int(data["index"]),
            stats={str(name): RequestStats.from_dict(s) for name, s in data["stats"].items()},
        )


TOTAL = "Aggregated"  # the report's name for all request names of a target combined


@dataclass(frozen=True, slots=True)
class TimePoint:
    """One stats window of a run, all request names and workers combined."""

    start_s: float
    duration_s: float
    requests: int
    failures: int
    items: int
    p50_s: float
    p95_s: float
    p99_s: float

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else math.nan

    @property
    def items_per_s(self) -> float:
        return self.items / self.duration_s if self.duration_s > 0 else math.nan


@dataclass(frozen=True)
class RunResult:
    """Everything one target's run measured. `stats` is keyed by request name; treat it as read-only."""

    target: str
    duration_s: float
    stats: Mapping[str, RequestStats]
    series: tuple[TimePoint, ...] = ()
    config: RunConfig | None = None
    worker_errors: tuple[str, ...] = ()
    users_started: int = 0
    tasks_started: int = 0
    started_at: float = 0.0  # wall clock (time.time()) at the run's start: places sequential runs on one axis

    @property
    def ok(self) -> bool:
        """No worker crashed or timed out (request failures are counted in `stats`, not here)."""
        return not self.worker_errors

    def total(self) -> RequestStats:
        """All request names combined (a new object)."""
        return merge_all(self.stats)


@dataclass(frozen=True, slots=True)
class LiveView:
    """What the progress line shows: recent throughput and latency, cumulative counts."""

    elapsed_s: float
    requests: int
    failures: int
    recent_requests_per_s: float
    p50_s: float
    p95_s: float
    p99_s: float


class RunAggregator:
    """Merges interval snapshots from any number of workers, in any order."""

    def __init__(self, interval_s: float) -> None:
        if not interval_s > 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        self._interval = interval_s
        self._totals: dict[str, RequestStats] = {}
        self._windows: dict[int, RequestStats] = {}
        self._requests = 0
        self._failures = 0

    def add(self, snapshot: IntervalSnapshot) -> None:
        window = self._windows.get(snapshot.index)
        for name, stats in snapshot.stats.items():
            total = self._totals.get(name)
            if total is None:
                self._totals[name] = stats.copy()
            else:
                total.merge(stats)
            if window is None:
                window = self._windows[snapshot.index] = stats.copy()
            else:
                window.merge(stats)
            self._requests += stats.requests
            self._failures += stats.failures

    def live(self, elapsed_s: float, recent_windows: int = 3, arrival_lag_s: float = 0.2) -> LiveView:
        """Throughput and percentiles over up to `recent_windows` complete windows before `elapsed_s`.

        A window counts as complete `arrival_lag_s` after it closed, once every worker's snapshot of it
        has had time to arrive; otherwise the rate would dip each time a window has just closed.
        """
        complete = int(max(0.0, elapsed_s - arrival_lag_s) // self._interval)
        first = max(0, complete - recent_windows)
        recent: RequestStats | None = None
        for index in range(first, complete):
            window = self._windows.get(index)
            if window is not None:
                recent = window.copy() if recent is None else recent.merge(window)
        span = (complete - first) * self._interval
        if recent is None:
            p50 = p95 = p99 = math.nan
            rate = 0.0 if span > 0 else math.nan
        else:
            p50, p95, p99 = recent.latency.percentiles((50, 95, 99))
            rate = recent.requests / span
        return LiveView(
            elapsed_s=elapsed_s, requests=self._requests, failures=self._failures, recent_requests_per_s=rate,
            p50_s=p50, p95_s=p95, p99_s=p99,
        )

    def overall(self, duration_s: float) -> LiveView:
        """The whole run as a `LiveView`: mean throughput and percentiles over every request."""
        total = merge_all(self._totals)
        p50, p95, p99 = total.latency.percentiles((50, 95, 99))
        return LiveView(
            elapsed_s=duration_s, requests=self._requests, failures=self._failures,
            recent_requests_per_s=self._requests / duration_s if duration_s > 0 else math.nan, p50_s=p50, p95_s=p95,
            p99_s=p99,
        )

    def series(self, duration_s: float) -> tuple[TimePoint, ...]:
        """One point per window up to `duration_s` (empty windows included as zero-request points).

        The last window usually ends early; when it is shorter than half an interval it is folded
        into the previous one, because a rate over a sliver of time is noise (a few in-flight
        requests completing after the deadline would plot as a spike).
        """
        if not self._windows and duration_s <= 0:
            return ()
        interval = self._interval
        last = max(max(self._windows, default=0), max(0, math.ceil(duration_s / interval) - 1))
        spans: list[tuple[float, float, RequestStats | None]] = []
        for index in range(last + 1):
            start = index * interval
            length = min(interval, duration_s - start) if index == last else interval
            spans.append((start, max(length, 0.0), self._windows.get(index)))
        if len(spans) >= 2 and spans[-1][1] < interval / 2:
            start, length, stats = spans[-2]
            _, tail_length, tail = spans.pop()
            merged = stats
            if tail is not None:
                merged = tail.copy() if stats is None else stats.copy().merge(tail)
            spans[-1] = (start, length + tail_length, merged)
        points = []
        for start, length, stats in spans:
            if stats is None:
                points.append(TimePoint(start, length, 0, 0, 0, math.nan, math.nan, math.nan))
                continue
            p50, p95, p99 = stats.latency.percentiles((50, 95, 99))
            points.append(TimePoint(start, length, stats.requests, stats.failures, stats.items, p50, p95, p99))
        return tuple(points)

    def result(
        self, target: str, duration_s: float, *, config: RunConfig | None = None, worker_errors: tuple[str, ...] = (),
        users_started: int = 0, tasks_started: int = 0, started_at: float = 0.0,
    ) -> RunResult:
        return RunResult(
            target=target, duration_s=duration_s, stats={name: s.copy() for name, s in sorted(self._totals.items())},
            series=self.series(duration_s), config=config, worker_errors=worker_errors, users_started=users_started,
            tasks_started=tasks_started, started_at=started_at,
        )


def format_ms(seconds: float) -> str:
    """Seconds as a short millisecond string; '-' for NaN (no data yet)."""
    if math.isnan(seconds):
        return "-"
    ms = seconds * 1e3
    if ms < 10:
        return f"{ms:.2f}ms"
    if ms < 1000:
        return f"{ms:.1f}ms"
    return f"{ms / 1e3:.2f}s"


def format_line(label: str, view: LiveView) -> str:
    rate = "-" if math.isnan(view.recent_requests_per_s) else f"{view.recent_requests_per_s:,.0f}"
    share = 100.0 * view.failures / view.requests if view.requests else 0.0
    return (
        f"[{label}] {view.elapsed_s:6.1f}s  {rate:>8} req/s  "
        f"p50 {format_ms(view.p50_s)}  p95 {format_ms(view.p95_s)}  p99 {format_ms(view.p99_s)}  "
        f"requests {view.requests:,}  failures {view.failures:,} ({share:.2f}%)"
    )


class ProgressLine:
    """Writes progress for one run to `stream` (stderr by default). `update` is cheap to call often:
    it decides itself whether to write. `finish` always writes the last state and ends the line."""

    def __init__(
        self, label: str, stream: TextIO | None = None, *, is_tty: bool | None = None, tty_every_s: float = 0.25,
        plain_every_s: float = 5.0,
    ) -> None:
        self._label = label
        self._stream = stream if stream is not None else sys.stderr
        if is_tty is None:
            isatty = getattr(self._stream, "isatty", None)
            is_tty = bool(isatty and isatty())
        self._tty = is_tty
        self._every = tty_every_s if is_tty else plain_every_s
        # A log gets its first line only after one period: a line of zeros at 0.0s says nothing.
        self._last_written: float | None = None if is_tty else 0.0
        self._width = 0

    def update(self, view: LiveView) -> None:
        if view.elapsed_s < 0:  # workers are still waiting for the start instant
            return
        if self._last_written is not None and view.elapsed_s - self._last_written < self._every:
            return
        self._last_written = view.elapsed_s
        self._write(format_line(self._label, view), final=False)

    def finish(self, view: LiveView) -> None:
        """Write the whole run's summary (`RunAggregator.overall`) and end the line."""
        self._write(format_line(self._label, view) + "  done", final=True)

    def _write(self, line: str, *, final: bool) -> None:
        if self._tty:
            # Pad with spaces so a shorter line fully covers the previous one.
            padded = line.ljust(self._width)
            self._width = len(line)
            self._stream.write("\r" + padded + ("\n" if final else ""))
        else:
            self._stream.write(line + "\n")
        self._stream.flush()


class NullProgress:
    """A progress sink that writes nothing."""

    def update(self, view: LiveView) -> None:
        pass

    def finish(self, view: LiveView) -> None:
        pass
