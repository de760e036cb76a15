"""The gateway's session settings reach PostgreSQL as a statement on each new connection, not as startup
parameters: a connection pooler in between, PgBouncer among them, refuses to connect a client whose
startup packet carries a parameter it does not know ("unsupported startup parameter:
idle_in_transaction_session_timeout"), so the gateway could not start behind one even in session mode.
PostgreSQL tells the two apart (pg_settings.source: "client" for a startup parameter, "session" for a SET).
Behind a pooler in transaction mode, the gateway's start-up says so in one line (tests/e2e/test_pgbouncer.py
runs both behind a real PgBouncer)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from gateway.app import Gateway
from gateway.cli_startup import explain
from gateway.config import load_settings
from store.db import Database, PoolSettings
from store.errors import SessionsNotKept

SOURCE = "SELECT setting, source FROM pg_settings WHERE name = $1"


async def test_the_pools_session_settings_are_set_not_sent_at_startup(pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn, PoolSettings(min_size=1, max_size=2, idle_in_transaction_timeout_s=3))
    try:
        row = await db.read(lambda conn: conn.fetchrow(SOURCE, "idle_in_transaction_session_timeout"))
        assert (row["setting"], row["source"]) == ("3000", "session")
        await db.expire_connections()  # a replaced connection has them too
        row = await db.read(lambda conn: conn.fetchrow(SOURCE, "idle_in_transaction_session_timeout"))
        assert (row["setting"], row["source"]) == ("3000", "session")
    finally:
        await db.close()


async def test_the_pollers_log_reader_settings_are_set_not_sent_at_startup(pg_dsn: str, tmp_path: Path) -> None:
    gw = Gateway(load_settings(environ={}, overrides={
        "metastore.gateway.dsn": pg_dsn, "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "hive.metastore.warehouse.dir": str(tmp_path / "warehouse")}))
    await gw.start()
    try:
        assert gw.poller is not None
        async with asyncio.timeout(10):  # the poller connects once it runs, after start() returned
            while (listener := gw.poller._listener) is None:
                await asyncio.sleep(0.02)
        row = await listener.fetchrow(SOURCE, "plan_cache_mode")
        assert (row["setting"], row["source"]) == ("force_generic_plan", "session")
    finally:
        await gw.stop()


def test_a_pooler_in_transaction_mode_is_named_at_start_up() -> None:
    """What asyncpg raises when a transaction-mode pooler hands its prepared statements' session to another
    client (seen with PgBouncer 1.18, pool_mode = transaction): one line saying what to change."""
    settings = load_settings(environ={}, overrides={"metastore.gateway.dsn": "postgresql://u@pooler:6432/meta"})
    for exc in (asyncpg.DuplicatePreparedStatementError('prepared statement "__asyncpg_stmt_1__" already exists\n'
                                                        "HINT: NOTE: pgbouncer with pool_mode set to ..."),
                asyncpg.InvalidSQLStatementNameError('prepared statement "__asyncpg_stmt_a__" does not exist'),
                SessionsNotKept("a connection's statements ran on different server processes")):
        line = explain(exc, settings)
        assert line is not None and "\n" not in line and "HINT" not in line, line
        assert "the database at pooler:6432/meta" in line and "pool_mode = session" in line, line
