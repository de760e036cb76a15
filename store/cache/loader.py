"""Reading tables from PostgreSQL into cache entries, at a recorded log position.

`load_table` and `load_all` run in one REPEATABLE READ snapshot: the rows, the committed write
ids and `current_event_id` are of the same instant, so the entry reflects exactly the events up
to that id and catch-up resumes right after it (no gap, no double apply).

A fill runs on the event loop that serves every call, and encoding a partition for the cache
takes tens of microseconds: a table of 100,000 partitions is seconds of work. So the loader reads
partitions through a cursor, `CHUNK` at a time, and builds the live view chunk by chunk, giving the
loop back between chunks: other calls wait milliseconds, not the whole fill. Fewer rows alive at
once also keeps the garbage collector's passes short.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Callable

import asyncpg

from store import codec, events, txns
from store.cache.entry import (Codec, CommittedWriteIds, LiveView, TableEntry, Version, build_entry, partition_version,
                               refresh_live, with_changes)
from store.models import Database
from store.sql import cache as sql
from store.sql import txns as txn_sql
from hive.writeids import ValidTxnList

CHUNK = 500  # partitions per step of a fill between yields to the event loop (about 10 ms of work)


async def load_table_by_id(
    conn: asyncpg.Connection, table_id: int, encoders: Codec, txn_list: ValidTxnList, position: int,
) -> TableEntry | None:
    rows = await conn.fetch(sql.TABLE_VERSIONS, table_id)
    if not rows:
        return None
    tables = [(Version(r["created_wid"], r["dropped_wid"], b""), codec.table_from_row(r)) for r in rows]
    tables = [(Version(v.created_wid, v.dropped_wid, encoders.table(t)), t) for v, t in tables]
    latest = next((t for v, t in tables if v.dropped_wid is None), tables[0][1])
    parts: dict[str, tuple[Version, ...]] = {}
    async for r in conn.cursor(sql.PARTITION_VERSIONS, table_id, prefetch=CHUNK):  # a round trip per chunk
        p = codec.partition_from_row(latest.db_name, latest.name, r)
        parts[r["part_name"]] = parts.get(r["part_name"], ()) + (
            partition_version(encoders, r["created_wid"], r["dropped_wid"], p),)
    committed = CommittedWriteIds()
    writers: dict[int, int] = {}
    gc_watermark = 0
    if latest.is_acid:
        committed = CommittedWriteIds.from_list(await txns.table_write_ids(conn, latest.full_name, table_id, txn_list))
        writers = {r["txn_id"]: r["write_id"] for r in await conn.fetch(sql.OPEN_WRITERS, table_id)}
        state = await conn.fetchrow(txn_sql.TABLE_WRITE_ID_STATE, table_id)
        gc_watermark = state["gc_watermark"] if state else 0
    entry = build_entry(tables, parts, committed=committed, writers=writers, gc_watermark=gc_watermark,
                        applied_event_id=position, live=LiveView())  # its live view is built next, in steps
    live, names = entry.live, iter(entry.partitions)
    while chunk := list(itertools.islice(names, CHUNK * 4)):  # a live view step is cheaper than an encoding
        live = refresh_live(live, entry.partitions, entry.view, touched=chunk)
        await asyncio.sleep(0)
    return with_changes(entry, live=live)


async def load_table(
    conn: asyncpg.Connection, db_name: str, table_name: str, encoders: Codec,
) -> tuple[int, TableEntry | None]:
    """(log position, entry or None when the table does not exist) in the caller's snapshot."""
    position = await events.current_event_id(conn)
    table_id = await conn.fetchval(sql.LATEST_TABLE_ID, db_name, table_name)
    if table_id is None:
        return position, None
    txn_list = await txns.get_open_txns(conn)
    return position, await load_table_by_id(conn, table_id, encoders, txn_list, position)


async def load_databases(conn: asyncpg.Connection) -> tuple[int, list[Database]]:
    """(log position, every database) in the caller's snapshot: a lazy start caches the databases at
    once (they are few and small), and tables as reads ask for them."""
    position = await events.current_event_id(conn)
    return position, [codec.database_from_row(r) for r in await conn.fetch(sql.ALL_DATABASES)]


async def load_all(
    conn: asyncpg.Connection, encoders: Codec, progress: Callable[[int, int, TableEntry | None], None] | None = None,
) -> tuple[int, list[TableEntry], list[Database]]:
    """Every table and database, for an eager prewarm; `progress(done, total, entry)` after each table."""
    position = await events.current_event_id(conn)
    txn_list = await txns.get_open_txns(conn)
    ids = [r["table_id"] for r in await conn.fetch(sql.ALL_TABLE_IDS)]
    entries = []
    for i, table_id in enumerate(ids, 1):
        entry = await load_table_by_id(conn, table_id, encoders, txn_list, position)
        if entry is not None:
            entries.append(entry)
        if progress is not None:
            progress(i, len(ids), entry)
    databases = [codec.database_from_row(r) for r in await conn.fetch(sql.ALL_DATABASES)]
    return position, entries, databases
