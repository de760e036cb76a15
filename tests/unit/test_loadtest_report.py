"""Stats merging across workers and windows, and the report built from it (CSV, markdown, ratios)."""

from __future__ import annotations

import csv
import io
import math

import pytest

from loadtest.report import (
    METRICS,
    compare_ratios,
    comparison_table,
    markdown_table,
    matplotlib_available,
    report_rows,
    timeseries_csv,
    to_csv,
    write_report,
)
from loadtest.stats import (
    TOTAL,
    IntervalSnapshot,
    LiveView,
    ProgressLine,
    RequestStats,
    RunAggregator,
    RunResult,
    StatsCollector,
)


def snapshot(
    worker: int, index: int, name: str, latencies_ms: list[float], *, failures: int = 0, items: int = 0
) -> IntervalSnapshot:
    collector = StatsCollector()
    for i, ms in enumerate(latencies_ms):
        failed = i < failures
        collector.record(
            name, ms / 1e3, error="AioRpcError(UNAVAILABLE)" if failed else None, items=0 if failed else items
        )
    # Through the IPC form, as the parent receives it.
    return IntervalSnapshot.from_dict(snapshot_dict(IntervalSnapshot(worker, index, collector.take())))


def snapshot_dict(snap: IntervalSnapshot) -> dict:
    return snap.to_dict()


def test_collector_counts_failures_by_kind_and_items_only_on_success() -> None:
    collector = StatsCollector()
    collector.record("Get", 0.002, items=5)
    collector.record("Get", 0.004, error="TimeoutError", items=5)
    collector.record("Get", 0.003, error="TimeoutError")
    stats = collector.take()["Get"]
    assert (stats.requests, stats.failures, stats.items) == (3, 2, 5)
    assert stats.errors == {"TimeoutError": 2}
    assert stats.latency.count == 3  # failures are timed too
    assert collector.take() == {}  # take() starts afresh


def test_aggregator_merges_workers_per_window_and_in_total() -> None:
    agg = RunAggregator(interval_s=1.0)
    agg.add(snapshot(0, 0, "Get", [1.0] * 100, items=10))
    agg.add(snapshot(1, 0, "Get", [3.0] * 100, items=10))
    agg.add(snapshot(1, 1, "Get", [2.0] * 50, failures=5, items=10))
    agg.add(snapshot(0, 1, "Put", [5.0] * 10))
    result = agg.result("t", duration_s=2.0)
    assert result.stats["Get"].requests == 250 and result.stats["Get"].failures == 5
    assert result.stats["Get"].items == 2450
    assert result.total().requests == 260
    first, second = result.series
    assert (first.requests, first.requests_per_s) == (200, 200.0)
    assert first.p50_s == pytest.approx(0.001, rel=0.01) and first.p99_s == pytest.approx(0.003, rel=0.01)
    assert (second.requests, second.failures) == (60, 5)


def test_series_folds_a_sliver_of_a_last_window_into_the_previous_one() -> None:
    agg = RunAggregator(interval_s=1.0)
    for index in range(3):
        agg.add(snapshot(0, index, "Get", [1.0] * 100))
    agg.add(snapshot(0, 3, "Get", [1.0] * 2))  # in-flight requests completing just after the end
    series = agg.series(duration_s=3.01)
    assert len(series) == 3
    assert series[-1].requests == 102 and series[-1].duration_s == pytest.approx(1.01)
    assert sum(p.requests for p in series) == 302
    # A half-or-longer last window stays, with its own length.
    series = agg.series(duration_s=3.6)
    assert series[-1].duration_s == pytest.approx(0.6) and series[-1].requests_per_s == pytest.approx(2 / 0.6)


def test_live_view_uses_recent_complete_windows() -> None:
    agg = RunAggregator(interval_s=1.0)
    agg.add(snapshot(0, 0, "Get", [1.0] * 10))
    agg.add(snapshot(0, 1, "Get", [1.0] * 30))
    agg.add(snapshot(0, 2, "Get", [1.0] * 999))  # window 2 is not complete at 2.5 s
    view = agg.live(elapsed_s=2.5, recent_windows=2)
    assert view.recent_requests_per_s == pytest.approx(20.0)
    assert view.requests == 1039


def result(target: str, duration_s: float, per_name_ms: dict[str, list[float]], items: int = 0) -> RunResult:
    stats = {}
    for name, values in per_name_ms.items():
        s = RequestStats()
        for ms in values:
            s.record(ms / 1e3, None, items)
        stats[name] = s
    return RunResult(target=target, duration_s=duration_s, stats=stats)


RESULTS = [
    result(
        "gateway-cached",
        10.0,
        {"GetTable": [1.0] * 900 + [2.0] * 100, "GetPartitionsByNames(100)": [4.0] * 500},
        items=100,
    ),
    result(
        "hive-metastore",
        10.0,
        {"GetTable": [10.0] * 900 + [40.0] * 100, "GetPartitionsByNames(100)": [80.0] * 100},
        items=100,
    ),
]


def test_report_rows_compute_rates_and_percentiles_per_target_and_name() -> None:
    rows = {(r.target, r.name): r for r in report_rows(RESULTS)}
    cached = rows[("gateway-cached", "GetTable")]
    assert cached.requests == 1000 and cached.calls_per_s == 100.0 and cached.items_per_s == 10000.0
    assert cached.p50_ms == pytest.approx(1.0, rel=0.005) and cached.p99_ms == pytest.approx(2.0, rel=0.005)
    assert cached.max_ms == 2.0 and cached.mean_ms == pytest.approx(1.1)
    total = rows[("gateway-cached", TOTAL)]
    assert total.requests == 1500 and total.calls_per_s == 150.0


def test_compare_ratios_per_request_name() -> None:
    ratios = compare_ratios(RESULTS, "hive-metastore", "gateway-cached", "p99_ms")
    assert ratios["GetTable"] == pytest.approx(20.0, rel=0.01)
    assert ratios["GetPartitionsByNames(100)"] == pytest.approx(20.0, rel=0.01)
    assert set(ratios) == {"GetTable", "GetPartitionsByNames(100)", TOTAL}
    throughput = compare_ratios(RESULTS, "gateway-cached", "hive-metastore", "calls_per_s")
    assert throughput["GetPartitionsByNames(100)"] == pytest.approx(5.0)
    with pytest.raises(ValueError, match="unknown metric"):
        compare_ratios(RESULTS, "hive-metastore", "gateway-cached", "p42")
    with pytest.raises(ValueError, match="no results"):
        compare_ratios(RESULTS, "nope", "gateway-cached", "p99_ms")


def test_csv_has_one_row_per_target_and_name_plus_totals() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(RESULTS))))
    assert len(rows) == 6
    assert set(METRICS) <= set(rows[0])
    get_table = next(r for r in rows if r["target"] == "hive-metastore" and r["name"] == "GetTable")
    assert int(get_table["requests"]) == 1000 and float(get_table["p99_ms"]) == pytest.approx(40.0, rel=0.005)


def test_markdown_tables_are_well_formed() -> None:
    table = markdown_table(RESULTS)
    lines = table.strip().splitlines()
    assert len(lines) == 2 + 6  # two names per target, plus its total
    assert all(line.startswith("| ") and line.endswith(" |") for line in lines)
    assert len({line.count("|") for line in lines}) == 1
    side_by_side = comparison_table(RESULTS, "p99_ms").strip().splitlines()
    assert side_by_side[0] == "| request (p99 ms) | gateway-cached | hive-metastore |"
    assert len(side_by_side) == 2 + 3


def test_empty_and_failed_targets_render_without_errors() -> None:
    failed = RunResult(target="broken", duration_s=0.0, stats={}, worker_errors=("target failed",))
    rows = report_rows([failed])
    assert rows[0].requests == 0 and math.isnan(rows[0].p99_ms)
    assert "–" in markdown_table([failed])
    assert ",," in to_csv([failed])


def test_write_report_produces_csv_markdown_and_a_png_when_matplotlib_is_there(tmp_path) -> None:
    agg = RunAggregator(1.0)
    for index in range(3):
        agg.add(snapshot(0, index, "Get", [1.0 + index] * 50))
    results = [agg.result("echo-floor", 3.0), RESULTS[0]]
    files = write_report(results, tmp_path / "out")
    assert files.csv.read_text().startswith("target,name,requests")
    assert "echo-floor" in files.markdown.read_text()
    assert len(timeseries_csv(results).splitlines()) == 1 + 3
    if matplotlib_available():
        assert files.png is not None and files.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert files.png is None


def live(elapsed_s: float, requests: int = 1000) -> LiveView:
    return LiveView(elapsed_s, requests, 2, 500.0, 0.0012, 0.0034, 0.0089)


def test_progress_rewrites_one_line_on_a_tty() -> None:
    out = io.StringIO()
    line = ProgressLine("gateway-cached", out, is_tty=True, tty_every_s=0.25)
    line.update(live(0.1))
    line.update(live(0.2))  # too soon: skipped
    line.update(live(0.4))
    line.finish(live(1.0))
    text = out.getvalue()
    assert text.count("\r") == 3 and text.count("\n") == 1 and text.endswith("done\n")
    assert "[gateway-cached]" in text and "500 req/s" in text and "p99 8.90ms" in text and "failures 2 (0.20%)" in text


def test_progress_writes_a_line_every_few_seconds_elsewhere() -> None:
    out = io.StringIO()
    line = ProgressLine("echo-floor", out, is_tty=False, plain_every_s=5.0)
    for tenth in range(0, 121):
        line.update(live(tenth / 10))
    line.finish(live(12.0))
    lines = out.getvalue().splitlines()
    assert [ln.split("]")[1].split("s")[0].strip() for ln in lines] == ["5.0", "10.0", "12.0"]
    assert "\r" not in out.getvalue()
