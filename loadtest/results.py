"""The parent's side of the stats: merging worker snapshots into a run's totals and time series.

`RunAggregator.add` folds each worker's interval snapshot into (a) the per-request-name totals and
(b) the window with the same index, all workers combined. Windows are aligned to the run's common
start, so window k of every worker covers the same second. `result()` freezes both into a
`RunResult`, which is what reports consume.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from loadtest.config import RunConfig
from loadtest.stats import IntervalSnapshot, RequestStats, merge_all

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
    def end_s(self) -> float:
        return self.start_s + self.duration_s

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

    def named(self, name: str) -> RequestStats:
        """Stats of one request name, or of all of them for `TOTAL`; KeyError if never recorded."""
        return self.total() if name == TOTAL else self.stats[name]


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

    @property
    def requests(self) -> int:
        return self._requests

    @property
    def failures(self) -> int:
        return self._failures

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
            elapsed_s=elapsed_s,
            requests=self._requests,
            failures=self._failures,
            recent_requests_per_s=rate,
            p50_s=p50,
            p95_s=p95,
            p99_s=p99,
        )

    def overall(self, duration_s: float) -> LiveView:
        """The whole run as a `LiveView`: mean throughput and percentiles over every request."""
        total = merge_all(self._totals)
        p50, p95, p99 = total.latency.percentiles((50, 95, 99))
        return LiveView(
            elapsed_s=duration_s,
            requests=self._requests,
            failures=self._failures,
            recent_requests_per_s=self._requests / duration_s if duration_s > 0 else math.nan,
            p50_s=p50,
            p95_s=p95,
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
        self,
        target: str,
        duration_s: float,
        *,
        config: RunConfig | None = None,
        worker_errors: tuple[str, ...] = (),
        users_started: int = 0,
        tasks_started: int = 0,
        started_at: float = 0.0,
    ) -> RunResult:
        return RunResult(
            target=target,
            duration_s=duration_s,
            stats={name: s.copy() for name, s in sorted(self._totals.items())},
            series=self.series(duration_s),
            config=config,
            worker_errors=worker_errors,
            users_started=users_started,
            tasks_started=tasks_started,
            started_at=started_at,
        )
