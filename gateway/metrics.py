"""Prometheus metrics. Counters the hot path touches are plain integers in the cache's stats;
a collector turns them into metrics when scraped, so a cache hit pays nothing for observability."""

from __future__ import annotations

import logging
import os
from typing import Any, Iterator, Protocol

from prometheus_client import CollectorRegistry, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

_log = logging.getLogger(__name__)
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """The process's resident memory now (Linux /proc); elsewhere its peak, which getrusage gives."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.fallback_seconds = Histogram(
            "metastore_cache_fallback_seconds", "latency of reads the database answered after a cache miss",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5), registry=self.registry)

    def fallback(self, seconds: float) -> None:
        self.fallback_seconds.observe(seconds)

    def watch(self, snapshot: StatsSource) -> None:
        self.registry.register(_Collector(snapshot))

    def serve(self, host: str, port: int) -> int:
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        return int(server.server_port)


class StatsSource(Protocol):
    """Anything with `cache_stats() -> dict` (the composition root provides it)."""

    def cache_stats(self) -> dict[str, Any]:
        ...


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
        for name, key, doc in (
            ("metastore_cache_tables", "tables", "tables held in the cache"),
            ("metastore_cache_partitions", "partitions", "partitions held in the cache"),
            ("metastore_cache_bytes", "bytes", "encoded bytes of cached partitions"),
            ("metastore_cache_evictions", "evictions", "tables evicted to respect the memory bound"),
            ("metastore_poller_position", "position", "last notification event applied"),
            ("metastore_poller_lag_events", "lag_events", "events committed but not applied yet"),
            ("metastore_poller_lag_ms", "lag_ms", "commit-to-apply delay of the last applied event, ms"),
        ):
            g = GaugeMetricFamily(name, doc)
            g.add_metric([], s[key])
            yield g
