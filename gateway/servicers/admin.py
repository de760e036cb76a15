"""metastore.v1.Admin: operator views of this gateway."""

from __future__ import annotations

import grpc

from gateway.errors import rpc_methods
from gateway.metrics import StatsSource
from protos.metastore.v1 import admin_pb2 as pb
from protos.metastore.v1 import admin_pb2_grpc


@rpc_methods
class AdminServicer(admin_pb2_grpc.AdminServicer):
    def __init__(self, source: StatsSource) -> None:
        self._source = source

    async def CacheStats(self, request: pb.CacheStatsRequest,
                         context: grpc.aio.ServicerContext) -> pb.CacheStatsResponse:
        s = self._source.cache_stats()
        return pb.CacheStatsResponse(
            enabled=s["enabled"], hits=s["hits"], misses_by_reason=s["misses"], tables=s["tables"],
            partitions=s["partitions"], bytes=s["bytes"], evictions=s["evictions"], poller_position=s["position"],
            poller_lag_events=s["lag_events"], poller_lag_ms=s["lag_ms"], poller_lag_p50_ms=s["lag_p50_ms"],
            poller_lag_p99_ms=s["lag_p99_ms"], fills=s["fills"], reloads=s["reloads"],
            resident_bytes=s.get("resident_bytes", 0), poller_batches=s["batches"])
