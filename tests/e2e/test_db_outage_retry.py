"""A call that meets the database away waits for it and is tried again (store/db.py), as Hive's
RetryingHMSHandler retries a call on a JDO connection failure (hive.hmshandler.retry.attempts and
.interval): a PostgreSQL restart or a short failover is a slower call, not a failed Spark query. Only
what cannot have been committed is retried: a call that never had its connection, a read, a
transaction whose COMMIT was not sent. A write whose COMMIT (or one autocommitted statement) was sent
when the connection was lost answers UNAVAILABLE saying it may have been committed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncpg
import grpc
import pytest
from prometheus_client import generate_latest

from gateway.app import Gateway
from gateway.config import load_settings
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from store.db import Database, PoolSettings
from store.errors import Unavailable
from tests.conftest import connect
from tests.thrift_client import ThriftClient

RETRYING = PoolSettings(min_size=1, max_size=2, outage_retries=3, outage_retry_interval_s=0.05)
LOST = asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")


async def _rows(dsn: str) -> list[int]:
    conn = await asyncpg.connect(dsn)
    try:
        return [r["n"] for r in await conn.fetch("SELECT n FROM outage_probe ORDER BY n")]
    finally:
        await conn.close()


@pytest.fixture
async def probe_table(pg_dsn: str) -> str:
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.execute("CREATE TABLE outage_probe (n int)")
    finally:
        await conn.close()
    return pg_dsn


async def test_a_transaction_that_lost_its_connection_before_its_commit_is_tried_again(probe_table: str) -> None:
    db = await Database.connect(probe_table, RETRYING)
    calls = 0

    async def insert_then_lose_the_first_time(conn: asyncpg.Connection) -> int:
        nonlocal calls
        calls += 1
        await conn.execute("INSERT INTO outage_probe VALUES ($1)", calls)
        if calls == 1:
            raise LOST  # as asyncpg raises it when the server went away mid-transaction
        return calls

    try:
        assert await db.transact(insert_then_lose_the_first_time) == 2
        assert calls == 2 and db.stats()["outage_retries"] == 1
    finally:
        await db.close()
    assert await _rows(probe_table) == [2]  # the first attempt rolled back: written once


async def test_a_read_that_lost_its_connection_is_tried_again(pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn, RETRYING)
    calls = 0

    async def lose_twice(conn: asyncpg.Connection) -> int:
        nonlocal calls
        calls += 1
        if calls <= 2:
            raise LOST
        return int(await conn.fetchval("SELECT 7"))

    try:
        assert await db.read(lose_twice) == 7 and calls == 3
    finally:
        await db.close()


async def test_the_retries_are_bounded_and_the_background_view_has_none(pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn, RETRYING)
    calls = 0

    async def always_lost(conn: asyncpg.Connection) -> None:
        nonlocal calls
        calls += 1
        raise LOST

    try:
        for call in (db.read, db.transact):
            calls = 0
            with pytest.raises(Unavailable, match="lost the connection to PostgreSQL .*; retry the call"):
                await call(always_lost)
            assert calls == 1 + RETRYING.outage_retries
        calls = 0
        with pytest.raises(Unavailable, match="retry the call"):
            await db.without_outage_retries().read(always_lost)  # the poller's: its own loop waits
        assert calls == 1
        assert db.stats()["outage_retries"] == 2 * RETRYING.outage_retries  # the view counts into the same
    finally:
        await db.close()


async def test_a_write_whose_commit_was_sent_is_not_tried_again(probe_table: str) -> None:
    """The connection dies between the statements and the COMMIT (pg_terminate_backend, as a crash or a
    failover would): the COMMIT cannot be answered, so the call cannot know whether it was committed
    and must not do the write a second time. Here it was not (the server rolled it back)."""
    db = await Database.connect(probe_table, RETRYING)
    admin = await asyncpg.connect(probe_table)
    calls = 0

    async def insert_then_die(conn: asyncpg.Connection) -> None:
        nonlocal calls
        calls += 1
        await conn.execute("INSERT INTO outage_probe VALUES (1)")
        await admin.execute("SELECT pg_terminate_backend($1)", conn.get_server_pid())
        await asyncio.sleep(0.2)  # the FATAL and the EOF reach the client before its COMMIT goes out, or after

    async def autocommitted_then_die(conn: asyncpg.Connection) -> None:
        nonlocal calls
        calls += 1
        await admin.execute("SELECT pg_terminate_backend($1)", conn.get_server_pid())
        await asyncio.sleep(0.2)
        await conn.execute("INSERT INTO outage_probe VALUES (2)")

    try:
        for call, fn in ((db.transact, insert_then_die), (db.run, autocommitted_then_die)):
            calls = 0
            with pytest.raises(Unavailable, match="after the write was sent .*: it may have been committed"):
                await call(fn)
            assert calls == 1, call
        assert await db.read(lambda conn: conn.fetchval("SELECT 1")) == 1  # the pool recovers
    finally:
        await admin.close()
        await db.close()
    assert await _rows(probe_table) == []


async def test_calls_on_both_protocols_wait_out_a_database_restart(tmp_path: Path) -> None:
    """The gateway's embedded PostgreSQL stopped for 1.5 s under reads and writes over gRPC and Thrift
    (the cache off: every read goes to the database): each call is answered once the database is back,
    none fails, each write is done once, and the metric counts the waits. Before, each answered
    UNAVAILABLE (MetaException over Thrift, which Hive's and Spark's clients do not retry)."""
    tmp_path.chmod(0o755)
    gw = Gateway(load_settings(environ={}, overrides={
        "metastore.gateway.data.dir": str(tmp_path / "data"), "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "metastore.gateway.embedded.unsafe.fast": "true", "metastore.gateway.cache.enabled": "false",
        "hive.metastore.warehouse.dir": str(tmp_path / "warehouse"),
        "hive.hmshandler.retry.interval": "1s"}))  # 10 tries, waits 50 ms doubling to 1 s: about 6.5 s
    await gw.start()
    client, thrift, thrift_reader = await connect(f"127.0.0.1:{gw.port}"), ThriftClient(gw.thrift_port), \
        ThriftClient(gw.thrift_port)
    try:
        assert gw._pg is not None
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="before")))
        await asyncio.to_thread(gw._pg.stop)
        stopped = time.monotonic()
        calls = [
            asyncio.ensure_future(client.catalog.CreateDatabase(pb.CreateDatabaseRequest(
                database=pb.Database(name="grpc_during")), timeout=30)),
            asyncio.ensure_future(client.catalog.GetDatabase(pb.GetDatabaseRequest(name="before"), timeout=30)),
            asyncio.create_task(thrift("create_database", hms.Database(name="thrift_during", description="",
                                                                       parameters={}))),
            asyncio.create_task(thrift_reader("get_database", "before")),
        ]
        await asyncio.sleep(1.5)
        assert not any(c.done() for c in calls), [c.result() for c in calls if c.done()]  # each waits
        await asyncio.to_thread(gw._pg.start)
        created, read, _, thrift_read = await asyncio.wait_for(asyncio.gather(*calls), 15)
        assert time.monotonic() - stopped >= 1.5
        assert created.event_id > 0 and read.database.name == "before" and thrift_read.name == "before"
        names = await thrift_reader("get_all_databases")
        assert {"before", "grpc_during", "thrift_during"} <= set(names), names
        retries = gw.ops_stats()["db_outage_retries"]  # one or more per call that waited
        assert isinstance(retries, int) and retries >= 4, retries
        assert "metastore_db_outage_retries_total" in generate_latest(gw.metrics.registry).decode()
        with pytest.raises(grpc.aio.AioRpcError) as again:  # done once: a second create finds it
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="grpc_during")))
        assert again.value.code() == grpc.StatusCode.ALREADY_EXISTS
    finally:
        thrift.close()
        thrift_reader.close()
        await client.channel.close()
        await gw.stop()
