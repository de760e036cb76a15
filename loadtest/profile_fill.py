"""How long a cache fill, and a rename, of a large table hold up a gateway's other calls:
`python -m loadtest.profile_fill [--partitions 100000]`.

Gateway A loads an external table of `--partitions` partitions (AddPartitions, 1,000 a call) on a
fresh embedded PostgreSQL. Gateway B, started afterwards with the default lazy prewarm, serves a
pinger: GetDatabase calls back to back, each answered from B's cache. Then, one at a time:

* fill: the table's first read on B, which loads it into B's cache in the background;
* rename: A renames the table; B's poller applies it (a table this large is dropped from the cache
  rather than re-framed at once) and the next read of the new name loads it again.

Each phase reports how long until B's cache held the table again, and the pinger's worst and p99
latency meanwhile: a call waits while B's event loop runs a step of the fill.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Awaitable, Callable

import grpc

from loadtest.gateway_targets import bench_table, partition_names, partition_values
from loadtest.harness import postgres, start_gateway, workdir
from protos.metastore.v1 import admin_pb2, admin_pb2_grpc, catalog_pb2_grpc
from protos.metastore.v1 import catalog_pb2 as pb

BATCH = 1000


async def _phase(action: Callable[[], Awaitable[object]], cached: Callable[[], Awaitable[bool]],
                 latencies: list[float]) -> tuple[float, float, float]:
    """(seconds until `cached()`, worst and p99 pinger ms meanwhile) after `action()`."""
    await asyncio.sleep(0.5)
    latencies.clear()
    started = time.perf_counter()
    await action()
    while not await cached():
        await asyncio.sleep(0.01)
    seconds = time.perf_counter() - started
    window = sorted(latencies)
    return seconds, 1e3 * window[-1], 1e3 * statistics.quantiles(window, n=100, method="inclusive")[98]


async def run(partitions: int) -> list[tuple[str, float, float, float]]:
    with workdir(prefix="msgw-fill-") as root:
        async with postgres(root, fast=True) as dsn:
            a = await start_gateway("--dsn", dsn)
            try:
                async with grpc.aio.insecure_channel(a.address) as channel:
                    writer = catalog_pb2_grpc.CatalogStub(channel)
                    await writer.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
                    await writer.CreateTable(pb.CreateTableRequest(table=bench_table("big", "db", external=True)))
                    values = partition_values(partitions)
                    for first in range(0, partitions, BATCH):
                        await writer.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="big", partitions=[
                            pb.Partition(values=list(v)) for v in values[first:first + BATCH]]))
                        print(f"\rloading partitions: {min(partitions, first + BATCH):,}", end="", file=sys.stderr)
                    print(file=sys.stderr)
                    b = await start_gateway("--dsn", dsn)
                    try:
                        return await _measure(writer, b.address, partitions)
                    finally:
                        b.stop()
            finally:
                a.stop()


async def _measure(writer: catalog_pb2_grpc.CatalogStub, address: str,
                   partitions: int) -> list[tuple[str, float, float, float]]:
    async with grpc.aio.insecure_channel(address) as channel:
        catalog, admin = catalog_pb2_grpc.CatalogStub(channel), admin_pb2_grpc.AdminStub(channel)
        latencies: list[float] = []
        stop = asyncio.Event()

        async def pinger() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                await catalog.GetDatabase(pb.GetDatabaseRequest(name="db"))
                latencies.append(time.perf_counter() - started)

        names = partition_names(100)

        async def read(table: str) -> None:
            await catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(db_name="db", table_name=table,
                                                                              names=names))

        applied_from = [0]  # the event B must have applied: the rename's

        async def cached(table: str) -> bool:
            await read(table)  # asks for the table's load while it is not cached
            stats = await admin.CacheStats(admin_pb2.CacheStatsRequest())
            return stats.poller_position >= applied_from[0] and stats.partitions >= partitions

        async def rename() -> None:
            applied_from[0] = (await writer.AlterTable(pb.AlterTableRequest(
                db_name="db", table_name="big", table=bench_table("big_renamed", "db", external=True)))).event_id

        task = asyncio.create_task(pinger())
        try:
            fill = await _phase(lambda: read("big"), lambda: cached("big"), latencies)
            renamed = await _phase(rename, lambda: cached("big_renamed"), latencies)
        finally:
            stop.set()
            await task
        return [("fill (first read)", *fill), ("rename, then read", *renamed)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.profile_fill", description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    args = parser.parse_args(argv)
    rows = asyncio.run(run(args.partitions))
    print(f"| {args.partitions:,} partitions | cached again after s | pinger worst ms | pinger p99 ms |")
    print("| --- | ---: | ---: | ---: |")
    for label, seconds, worst, p99 in rows:
        print(f"| {label} | {seconds:.2f} | {worst:.0f} | {p99:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
