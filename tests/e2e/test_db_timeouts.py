"""store/db.py names its time-outs for what they are, on the real embedded PostgreSQL: a statement that
runs past the pool's command time-out, a pool whose connections all stay busy, and a database host that
does not answer a new connection."""

from __future__ import annotations

import asyncio
import logging

import asyncpg
import pytest

from store.db import Database, PoolSettings
from store.errors import CommandTimeout, Unavailable
from tests.pg_front import FailingOverFront


async def _sleep(conn: asyncpg.Connection, seconds: float) -> None:
    await conn.execute("SELECT pg_sleep($1)", seconds)


async def test_a_statement_past_the_command_timeout_is_reported_as_such(
        pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    """Answered as such, and logged once (it used to be logged nowhere: an operator saw only UNAVAILABLE
    counts while a DBA's lock held every write for a minute)."""
    caplog.set_level(logging.WARNING, logger="store.db")
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=1, command_timeout_s=0.2))
    try:
        for run in (db.transact, db.read):
            with pytest.raises(CommandTimeout, match=r"ran longer than the command time-out \(0\.2s\)") as err:
                await run(_sleep, 5.0)
            assert isinstance(err.value, Unavailable)  # answers UNAVAILABLE (see store/errors.py)
            assert "connection became free" not in str(err.value)
        assert await db.read(lambda conn: conn.fetchval("SELECT 1")) == 1  # the connection was not lost
    finally:
        await db.close()
    said = [r.getMessage() for r in caplog.records if r.name == "store.db"]
    assert len(said) == 1 and "ran longer than the command time-out (0.2s)" in said[0], said
    assert "waits on a lock held elsewhere" in said[0]


async def test_no_free_connection_is_not_a_command_timeout(pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="store.db")
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=1, acquire_timeout_s=0.1))
    try:
        holder = asyncio.create_task(db.read(_sleep, 1.0))
        await asyncio.sleep(0.2)  # the holder has the one connection
        with pytest.raises(Unavailable, match="no database connection became free in time") as err:
            await db.transact(_sleep, 0.0)
        assert not isinstance(err.value, CommandTimeout)
        await holder
    finally:
        await db.close()
    said = [r.getMessage() for r in caplog.records if r.name == "store.db"]
    assert len(said) == 1 and "no database connection became free in time" in said[0], said


async def test_a_database_host_that_does_not_answer_is_not_a_busy_pool(
        pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    """A new connection that the server never answers used to be reported as a pool whose every connection
    stayed busy, with the advice to raise datanucleus.connectionPool.maxPoolSize."""
    caplog.set_level(logging.WARNING, logger="store.db")
    front = FailingOverFront(pg_dsn)
    dsn = await front.start()
    db = await Database.connect(dsn, PoolSettings(min_size=1, max_size=2, acquire_timeout_s=0.5))
    try:
        assert await db.read(lambda conn: conn.fetchval("SELECT 1")) == 1
        front.partition()
        await db.expire_connections()  # as after a failover: the next call opens a new connection
        silent = r"no database connection could be opened within 0\.5s .* does not answer"
        with pytest.raises(Unavailable, match=silent) as err:
            await db.read(lambda conn: conn.fetchval("SELECT 1"))
        assert "became free" not in str(err.value) and "maxPoolSize" not in str(err.value)
    finally:
        db.terminate()
        await front.close()
    said = [r.getMessage() for r in caplog.records if r.name == "store.db"]
    assert len(said) == 1 and "the database host does not answer" in said[0], said
