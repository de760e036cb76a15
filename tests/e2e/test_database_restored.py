"""A database restored from a backup (or failed over to a copy without its last commits) under a running
gateway: the log it comes back with is rewritten from some event on, and new writes take those ids
again. The poller must not go on from its cursor as if nothing happened: the events it applied from the
lost history would stay in the cache, and the new ones at ids up to its cursor would never reach it, so
the cache would answer partitions PostgreSQL does not hold and miss ones it does, for good.

Real parts: the gateway's embedded PostgreSQL is stopped, its data directory copied (the backup), started,
written to, stopped, and started again on the copy."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from pathlib import Path
from typing import Awaitable, Callable, TypeVar

import grpc
import pytest

from gateway.app import Gateway
from gateway.config import load_settings
from protos.metastore.v1 import catalog_pb2 as pb
from tests.builders import table
from tests.conftest import GatewayClient, connect

C = grpc.StatusCode
T = TypeVar("T")
NAMES = ["p=1", "p=2", "p=3", "p=4", "p=5"]


async def _retrying(call: Callable[[], Awaitable[T]]) -> T:
    """`call`, again while it answers UNAVAILABLE (a pooled connection the restart ended), for 20 s at most."""
    started = time.monotonic()
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == C.UNAVAILABLE and time.monotonic() - started < 20, exc.details()
            await asyncio.sleep(0.05)


async def _add(client: GatewayClient, value: str) -> int:
    return (await _retrying(lambda: client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="d", table_name="t", partitions=[pb.Partition(values=[value])])))).event_id


async def _names(client: GatewayClient) -> list[str]:
    got = await _retrying(lambda: client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="d", table_name="t", names=NAMES)))
    return sorted(f"p={p.values[0]}" for p in got.partitions)


async def _applied(gw: Gateway, event_id: int) -> None:
    assert gw.poller is not None
    async with asyncio.timeout(20):
        while gw.poller.position < event_id:
            await asyncio.sleep(0.02)


async def _cached(gw: Gateway, client: GatewayClient) -> list[str]:
    """The partitions of d.t as the cache answers them, once it holds the table again."""
    assert gw.cache is not None
    async with asyncio.timeout(20):
        while True:
            hits = gw.cache.stats.hits
            names = await _names(client)
            if gw.cache.stats.hits > hits:
                return names
            await asyncio.sleep(0.05)


def _copy(source: Path, target: Path) -> None:
    """The data directory as it is, owners and modes too (PostgreSQL runs as its own user under root)."""
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run(["cp", "-a", str(source), str(target)], check=True, timeout=120)


@pytest.mark.parametrize("new_writes_pass_the_cursor", [False, True])
async def test_a_restored_database_makes_the_cache_reload_rather_than_keep_a_lost_history(
        tmp_path: Path, new_writes_pass_the_cursor: bool) -> None:
    """After the restore the cache answers what PostgreSQL holds: the lost partition gone, the new ones
    there, the lost database gone. Caught either way the poller meets the new log: its head below the
    cursor (the poller reads before new writes), or new writes past the cursor first (the poller paused
    meanwhile), where only the cursor's event, another than the one applied, tells."""
    tmp_path.chmod(0o755)
    gw = Gateway(load_settings(environ={}, overrides={
        "metastore.gateway.data.dir": str(tmp_path / "data"), "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "metastore.gateway.embedded.unsafe.fast": "true", "hive.metastore.warehouse.dir": str(tmp_path / "wh")}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        assert gw._pg is not None and gw.poller is not None and gw.cache is not None
        pgdata, backup = gw._pg.pgdata, tmp_path / "backup"
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="d")))
        await client.catalog.CreateTable(pb.CreateTableRequest(table=table("d", "t", keys=(("p", "string"),))))
        await _applied(gw, await _add(client, "1"))
        assert await _cached(gw, client) == ["p=1"]

        await asyncio.to_thread(gw._pg.stop)
        await asyncio.to_thread(_copy, pgdata, backup)
        await asyncio.to_thread(gw._pg.start)
        await _add(client, "2")
        lost_db = await _retrying(lambda: client.catalog.CreateDatabase(pb.CreateDatabaseRequest(
            database=pb.Database(name="lost"))))
        await _applied(gw, lost_db.event_id)
        assert await _cached(gw, client) == ["p=1", "p=2"]
        reloads = gw.poller.stats.reloads

        if new_writes_pass_the_cursor:
            gw.poller.pause()
        await asyncio.to_thread(gw._pg.stop)
        await asyncio.to_thread(_copy, backup, pgdata)
        await asyncio.to_thread(gw._pg.start)
        if not new_writes_pass_the_cursor:  # the poller reconnects and reads the new log before any write
            async with asyncio.timeout(20):
                while gw.poller.stats.reloads == reloads:
                    await asyncio.sleep(0.02)
        written = [await _add(client, value) for value in ("3", "4", "5")]
        assert written[0] <= lost_db.event_id < written[-1]  # the lost history's ids, taken again, and one more
        if new_writes_pass_the_cursor:
            gw.poller.resume()
        await _applied(gw, written[-1])

        assert await _cached(gw, client) == ["p=1", "p=3", "p=4", "p=5"]
        assert gw.poller.stats.reloads == reloads + 1
        with pytest.raises(grpc.aio.AioRpcError) as gone:
            await client.catalog.GetDatabase(pb.GetDatabaseRequest(name="lost"))
        assert gone.value.code() == C.NOT_FOUND
    finally:
        await client.channel.close()
        await gw.stop()
