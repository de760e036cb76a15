"""Prometheus metrics. Counters the hot path touches are plain integers (the cache's stats, the
per-call table below); collectors turn them into metrics when scraped, so a call pays a dict
update for observability and a cache hit nothing more.

Exported: per call (`metastore_rpc_calls_total{protocol,method,code}` and the latency histogram
`metastore_rpc_duration_seconds{protocol,method}`); the cache and the poller (hits, misses by
reason, size, position, lag); open txns, waiting and held locks, pool connections in use, whether
the database answers and whether the gateway is ready; restarts of the embedded PostgreSQL; the group
commit of the transaction and lock calls (batches and the calls they served, per call); the process
(resident memory, CPU, open files: prometheus_client's process collector).
"""

from __future__ import annotations

import bisect
import logging
import os
from typing import Any, Iterator, Protocol

from prometheus_client import CollectorRegistry, Histogram, ProcessCollector, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

_log = logging.getLogger(__name__)
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

# Upper bounds, seconds: a cached hit takes tens of microseconds, a database read milliseconds, a
# lock wait or a big write up to seconds.
LATENCY_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                   5.0, 10.0)


def resident_bytes() -> int:
    """The process's resident memory now (Linux /proc); elsewhere its peak, which getrusage gives."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class CallStats:
    """Calls by (protocol, method, status) and their latencies by (protocol, method), as plain
    numbers: `record` is a few dict operations and a bisect on the event loop, no lock (every
    caller runs on the loop; a scrape from the exporter's thread copies the dicts first)."""

    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self.counts: dict[tuple[str, str, str], int] = {}
        self.latency: dict[tuple[str, str], list[float]] = {}  # bucket counts..., +Inf count, sum

    def record(self, protocol: str, method: str, status: str, seconds: float) -> None:
        key = (protocol, method, status)
        self.counts[key] = self.counts.get(key, 0) + 1
        hist = self.latency.get((protocol, method))
        if hist is None:
            hist = self.latency[(protocol, method)] = [0.0] * (len(self.buckets) + 2)
        hist[bisect.bisect_left(self.buckets, seconds)] += 1
        hist[-1] += seconds

    def count(self, protocol: str, method: str, status: str) -> int:
        return self.counts.get((protocol, method, status), 0)

    def by_method(self, protocol: str) -> dict[str, int]:
        """Calls of `protocol` answered so far, by method, whatever their status."""
        out: dict[str, int] = {}
        for (proto, method, _status), n in list(self.counts.items()):
            if proto == protocol:
                out[method] = out.get(method, 0) + n
        return out

    def collect(self) -> Iterator[Any]:
        counts = CounterMetricFamily("metastore_rpc_calls", "calls answered, by protocol, method and status code",
                                     labels=["protocol", "method", "code"])
        for (protocol, method, status), n in sorted(dict(self.counts).items()):
            counts.add_metric([protocol, method, status], n)
        yield counts
        latency = HistogramMetricFamily("metastore_rpc_duration_seconds", "time to answer a call, by method",
                                        labels=["protocol", "method"])
        for (protocol, method), hist in sorted(dict(self.latency).items()):
            hist = list(hist)
            cumulative = 0.0
            buckets: list[tuple[str, float]] = []
            for bound, in_bucket in zip((*(str(b) for b in self.buckets), "+Inf"), hist[:-1]):
                cumulative += in_bucket
                buckets.append((bound, cumulative))
            latency.add_metric([protocol, method], buckets, hist[-1])
        yield latency


class StatsSource(Protocol):
    """What the composition root provides: `cache_stats()` (cache and poller, as `cache-stats`
    shows them) and `ops_stats()` (txns, locks, pool, database and readiness)."""

    def cache_stats(self) -> dict[str, Any]:
        ...

    def ops_stats(self) -> dict[str, Any]:
        ...


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.calls = CallStats()
        self._http: Any = None
        self.fallback_seconds = Histogram(
            "metastore_cache_fallback_seconds", "latency of reads the database answered after a cache miss",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5), registry=self.registry)
        ProcessCollector(registry=self.registry)  # process_resident_memory_bytes and friends
        self.registry.register(_CallCollector(self.calls))

    def fallback(self, seconds: float) -> None:
        self.fallback_seconds.observe(seconds)

    def watch(self, snapshot: StatsSource) -> None:
        self.registry.register(_Collector(snapshot))

    def serve(self, host: str, port: int) -> int:
        """Export on http://host:port/metrics (a daemon thread); the bound port."""
        self._http, _thread = start_http_server(port, addr=host, registry=self.registry)
        return int(self._http.server_port)

    def close(self) -> None:
        """Stop exporting and free the port (idempotent)."""
        http, self._http = self._http, None
        if http is not None:
            http.shutdown()
            http.server_close()


class _CallCollector(Collector):
    def __init__(self, calls: CallStats) -> None:
        self._calls = calls

    def collect(self) -> Iterator[Any]:
        return self._calls.collect()


class _Collector(Collector):
    def __init__(self, source: StatsSource) -> None:
        self._source = source

    def collect(self) -> Iterator[Any]:
        s = self._source.cache_stats()
        hits = CounterMetricFamily("metastore_cache_hits", "reads answered from the cache")
        hits.add_metric([], s["hits"])
        yield hits
        misses = CounterMetricFamily("metastore_cache_misses", "reads sent to the database, by reason",
                                     labels=["reason"])
        for reason, count in sorted(s["misses"].items()):
            misses.add_metric([reason], count)
        yield misses
        batches = CounterMetricFamily("metastore_poller_batches", "batches of notification events the poller applied")
        batches.add_metric([], s["batches"])
        yield batches
        for name, key, doc in (
            ("metastore_cache_tables", "tables", "tables held in the cache"),
            ("metastore_cache_partitions", "partitions", "partitions held in the cache"),
            ("metastore_cache_bytes", "bytes", "encoded bytes of cached partitions"),
            ("metastore_cache_evictions", "evictions", "tables evicted to respect the memory bound"),
            ("metastore_poller_position", "position", "last notification event applied"),
            ("metastore_poller_lag_events", "lag_events", "events committed but not applied yet"),
            ("metastore_poller_lag_ms", "lag_ms", "commit-to-apply delay of the last applied event, ms"),
            ("metastore_poller_failing_seconds", "failing_s",
             "how long the poller has failed to read the notification log, 0 while it reads it (meanwhile the "
             "cache answers what it held, and the lags above do not move)"),
        ):
            g = GaugeMetricFamily(name, doc)
            g.add_metric([], s[key])
            yield g
        ops = self._source.ops_stats()
        for name, key, doc in (
            ("metastore_open_txns", "open_txns", "open transactions (all gateways; refreshed every "
                                                 "hive.count.open.txns.interval)"),
            ("metastore_aborted_txns", "aborted_txns", "aborted transactions still kept (all gateways)"),
            ("metastore_oldest_aborted_txn_age_seconds", "oldest_aborted_txn_age_s",
             "age of the oldest aborted transaction still kept, 0 for none"),
            ("metastore_aborted_write_ids", "aborted_write_ids",
             "aborted write ids every snapshot of their tables lists until the Cleaner ends them"),
            ("metastore_database_up", "database_up", "1 while the database answers this gateway's probe"),
            ("metastore_ready", "ready", "1 when health is SERVING (prewarm done, database up)"),
            ("metastore_db_pool_max", "pool_max", "connections the pool may open"),
        ):
            g = GaugeMetricFamily(name, doc)
            g.add_metric([], ops[key])
            yield g
        restarts = CounterMetricFamily("metastore_embedded_postgres_restarts",
                                       "times this gateway started its embedded PostgreSQL again after its server "
                                       "died")
        restarts.add_metric([], ops["embedded_restarts"])
        yield restarts
        outage_retries = CounterMetricFamily("metastore_db_outage_retries",
                                             "times a call met the database unreachable and waited to try again "
                                             "(hive.hmshandler.retry.attempts)")
        outage_retries.add_metric([], ops["db_outage_retries"])
        yield outage_retries
        locks = GaugeMetricFamily("metastore_locks", "lock components (all gateways), by state", labels=["state"])
        locks.add_metric(["held"], ops["locks_held"])
        locks.add_metric(["waiting"], ops["locks_waiting"])
        yield locks
        pool = GaugeMetricFamily("metastore_db_pool_connections", "this gateway's database connections, by state",
                                 labels=["state"])
        pool.add_metric(["busy"], ops["pool_busy"])
        pool.add_metric(["idle"], ops["pool_idle"])
        yield pool
        batches = CounterMetricFamily("metastore_txn_group_commit_batches",
                                      "statements that served two or more concurrent calls (group commit)",
                                      labels=["call"])
        batched = CounterMetricFamily("metastore_txn_group_commit_calls", "calls served by those statements",
                                      labels=["call"])
        for call, (n_batches, n_calls) in ops["group_commit"].items():
            batches.add_metric([call], n_batches)
            batched.add_metric([call], n_calls)
        yield batches
        yield batched
