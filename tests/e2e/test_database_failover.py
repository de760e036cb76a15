"""A network partition between a gateway and its database, then a failover: new connections reach a
database again, but the ones opened before stay silent for good (the old server is gone; nothing closes
them). Until the fix, each call that took one of those from the pool waited out the 60 s command time-out
(a write: 70 s), and the poller, whose LISTEN connection was one of them, heard no NOTIFY and applied
another gateway's write only when its 60 s timer's read timed out too (117 s). Now the connections opened
before the outage are dropped as the probe finds it, and the LISTEN once the database is back (gateway/app.py
`_database_changed`): both within seconds. The front is tests/pg_front.py's."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from gateway.app import Gateway
from gateway.config import load_settings
from protos.metastore.v1 import catalog_pb2 as pb
from tests.conftest import connect
from tests.pg_front import FailingOverFront

BOUND_S = 10.0  # after the failover, for the poller's apply and for a write


async def test_after_a_partition_and_a_failover_calls_and_the_poller_recover_within_seconds(
        pg_dsn: str, tmp_path: Path) -> None:
    front = FailingOverFront(pg_dsn)
    # sslmode=disable: asyncpg's TLS negotiation (sslmode=prefer, its default over TCP) leaves a future with
    # an exception nobody retrieves when a connect attempt through the partition times out, which this
    # suite's loop check would count as the test's.
    via_front = await front.start("sslmode=disable")

    def gateway(dsn: str) -> Gateway:
        return Gateway(load_settings(environ={}, overrides={
            "metastore.gateway.dsn": dsn, "metastore.gateway.port": 0, "hive.metastore.port": 0,
            "hive.metastore.warehouse.dir": str(tmp_path / "warehouse"), "metastore.gateway.db.check.interval": "0.5s",
            "metastore.gateway.shutdown.grace": "1s"}))

    cut_off, direct = gateway(via_front), gateway(pg_dsn)
    await cut_off.start()
    await direct.start()
    client, other = await connect(f"127.0.0.1:{cut_off.port}"), await connect(f"127.0.0.1:{direct.port}")
    try:
        assert cut_off.poller is not None and cut_off.probe is not None
        written = await other.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="before")))
        async with asyncio.timeout(BOUND_S):
            while cut_off.poller.position < written.event_id:
                await asyncio.sleep(0.02)
        front.partition()
        async with asyncio.timeout(30):  # its probe's query times out (5 s)
            while cut_off.probe.up:
                await asyncio.sleep(0.05)
        front.fail_over()
        failed_over = time.monotonic()
        written = await other.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="after")))
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="own")),
                                            timeout=BOUND_S)
        async with asyncio.timeout(BOUND_S - (time.monotonic() - failed_over)):
            while cut_off.poller.position < written.event_id:
                await asyncio.sleep(0.02)
        assert cut_off.cache is not None and {"after", "own"} <= set(cut_off.cache.databases)
    finally:
        await client.channel.close()
        await other.channel.close()
        await direct.stop()
        await cut_off.stop()
        await front.close()
