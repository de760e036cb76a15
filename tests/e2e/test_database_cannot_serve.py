"""A database that answers but cannot do the work (read-only: a standby or default_transaction_read_only;
out of disk space, memory or connections) is UNAVAILABLE naming the cause, logged once rather than a
traceback per call (store/db.py), and at start-up one line (gateway/cli_startup.py)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import asyncpg
import grpc
import pytest

from protos.metastore.v1 import catalog_pb2 as pb
from store.db import Database, PoolSettings
from store.errors import DatabaseCannotServe
from tests.conftest import PgCluster, connect, running_gateway
from tests.e2e.test_startup import cli, our_lines


@asynccontextmanager
async def read_only(pg_cluster: PgCluster, dsn: str) -> AsyncIterator[None]:
    """New sessions of `dsn`'s database are read-only (as on a standby) until the block ends."""
    database = urlsplit(dsn).path.lstrip("/")
    admin = await asyncpg.connect(pg_cluster.dsn("postgres"))
    try:
        await admin.execute(f"ALTER DATABASE {database} SET default_transaction_read_only = on")
        yield
    finally:
        await admin.execute(f"ALTER DATABASE {database} RESET default_transaction_read_only")
        await admin.close()


async def test_a_read_only_database_answers_unavailable_naming_it(
        pg_cluster: PgCluster, pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    async with running_gateway(pg_dsn) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            async with read_only(pg_cluster, pg_dsn):
                await gw.database.expire_connections()  # the pool's next sessions take the setting
                caplog.set_level(logging.WARNING)
                for name in ("sales", "web"):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=name)))
                    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value.details()
                    assert "the database is read-only (a standby, or default_transaction_read_only)" in (
                        refused.value.details() or "")
                    # Reads still work: they run in read-only transactions anyway.
                    await client.catalog.ListDatabases(pb.ListDatabasesRequest())
            await gw.database.expire_connections()
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="sales")))
        finally:
            await client.channel.close()
    said = [r for r in caplog.records if "read-only" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING and said[0].exc_info is None
    assert not [r for r in caplog.records if r.exc_info]  # no traceback


async def test_a_gateway_starting_on_a_read_only_database_says_so_in_one_line(
        pg_cluster: PgCluster, pg_dsn: str) -> None:
    async with read_only(pg_cluster, pg_dsn):
        started = cli("serve", "--dsn", pg_dsn, "--port", "0", "--conf", "hive.metastore.port=0")
    assert started.returncode == 1 and "Traceback" not in started.stderr, started.stderr
    [line] = our_lines(started.stderr)
    assert "the database is read-only (a standby, or default_transaction_read_only)" in line


@pytest.mark.parametrize("exc, cause", [
    (asyncpg.DiskFullError("could not extend file: No space left on device"), "out of disk space"),
    (asyncpg.OutOfMemoryError("out of memory"), "out of memory"),
    (asyncpg.TooManyConnectionsError("sorry, too many clients already"), "out of connections"),
    (asyncpg.ReadOnlySQLTransactionError("cannot execute INSERT in a read-only transaction"), "read-only"),
], ids=lambda e: type(e).__name__ if isinstance(e, Exception) else "")
async def test_a_database_out_of_resources_is_unavailable(pg_dsn: str, exc: BaseException, cause: str) -> None:
    async def failing(conn: asyncpg.Connection) -> None:
        await conn.execute("SELECT 1")
        raise exc

    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=1))
    try:
        for run in (db.transact, db.run, db.read):
            with pytest.raises(DatabaseCannotServe, match=f"the database is {cause}.*retry once it is fixed"):
                await run(failing)
        assert await db.read(lambda conn: conn.fetchval("SELECT 1")) == 1
    finally:
        await db.close()


@pytest.mark.parametrize("refusal, cause", [
    ("ALTER ROLE {role} PASSWORD 'rotated'", "the database refuses the gateway's credentials for new connections"),
    ("ALTER DATABASE {database} ALLOW_CONNECTIONS false", "the database refuses the gateway's new connections"),
], ids=["password-rotated", "connections-not-allowed"])
async def test_a_database_refusing_new_connections_while_serving_is_unavailable(
        pg_cluster: PgCluster, caplog: pytest.LogCaptureFixture, refusal: str, cause: str) -> None:
    """The gateway's user's password rotated (or its login revoked, pg_hba.conf), or the database closed to
    connections, then its sessions ended (a restart, a DBA): the pool's new connections are refused. Every
    call answered INTERNAL with a traceback per call, and asyncpg's pool and the housekeeping loops logged
    tracebacks too; now UNAVAILABLE naming the cause, logged once, and calls work again once it is undone."""
    role = database = f"refused{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(pg_cluster.dsn("postgres"))
    await admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'rolepw'")
    await admin.execute(f"CREATE DATABASE {database} OWNER {role}")
    dsn = f"postgresql://{role}:rolepw@/{database}?{urlsplit(pg_cluster.dsn(database)).query}"
    try:
        async with running_gateway(dsn) as gw:
            client = await connect(f"127.0.0.1:{gw.port}")
            try:
                caplog.set_level(logging.WARNING)
                await admin.execute(refusal.format(role=role, database=database))
                await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role)
                answers = []
                for _ in range(10):  # a pooled connection the server ended may first answer "lost the connection"
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await client.catalog.ListDatabases(pb.ListDatabasesRequest())
                    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value.details()
                    answers.append(refused.value.details() or "")
                    await asyncio.sleep(0.05)
                assert all(cause in a or "lost the connection" in a for a in answers), answers
                assert all(cause in a for a in answers[-3:]), answers
                await admin.execute(f"ALTER ROLE {role} PASSWORD 'rolepw'")
                await admin.execute(f"ALTER DATABASE {database} ALLOW_CONNECTIONS true")
                await client.catalog.ListDatabases(pb.ListDatabasesRequest())
            finally:
                await client.channel.close()
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        await admin.execute(f"DROP ROLE IF EXISTS {role}")
        await admin.close()
    said = [r for r in caplog.records if r.name == "store.db" and cause in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING, [r.getMessage() for r in caplog.records]
    assert not [r.getMessage() for r in caplog.records if r.exc_info]  # no traceback
