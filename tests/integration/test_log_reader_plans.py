"""The poller's connection reads the log with the read's generic plan (store/events.py
LOG_READER_SETTINGS): PostgreSQL does not plan each read again for its position, which it did on
every read once the log had grown (87 µs each under bench_txns' write load)."""

from __future__ import annotations

import asyncpg

from store import events
from store.sql import events as sql


async def _read_plans(dsn: str, settings: dict[str, str]) -> tuple[int, int]:
    """Generic and custom plans of the poller's read after ten reads on a connection with `settings`."""
    conn = await asyncpg.connect(dsn, server_settings=settings)
    try:
        for _ in range(10):
            await events.next_events_and_head(conn, 0, 100)
        row = await conn.fetchrow("SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                                  "WHERE statement = $1", sql.NEXT_EVENTS_AND_HEAD)
    finally:
        await conn.close()
    assert row is not None, "the read is not a prepared statement of its connection"
    return row["generic_plans"], row["custom_plans"]


async def test_the_poller_reads_the_log_with_its_generic_plan(pg_dsn: str) -> None:
    assert await _read_plans(pg_dsn, events.LOG_READER_SETTINGS) == (10, 0)


async def test_without_the_setting_postgresql_plans_reads_for_their_values(pg_dsn: str) -> None:
    """The premise: left to itself, PostgreSQL plans the first reads (at least five) for their values."""
    generic, custom = await _read_plans(pg_dsn, {})
    assert custom >= 5 and generic + custom == 10
