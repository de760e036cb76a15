"""The server as an operator sees it: health, reflection, signals, schema versions."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from thriftpy2.transport import TTransportException

from gateway.app import Gateway, migrate_database
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from store.errors import SchemaMismatch
from tests.conftest import GatewayClient, GatewayProcess, connect, gateway_settings
from tests.thrift_client import ThriftClient


async def test_health_reports_serving_for_every_service(gateway: GatewayClient) -> None:
    stub = health_pb2_grpc.HealthStub(gateway.channel)
    for service in ("", "metastore.v1.Catalog", "metastore.v1.Events"):
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_services(gateway: GatewayClient) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(gateway.channel)
    call = stub.ServerReflectionInfo()
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    reply = await call.read()
    await call.done_writing()
    names = {s.name for s in reply.list_services_response.service}
    assert {"metastore.v1.Catalog", "metastore.v1.Events", "grpc.health.v1.Health"} <= names


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_embedded_default_serves_then_stops_cleanly_on_sigterm(tmp_path: Path, stop_signal: signal.Signals) -> None:
    """SIGHUP too (a closed terminal or SSH session): left at Python's default it killed the process on the
    spot, calls cut off and the embedded PostgreSQL left running with no gateway attached."""
    tmp_path.chmod(0o755)
    data_dir = tmp_path / "data"
    proc = GatewayProcess("--data-dir", str(data_dir), "--conf", "metastore.gateway.embedded.unsafe.fast=true")
    address = proc.wait_serving()

    async def check() -> None:
        client = await connect(address)
        reply = await health_pb2_grpc.HealthStub(client.channel).Check(health_pb2.HealthCheckRequest())
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="kept")))
        await client.channel.close()

    asyncio.run(check())
    proc.proc.send_signal(stop_signal)
    proc.proc.wait(30)
    assert proc.stop() == 0
    assert "metastore gateway stopped" in proc.output()
    assert not (data_dir / "pgdata" / "postmaster.pid").exists(), "the PostgreSQL it started is still running"


def test_a_gateway_started_under_nohup_keeps_ignoring_sighup(pg_dsn: str) -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # what nohup does; the child inherits it
    try:
        proc = GatewayProcess("--dsn", pg_dsn)
    finally:
        signal.signal(signal.SIGHUP, previous)
    try:
        proc.wait_serving()
        proc.proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        assert proc.proc.poll() is None, proc.output()
    finally:
        assert proc.stop() == 0
    assert "metastore gateway stopped" in proc.output()


async def test_a_schema_newer_than_the_code_is_refused(pg_dsn: str) -> None:
    conn = await asyncpg.connect(pg_dsn)
    try:
        await conn.execute("INSERT INTO schema_version (version, name) VALUES (999, 'from_the_future')")
    finally:
        await conn.close()
    with pytest.raises(SchemaMismatch, match="version 999 but this gateway knows versions up to"):
        await migrate_database(pg_dsn)
    gw = Gateway(gateway_settings(pg_dsn))
    with pytest.raises(SchemaMismatch):
        await gw.start()


async def test_migrations_are_idempotent(pg_dsn: str) -> None:
    assert await migrate_database(pg_dsn) == []


async def test_inflight_calls_finish_within_the_grace_period(pg_dsn: str) -> None:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    blocker = await asyncpg.connect(pg_dsn)
    blocking = blocker.transaction()
    await blocking.start()
    await blocker.execute("SELECT 1 FROM dbs WHERE name = 'db' FOR UPDATE")  # AlterDatabase will wait on this row
    inflight = asyncio.ensure_future(client.catalog.AlterDatabase(
        pb.AlterDatabaseRequest(name="db", database=pb.Database(description="finished during shutdown"))))
    await asyncio.sleep(0.3)
    assert not inflight.done()
    stopping = asyncio.ensure_future(gw.stop())
    await asyncio.sleep(0.3)
    with pytest.raises(grpc.aio.AioRpcError):  # new calls are refused once shutdown began
        await client.catalog.ListDatabases(pb.ListDatabasesRequest(), timeout=5)
    await blocking.rollback()
    await blocker.close()
    reply = await asyncio.wait_for(inflight, 5)
    assert reply.database.description == "finished during shutdown" and reply.event_id > 0
    await asyncio.wait_for(stopping, 10)
    await client.channel.close()


async def test_shutdown_with_a_thrift_call_in_flight(pg_dsn: str) -> None:
    """Once stop() begins, both protocols refuse new calls at once (gRPC's server is not left open
    while Thrift drains), the Thrift call under way is answered and its connection then closed (no
    second call on it), and stop() returns when that call ends, not after the grace."""
    gw = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.shutdown.grace": "6s"}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    thrift = ThriftClient(gw.thrift_port)
    blocker = await asyncpg.connect(pg_dsn)
    stopping: asyncio.Future[None] | None = None
    try:
        await thrift("create_database", hms.Database(name="db", description="", parameters={}))
        blocking = blocker.transaction()
        await blocking.start()
        await blocker.execute("SELECT 1 FROM dbs WHERE name = 'db' FOR UPDATE")  # alter_database waits on this row
        inflight = asyncio.ensure_future(thrift("alter_database", "db", hms.Database(
            name="db", description="finished during shutdown", parameters={})))
        await asyncio.sleep(0.5)
        assert not inflight.done()
        started = time.monotonic()
        stopping = asyncio.ensure_future(gw.stop())
        await asyncio.sleep(0.3)
        with pytest.raises(grpc.aio.AioRpcError):  # refused while the Thrift call is still under way
            await client.catalog.ListDatabases(pb.ListDatabasesRequest(), timeout=2)
        assert not inflight.done()
        await blocking.rollback()
        await asyncio.wait_for(inflight, 5)  # answered
        with pytest.raises((TTransportException, ConnectionError)):  # not served: the gateway closed the connection
            await asyncio.wait_for(thrift("get_all_databases"), 2)
        await asyncio.wait_for(stopping, 20)
        took = time.monotonic() - started
        assert took < 3.0, f"stop() took {took:.2f}s with a 6s grace, though its last call ended at once"
    finally:
        await blocker.close()  # a failed assertion must not leave the call waiting on the row for good
        thrift.close()
        await client.channel.close()
        await asyncio.wait_for(stopping if stopping is not None else gw.stop(), 20)
    conn = await asyncpg.connect(pg_dsn)
    try:
        assert await conn.fetchval("SELECT description FROM dbs WHERE name = 'db'") == "finished during shutdown"
    finally:
        await conn.close()
