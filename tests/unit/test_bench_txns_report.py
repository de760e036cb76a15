"""The bench:txns section rendered from saved measurements (loadtest/bench_txns_report.py): the headline's
gateway/HMS ratio per workload and client count, each peer's setup named, the lag's idle and loaded rows."""

from __future__ import annotations

from typing import Any

from loadtest.bench_txns_report import SECTION_END, SECTION_START, render_section

PG = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on", "wal_sync_method": "fdatasync",
      "shared_buffers": "128MB"}


def _run(target: str, workload: str, clients: int, txns_per_s: float) -> dict[str, Any]:
    return {"target": target, "mode": "on", "workload": workload, "clients": clients, "txns_per_s": txns_per_s,
            "partitions_per_s": txns_per_s * (10 if workload == "parts" else 0), "p50_ms": 10.0, "p95_ms": 20.0,
            "p99_ms": 30.0, "max_ms": 40.0, "failures": 0, "errors": {}, "worker_errors": [],
            "cpu": {"gateway": 0.5, "postgres": 0.3, "generator": 0.1, "other": 0.0, "machine": 0.9},
            "commits_per_txn": 7.0, "wal_fsyncs_per_txn": 3.0, "wal_bytes_per_txn": 2048.0,
            "wait_profile": {"idle": 5.0}, "samples": 100, "seq_waiter_share": 0.0, "discarded_other_cores": []}


def _lag(p99: float, n: int) -> dict[str, Any]:
    one = {"n": n, "p50_ms": 1.0, "p90_ms": 2.0, "p99_ms": p99, "max_ms": p99 + 1}
    return {"B": one, "C": one, "both": one}


def _data() -> dict[str, Any]:
    gateway = [_run("gateway", w, c, {("txn", 1): 80.0, ("txn", 16): 300.0, ("parts", 1): 40.0,
                                      ("parts", 16): 150.0}[w, c]) for w in ("txn", "parts") for c in (1, 16)]
    thrift = [_run("gateway-thrift", w, c, {("txn", 1): 90.0, ("txn", 16): 450.0, ("parts", 1): 30.0,
                                             ("parts", 16): 120.0}[w, c]) for w in ("txn", "parts") for c in (1, 16)]
    hms = [_run("hms", w, c, {("txn", 1): 40.0, ("txn", 16): 75.0, ("parts", 1): 8.0,
                              ("parts", 16): 6.0}[w, c]) for w in ("txn", "parts") for c in (1, 16)]
    return {
        "command": "python -m loadtest.bench_txns --lag", "date_utc": "2026-11-24T03:00:00+00:00",
        "load": {"loadavg1_before": 0.1, "loadavg1_after": 0.2, "machine_busy": 0.5},
        "machine": {"nproc": 2, "cpu_model": "AMD EPYC", "kernel": "6", "python": "3.11.7",
                    "code": {"commit": "abc1234", "server_files_changed": 0}},
        "options": {"dsn": "", "workloads": ["txn", "parts"], "clients": [1, 16], "partitions": 10, "duration": 20.0,
                    "workers": 1, "warmup": 10.0, "max_other_cores": 0.25, "retries": 3},
        "targets": [
            {"target": "gateway", "mode": "on", "pg_version": "18.6", "pg_settings": PG,
             "gateway_settings": {"pool_max_size": 10, "loop": "uvloop"}, "fdatasync": None, "runs": gateway},
            {"target": "gateway-thrift", "mode": "on", "pg_version": "18.6", "pg_settings": PG,
             "gateway_settings": {"pool_max_size": 10, "loop": "uvloop"}, "fdatasync": None, "runs": thrift},
            {"target": "hms", "mode": "on", "pg_version": "18.6", "pg_settings": PG, "fdatasync": None,
             "hms": {"version": "2.3.10", "jars": ".venv/pyspark/jars", "jvm_args": [], "pool": 10,
                     "java": 'openjdk version "17.0.15" 2025-04-15 OpenJDK 64-Bit Server VM (build 17)',
                     "properties": {"hive.support.concurrency": "true"}, "jdbc_jar": "/usr/share/java/postgresql.jar",
                     "jdbc_version": "42.5.5", "after": {"txns_opened": 9, "completed_components": 9, "open_txns": 0,
                                                          "locks": 0, "log_errors": 0}},
             "runs": hms}],
        "lag": {"duration_s": 60.0, "pg_version": "18.6", "commit_ms_p50": 5.0,
                "load": {"clients": 16, "txns_per_s": 120.0, "failures": 0, "worker_errors": []},
                "idle_lag": _lag(3.5, 100), "lag": _lag(9.25, 400),
                "own_view": {"idle": {"B": {"p50_ms": 0.9, "p99_ms": 2.5, "window": 310, "since": 310}},
                             "under the write load": {"B": {"p50_ms": 4.0, "p99_ms": 12.0, "window": 1000,
                                                            "since": 2400}}}},
        "files": [],
    }


def test_the_headline_gives_the_gateway_over_hms_ratio_per_workload_and_client_count() -> None:
    text = render_section(_data())
    assert text.startswith(SECTION_START) and text.rstrip().endswith(SECTION_END)
    assert "| txn manager only | gRPC | 16 | 300.0 | 75.0 | **4.00x** |" in text
    assert "| plus 10 partitions | gRPC | 16 | 150.0 | 6.0 | **25.00x** |" in text
    assert "| txn manager only | gRPC | 1 | 80.0 | 40.0 | **2.00x** |" in text


def test_the_gateway_over_thrift_gets_its_own_headline_rows_naming_whose_calls_it_ran() -> None:
    text = render_section(_data())
    assert "| txn manager only | Thrift (the HMS's client and calls) | 16 | 450.0 | 75.0 | **6.00x** |" in text
    assert "| plus 10 partitions | Thrift (Hive 3's calls) | 16 | 120.0 | 6.0 | **20.00x** |" in text
    assert "`open_txns` → `allocate_table_write_ids` → `lock` → `add_partitions`" in text
    assert "| gateway over Thrift, txn manager only, c=16 | 450.0 |" in text
    assert "- **Gateway over Thrift (durable (fsync on)):** one `metastore-gateway serve` process" in text


def test_each_peer_is_named_next_to_the_figures() -> None:
    text = render_section(_data())
    assert ("*gateway*: one process on uvloop, pool 10, PostgreSQL 18.6 embedded, fsync=on; *HMS*: Hive Metastore "
            "2.3.10 from pyspark's jars, Java 17.0.15, JVM flags default, DBCP pools of 10, pgjdbc 42.5.5, "
            "PostgreSQL 18.6 embedded, fsync=on.") in text
    assert "9 rows in COMPLETED_TXN_COMPONENTS, 0 txns still open" in text


def test_the_lag_shows_the_idle_baseline_and_the_figure_under_load() -> None:
    text = render_section(_data())
    assert "| idle | B and C (the later of the two) | 100 | 1.00 | 2.00 | **3.50** | 4.50 |" in text
    assert "| under the write load | B and C (the later of the two) | 400 | 1.00 | 2.00 | **9.25** | 10.25 |" in text
    assert "| under the write load | B | 4.00 | **12.00** | 1,000 | 2,400 |" in text  # the watcher's own view
    assert "| idle | B | 0.90 | **2.50** | 310 | 310 |" in text


def test_a_gateway_only_run_has_no_headline_and_no_lag() -> None:
    data = _data()
    data["targets"], data["lag"] = data["targets"][:2], None
    text = render_section(data)
    assert "gateway / HMS" not in text and "Commit-to-visible" not in text
    assert "| gateway, plus 10 partitions, c=16 | 150.0 | 1,500 |" in text
