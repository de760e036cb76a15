"""Readiness and the database's comings and goings, on real gateways:

* during an eager prewarm the ports are open, health is NOT_SERVING and reads are answered from the
  database; SERVING once it is done; a stop (SIGINT for the process) is honoured mid-prewarm. The
  prewarm is held back for as long as a test needs by a real lock on the partitions table.
* a database that goes away turns health NOT_SERVING and back, with one log line each way and no
  traceback.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import AsyncIterator
from urllib.parse import urlsplit

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.app import Gateway, startup_line
from gateway.config import load_settings
from loadtest import gateway_process
from protos.metastore.v1 import catalog_pb2 as pb
from tests.builders import table
from tests.conftest import GatewayProcess, PgCluster, connect, gateway_settings

SERVING, NOT_SERVING = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING


async def _health(address: str) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        return int((await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)).status)


async def _wait_health(address: str, status: int, timeout_s: float) -> None:
    async with asyncio.timeout(timeout_s):
        while await _health(address) != status:
            await asyncio.sleep(0.05)


async def _one_partitioned_table(dsn: str) -> None:
    gw = Gateway(gateway_settings(dsn))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", external=True)))
        await client.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", partitions=[pb.Partition(values=["2024-01-01", str(h)]) for h in range(3)]))
    finally:
        await client.channel.close()
        await gw.stop()


@pytest.fixture
async def prewarm_held(pg_dsn: str) -> AsyncIterator[tuple[str, asyncpg.Connection]]:
    """A database with one table of 3 partitions, and a transaction holding the partitions table
    exclusively: an eager prewarm waits on it until the test rolls it back."""
    await _one_partitioned_table(pg_dsn)
    blocker = await asyncpg.connect(pg_dsn)
    txn = blocker.transaction()
    await txn.start()
    await blocker.execute("LOCK TABLE partitions IN ACCESS EXCLUSIVE MODE")
    try:
        yield pg_dsn, blocker
    finally:
        if not blocker.is_closed():
            await txn.rollback()
            await blocker.close()


async def test_ports_open_at_once_and_health_waits_for_the_prewarm(
        prewarm_held: tuple[str, asyncpg.Connection], caplog: pytest.LogCaptureFixture,
        capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.INFO)
    dsn, blocker = prewarm_held
    gw = Gateway(gateway_settings(dsn, **{"metastore.gateway.cache.prewarm": "eager",
                                          "metastore.gateway.metrics.port": "0"}))
    await asyncio.wait_for(gw.start(wait_ready=False), 30)
    try:
        address = f"127.0.0.1:{gw.port}"
        await asyncio.sleep(0.5)  # the prewarm is under way, and waiting on the lock
        assert await _health(address) == NOT_SERVING
        assert "health NOT_SERVING until the cache is loaded" in startup_line(gw)
        client = await connect(address)
        reply = await client.catalog.GetDatabase(pb.GetDatabaseRequest(name="db"))  # the database answers
        assert reply.database.name == "db"
        await client.channel.close()
        await blocker.execute("ROLLBACK")
        await blocker.close()
        await _wait_health(address, SERVING, 20)
        assert gw.cache is not None and gw.cache.partition_count() == 3
    finally:
        await gw.stop()
    assert any(re.search(r"prewarm loaded 1 tables, 3 partitions", r.getMessage()) for r in caplog.records)
    assert "\r" not in capfd.readouterr().err  # progress goes to the log, one line per event


async def test_a_stop_during_the_prewarm_is_honoured_at_once(prewarm_held: tuple[str, asyncpg.Connection]) -> None:
    dsn, _blocker = prewarm_held
    gw = Gateway(gateway_settings(dsn, **{"metastore.gateway.cache.prewarm": "eager"}))
    await asyncio.wait_for(gw.start(wait_ready=False), 30)
    await asyncio.sleep(0.3)
    assert not gw.ready.is_set()
    started = time.monotonic()
    await asyncio.wait_for(gw.stop(), 15)
    assert time.monotonic() - started < 12


def test_sigint_during_the_prewarm_stops_the_process(prewarm_held: tuple[str, asyncpg.Connection]) -> None:
    dsn, _blocker = prewarm_held
    proc = GatewayProcess("--dsn", dsn, "--conf", "metastore.gateway.cache.prewarm=eager", "--log-level", "INFO")
    try:
        deadline = time.monotonic() + 60
        while "serving on" not in proc.output():
            assert proc.proc.poll() is None and time.monotonic() < deadline, proc.output()
            time.sleep(0.05)
        line = next(line for line in proc.output().splitlines() if "serving on" in line)
        assert "health NOT_SERVING until the cache is loaded" in line and "metrics off" in line
        address = re.search(r"serving on ([\d.]+:\d+)", line)
        assert address is not None
        assert asyncio.run(_health(address.group(1))) == NOT_SERVING
        proc.proc.send_signal(signal.SIGINT)
        assert proc.proc.wait(20) == 0
    finally:
        proc.stop()
    assert "metastore gateway stopped" in proc.output()
    assert "Traceback" not in proc.output()


async def test_a_database_outage_flips_health_with_one_line_each_way(caplog: pytest.LogCaptureFixture) -> None:
    root = Path(tempfile.mkdtemp(prefix="msgw-outage-"))  # not tmp_path: other pytest sessions prune it
    root.chmod(0o755)
    settings = load_settings(environ={}, overrides={
        "metastore.gateway.data.dir": str(root / "data"), "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "metastore.gateway.embedded.unsafe.fast": "true", "metastore.gateway.db.check.interval": "100ms",
        "metastore.gateway.shutdown.grace": "2s"})
    gw = Gateway(settings)
    await gw.start()
    address = f"127.0.0.1:{gw.port}"
    client = await connect(address)
    pg = gw.embedded
    assert pg is not None and gw.data_dir == (root / "data").resolve()
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="before")))
        caplog.clear()
        caplog.set_level(logging.DEBUG)
        await asyncio.to_thread(pg.pg_ctl_stop)
        await _wait_health(address, NOT_SERVING, 10)
        with pytest.raises(grpc.aio.AioRpcError) as down:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="during")))
        assert down.value.code() == grpc.StatusCode.UNAVAILABLE
        await asyncio.sleep(3)  # the loops, the poller and the probe keep failing meanwhile
        await asyncio.to_thread(pg.pg_ctl_start)
        await _wait_health(address, SERVING, 20)
        async with asyncio.timeout(20):  # the pool's dead connections are replaced as they are found
            while True:
                try:
                    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="after")))
                    break
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.UNAVAILABLE, exc
                    await asyncio.sleep(0.1)
        records = [r for r in caplog.records if r.levelno >= logging.INFO]
        messages = [r.getMessage() for r in records]
        assert sum("database unreachable" in m for m in messages) == 1, messages
        assert sum("database reachable again" in m for m in messages) == 1, messages
        assert [r.getMessage() for r in records if r.exc_info] == []  # no traceback
        assert [m for m in messages if m.startswith(("poller", "housekeeping"))] == [], messages  # the probe says it
        assert len(records) < 8, messages
    finally:
        await client.channel.close()
        await gw.stop()
        shutil.rmtree(root, ignore_errors=True)
    assert not (root / "data" / "pgdata" / "postmaster.pid").exists()


async def test_the_pools_failed_reconnects_stay_out_of_an_info_log(pg_cluster: PgCluster, pg_dsn: str) -> None:
    """asyncpg's pool's failed reconnects are demoted to DEBUG (the probe reports the outage in one line),
    but a gateway run at INFO printed them anyway, every 1, 2, 4 ... s, each as a 'DEBUG asyncpg.pool' line:
    the demotion came after its logger's level check, and logging.basicConfig's handler has no level."""
    database = urlsplit(pg_dsn).path.lstrip("/")
    proc = gateway_process.GatewayProcess(("--dsn", pg_dsn, "--conf", "metastore.gateway.db.check.interval=100ms"),
                                          log_level="INFO")
    admin = await asyncpg.connect(pg_cluster.dsn("postgres"))
    try:
        await asyncio.to_thread(proc.wait_serving)
        await admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS false")
        await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", database)
        await _wait_health(proc.address, NOT_SERVING, 10)
        await asyncio.sleep(4)  # the pool's floor is restored after 1, 2 ... s: it failed a few times meanwhile
        await admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")
        await _wait_health(proc.address, SERVING, 20)
    finally:
        await admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")
        await admin.close()
        assert proc.stop() == 0
    output = proc.output()
    assert "database unreachable" in output and "database reachable again" in output, output
    assert " DEBUG " not in output and "Failed to restore the pool" not in output, output
