"""Smoke runs of `python -m loadtest.bench_txns`: a real gateway process on a fresh embedded PostgreSQL
(fsync off) over gRPC and over Thrift, three gateways on one durable database for the lag figure, and the
real Hive Metastore 2.3.10 from pyspark's jars on a durable embedded PostgreSQL with Hive's transaction
tables, each driven by a real load-generator worker process for two seconds per run. They check the
plumbing (transactions commit on every target, the markdown section is written in place, the report files
exist, the lag probe saw commits), not the numbers. Marked `bench`: they run in `make test-bench`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtest import bench_txns
from loadtest.hms import hms_unavailable_reason, postgres_unavailable_reason

TXN, PARTS = bench_txns.request_name(0), bench_txns.request_name(10)


def _run(tmp_path: Path, *args: str) -> tuple[dict, str]:
    out = tmp_path / "benchmarks.md"
    out.write_text(f"# Benchmarks\n\nintro\n\n{bench_txns.SECTION_START}\nstale\n{bench_txns.SECTION_END}\n\n"
                   "## another section\n\nkept\n")
    results = tmp_path / "results"
    code = bench_txns.main(["--duration", "2", "--warmup", "1", "--pause", "0", "--retries", "0", "--quiet",
                            "--no-plot", "--out", str(out), "--results-dir", str(results), *args])
    assert code == 0
    text = out.read_text()
    assert text.count(bench_txns.SECTION_START) == 1 and text.count(bench_txns.SECTION_END) == 1
    assert "stale" not in text
    assert text.startswith("# Benchmarks\n\nintro\n\n" + bench_txns.SECTION_START)
    assert text.endswith("## another section\n\nkept\n")
    data = json.loads((results / "bench_txns.json").read_text())
    csv = (results / "bench_txns.csv").read_text()
    for target in data["targets"]:
        assert csv.count(TXN) + csv.count(PARTS) >= len(target["runs"])
    return data, text


def _check_runs(runs: list[dict], clients: set[int]) -> None:
    assert {(r["workload"], r["clients"]) for r in runs} == {(w, c) for w in ("txn", "parts") for c in clients}
    for r in runs:
        assert r["failures"] == 0 and not r["worker_errors"]
        assert r["txns"] > 0 and r["partitions"] == (10 * r["txns"] if r["workload"] == "parts" else 0)
        assert r["commits_per_txn"] is not None  # pg_stat of the server's own database was read


@pytest.mark.bench
def test_bench_txns_gateway_runs_both_workloads_and_the_lag_probe(tmp_path: Path) -> None:
    data, text = _run(tmp_path, "--targets", "gateway", "--clients", "1,2", "--fsync", "off", "--lag",
                      "--lag-duration", "3")
    [target] = data["targets"]
    assert target["target"] == "gateway" and target["mode"] == "off" and target["pg_settings"]["fsync"] == "off"
    _check_runs(target["runs"], {1, 2})
    lag = data["lag"]
    assert lag["load"]["failures"] == 0 and lag["load"]["txns_per_s"] > 0
    assert lag["idle_lag"]["both"]["n"] == 100 and lag["idle_lag"]["both"]["p50_ms"] > 0  # the same run's baseline
    assert lag["lag"]["both"]["n"] > 0 and lag["lag"]["both"]["p50_ms"] > 0
    assert lag["lag"]["both"]["p99_ms"] >= max(lag["lag"]["B"]["p50_ms"], lag["lag"]["C"]["p50_ms"])
    assert "python -m loadtest.bench_txns --duration 2" in text
    assert "| gateway fsync=off, txn manager only, c=2 |" in text
    assert "### Commit-to-visible lag across three gateways under the write load" in text
    assert "| idle | B and C (the later of the two) | 100 |" in text


@pytest.mark.bench
def test_bench_txns_gateway_over_thrift_runs_the_hms_and_hive3_workloads(tmp_path: Path) -> None:
    data, text = _run(tmp_path, "--targets", "gateway-thrift", "--clients", "2", "--fsync", "off")
    [target] = data["targets"]
    assert target["target"] == "gateway-thrift"
    # Every partition added: the gateway refuses a partition of a transactional table outside a txn, so each
    # one carried its txn's write id (Hive 3's calls).
    _check_runs(target["runs"], {2})
    assert "| gateway over Thrift fsync=off, txn manager only, c=2 |" in text
    assert "| gateway over Thrift fsync=off, plus 10 partitions, c=2 |" in text


_HMS_REASON = hms_unavailable_reason() or postgres_unavailable_reason()


@pytest.mark.bench
@pytest.mark.skipif(_HMS_REASON is not None, reason=f"Hive Metastore target: {_HMS_REASON}")
def test_bench_txns_hms_target_commits_on_hive_txn_tables_durably(tmp_path: Path) -> None:
    data, text = _run(tmp_path, "--targets", "hms", "--clients", "2")
    [target] = data["targets"]
    assert target["target"] == "hms" and target["pg_settings"]["fsync"] == "on"
    assert target["hms"]["version"].startswith("2.3.") and target["hms"]["jdbc_version"] != "unknown"
    _check_runs(target["runs"], {2})
    after = target["hms"]["after"]  # TxnHandler served the calls on the tables of loadtest/hms_txn_schema.sql
    assert after["completed_components"] >= sum(r["txns"] for r in target["runs"])
    assert after["open_txns"] == 0 and after["locks"] == 0 and after["log_errors"] == 0
    assert "| HMS, plus 10 partitions, c=2 |" in text
    assert "| txn manager only | – | 2 | – |" in text  # no gateway run: the HMS's figure alone, no ratio
