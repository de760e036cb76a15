"""store/db.py translates asyncpg's connection-state errors to Unavailable (UNAVAILABLE: retry the
call), values PostgreSQL refuses to InvalidArgument, and an exhausted conflict retry to Unavailable,
never an untranslated error (which both protocols would answer as INTERNAL). Real PostgreSQL: the
statement errors are PostgreSQL's own; the client-side states are raised where asyncpg raises them,
inside the transaction's function."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Callable

import asyncpg
import pytest

from store import catalog
from store.db import Database, PoolSettings
from store.errors import InvalidArgument, StatementCancelled, Unavailable
from store.models import Database as HiveDatabase
from store.models import FieldSchema, Partition, Table


def _raising(exc: BaseException) -> Callable[[asyncpg.Connection], Any]:
    async def fn(conn: asyncpg.Connection) -> None:
        await conn.execute("SELECT 1")
        raise exc

    return fn


@pytest.mark.parametrize("exc", [
    asyncpg.InternalClientError("cannot switch to state 15; another operation (2) is in progress"),
    asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
    asyncpg.CrashShutdownError("terminating connection because of crash of another server process"),
    asyncpg.AdminShutdownError("terminating connection due to administrator command"),
], ids=lambda e: type(e).__name__)
async def test_connection_state_errors_are_unavailable(pg_dsn: str, exc: BaseException) -> None:
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=2))
    try:
        for run in (db.transact, db.read):
            with pytest.raises(Unavailable, match="retry the call"):
                await run(_raising(exc))
        assert await db.read(lambda conn: conn.fetchval("SELECT 1")) == 1  # the pool recovers
    finally:
        await db.close()


async def test_a_statement_cancelled_by_the_server_is_unavailable(
        pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    """A statement PostgreSQL cancels (a statement_timeout set on the server for the gateway's user or
    database, pg_cancel_backend) is UNAVAILABLE saying so, logged once, not a lost connection: the
    connection is sound, so the pool keeps its connections (it used to replace every one of them at
    each cancellation, and the answer said "lost the connection to PostgreSQL")."""
    async def cancelled(conn: asyncpg.Connection) -> None:
        await conn.execute("SET LOCAL statement_timeout = 50")
        await conn.execute("SELECT pg_sleep(5)")  # QueryCanceledError

    async def backend(conn: asyncpg.Connection) -> int:
        return int(await conn.fetchval("SELECT pg_backend_pid()"))

    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=1))
    caplog.set_level(logging.WARNING, logger="store.db")
    try:
        before = await db.read(backend)
        for run in (db.transact, db.read, db.transact):
            with pytest.raises(StatementCancelled, match="QueryCanceledError") as refused:
                await run(cancelled)
            assert "the database cancelled a statement" in str(refused.value)
            assert "lost the connection" not in str(refused.value)
        assert await db.read(backend) == before  # the same connection: nothing was expired
    finally:
        await db.close()
    said = [r for r in caplog.records if "cancelled a statement" in r.getMessage()]
    assert len(said) == 1 and said[0].exc_info is None, [r.getMessage() for r in caplog.records]


async def test_a_terminated_backend_is_unavailable_and_the_pool_recovers(pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn, PoolSettings(min_size=2, max_size=2))
    admin = await asyncpg.connect(pg_dsn)
    try:
        pid = await db.read(lambda conn: conn.fetchval("SELECT pg_backend_pid()"))
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
        outcomes = []
        for _ in range(3):
            try:
                outcomes.append(await db.read(lambda conn: conn.fetchval("SELECT 1")))
            except Unavailable:
                outcomes.append("unavailable")
        assert outcomes[-1] == 1 and set(outcomes) <= {1, "unavailable"}
    finally:
        await admin.close()
        await db.close()


async def test_values_postgresql_refuses_are_invalid_argument(pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=1))
    try:
        with pytest.raises(InvalidArgument, match="cannot store"):  # PostgreSQL: text holds no NUL
            await db.transact(lambda conn: conn.fetchval("SELECT $1::text", "a\x00b"))
        with pytest.raises(InvalidArgument, match="cannot store"):  # asyncpg: the value does not encode
            await db.read(lambda conn: conn.fetchval("SELECT $1::int4", 2**40))
    finally:
        await db.close()


async def test_an_exhausted_conflict_retry_is_unavailable(pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=1, max_retries=2))
    attempts = 0

    async def always_conflicting(conn: asyncpg.Connection) -> None:
        nonlocal attempts
        attempts += 1
        await conn.execute("SELECT 1")
        raise asyncpg.SerializationError("could not serialize access due to concurrent update")

    try:
        with pytest.raises(Unavailable, match="nothing was written, retry the call"):
            await db.transact(always_conflicting)
        assert attempts == 3
    finally:
        await db.close()


async def test_a_transaction_left_idle_is_ended_by_the_server_and_its_locks_freed(pg_dsn: str) -> None:
    """A gateway stopped mid-transaction (SIGSTOP) must not hold the row every writer locks: the
    server ends its idle transaction (PoolSettings.idle_in_transaction_timeout_s), the others go on,
    and the stopped call, once it runs again, answers UNAVAILABLE (retry) with nothing written."""
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=2, idle_in_transaction_timeout_s=0.3))
    other = await asyncpg.connect(pg_dsn)
    try:
        before = await other.fetchval("SELECT next FROM next_txn_id")

        async def stalls_holding_the_counter(conn: asyncpg.Connection) -> None:
            await conn.execute("UPDATE next_txn_id SET next = next + 1")
            await asyncio.sleep(3.0)  # the gateway stops here, the row locked
            await conn.execute("SELECT 1")

        stalled = asyncio.create_task(db.transact(stalls_holding_the_counter))
        await asyncio.sleep(0.1)
        async with asyncio.timeout(1.5):  # without the server's time-out this waits 3 s for the stalled call
            await other.execute("UPDATE next_txn_id SET next = next")
        with pytest.raises(Unavailable, match="retry the call"):
            await stalled
        assert await other.fetchval("SELECT next FROM next_txn_id") == before  # rolled back
        assert await db.read(lambda conn: conn.fetchval("SELECT 1")) == 1  # the pool recovers
    finally:
        await other.close()
        await db.close()


async def test_a_large_write_may_idle_longer_than_a_stopped_gateway(pg_dsn: str, tmp_path: Path) -> None:
    """An add of 9,000 partitions works on them between its round trips for longer than the idle limit
    ends a stopped gateway's transaction at (here 0.3 s): its transaction may idle longer by its size
    (catalog.allow_idle_for), so it is not ended for being large on a busy machine; the next
    transaction on the same connection has the limit as set again."""
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=1, idle_in_transaction_timeout_s=0.3))
    try:
        await db.transact(catalog.create_database, HiveDatabase(name="db"), str(tmp_path))
        await db.transact(catalog.create_table, Table(db_name="db", name="t",
                                                      partition_keys=(FieldSchema("ds", "string"),)))
        parts = [Partition(db_name="db", table_name="t", values=(str(i),)) for i in range(9000)]
        added = await db.transact(catalog.add_partitions, "db", "t", parts, if_not_exists=False)
        assert len(added.value) == 9000
        assert await db.read(lambda conn: conn.fetchval("SHOW idle_in_transaction_session_timeout")) == "300ms"
    finally:
        await db.close()
