"""The housekeeping work itself, one function per job, each inside the caller's transaction.

Loops and leader election live in poller/housekeeping.py; these functions only need a
connection and return what they did (with the events to append, as an `Outcome` for
`Database.transact`), so tests can run them directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from store import txns
from store.compaction import COMPACTION_TXN_TYPE
from store.events import EventType, NewEvent, Outcome
from store.sql import housekeeping as sql
from store.sql import txns as txn_sql
from store.sql import write_notifications as write_notifications_sql

TIMED_OUT_BATCH = 50000  # Hive's TIMED_OUT_TXN_ABORT_BATCH_SIZE
FORGET_BATCH = 50000  # aborted txns forgotten per round at most
# Txn types whose output directories are named by the txn id (base_N_vT, delta_..._vT), not by a
# write id: Hive's TxnType.COMPACTION and REBALANCE_COMPACTION. Their aborted txns must stay listed.
TXN_ID_NAMED_OUTPUT_TYPES = (COMPACTION_TXN_TYPE, 6)


@dataclass(frozen=True, slots=True)
class CleanResult:
    low_water_mark: int
    rows_deleted_tables: int
    committed_txns_deleted: int


async def reap_timed_out_txns(conn: asyncpg.Connection, timeout_s: float) -> Outcome[list[int]]:
    """Abort open txns without a heartbeat for `timeout_s`; their versions are discarded and
    their locks released. Rows locked by a concurrent commit or heartbeat are skipped."""
    ids = [r["txn_id"] for r in await conn.fetch(sql.TIMED_OUT_TXNS, timeout_s, TIMED_OUT_BATCH)]
    if not ids:
        return Outcome([])
    aborted = await txns.abort_txns(conn, ids, reason=f"timed out: no heartbeat for {timeout_s:g}s (hive.txn.timeout)")
    return Outcome(ids, aborted.events)


@dataclass(frozen=True, slots=True)
class ForgetResult:
    forgotten: int
    highest: int  # the highest txn id forgotten, 0 for none


async def forget_empty_aborted_txns(conn: asyncpg.Connection, retention_s: float) -> ForgetResult:
    """Delete aborted txns that wrote nothing a reader could find, aborted more than `retention_s`
    ago (Hive's cleanEmptyAbortedAndCommittedTxns for aborted txns without TXN_COMPONENTS).

    Such a txn holds no write id (data directories and metadata versions are named by write ids;
    its write ids would keep its row) and is not a compaction txn (whose base_N_vT is named by its
    txn id and read only while the txn counts as aborted). So no directory or version depends on
    it, and a snapshot may take it for committed once its row is gone. Until `retention_s` (the
    txn time-out) has passed since the abort, a client that asks about it is answered "aborted";
    after that, a txn id without a row at or below the highest one forgotten can no longer be told
    committed from aborted (`txns._forgotten`)."""
    row = await conn.fetchrow(sql.FORGET_EMPTY_ABORTED_TXNS, list(TXN_ID_NAMED_OUTPUT_TYPES), retention_s,
                              FORGET_BATCH)
    if not row["n"]:
        return ForgetResult(0, 0)
    await conn.execute(sql.RAISE_ABORTED_FORGOTTEN_UPTO, row["highest"])
    return ForgetResult(int(row["n"]), int(row["highest"]))


async def clean_txn_to_write_id(conn: asyncpg.Connection) -> CleanResult:
    """HIVE-18747: delete the TXN_TO_WRITE_ID rows and the txn rows of committed txns below
    min(next, min MHL); every such txn is committed in every snapshot that can still be used. The
    per-table maximum deleted write id becomes that table's floor for write-id high-water marks.
    Aborted txns below the mark keep their rows (their write ids stay listed as aborted), so,
    unlike Hive's mark, this one is not held back by the oldest aborted txn."""
    previous = int(await conn.fetchval(txn_sql.T2W_CLEANED_BELOW))
    lwm = int(await conn.fetchval(sql.T2W_LOW_WATER_MARK))
    rows = await conn.fetch(sql.DELETE_T2W_BELOW, previous, lwm)
    if rows:
        await conn.execute(sql.RAISE_CLEANED_HWM, [r["table_id"] for r in rows], [r["max_write_id"] for r in rows])
    await conn.execute(sql.RAISE_T2W_CLEANED_BELOW, lwm)
    status = await conn.execute(sql.DELETE_COMMITTED_TXNS_BELOW, lwm)
    return CleanResult(lwm, len(rows), int(status.split()[-1]))


async def gc_versions(conn: asyncpg.Connection) -> Outcome[int]:
    """Delete table and partition versions no open snapshot can see; raise each table's
    gc_watermark so an older snapshot gets 'snapshot too old' instead of a wrong answer. Returns
    the number deleted and one VERSIONS_GC event per table, so every cache prunes the same."""
    lwm = int(await conn.fetchval(sql.VERSION_LOW_WATER_MARK))
    deleted = 0
    watermarks: dict[int, int] = {}
    for query in (sql.GC_PARTITION_VERSIONS, sql.GC_TABLE_VERSIONS):
        rows = await conn.fetch(query, lwm)
        if rows:
            await conn.execute(sql.RAISE_GC_WATERMARK, [r["table_id"] for r in rows], [r["w"] for r in rows])
            deleted += sum(r["n"] for r in rows)
            for r in rows:
                watermarks[r["table_id"]] = max(watermarks.get(r["table_id"], 0), r["w"])
    events = tuple(NewEvent(EventType.VERSIONS_GC, table_id=table_id, message={"table_id": table_id, "gc_watermark": w})
                   for table_id, w in sorted(watermarks.items()))
    return Outcome(deleted, events)


async def trim_event_log(conn: asyncpg.Connection, ttl_s: float) -> int:
    """Delete the notification log's events older than `ttl_s`, and the write notifications
    (store/write_notifications.py) as old, as Hive's DbNotificationListener cleaner does; the events
    deleted."""
    await conn.execute(write_notifications_sql.DELETE_OLD, ttl_s)
    status = await conn.execute(sql.DELETE_OLD_EVENTS, ttl_s)
    return int(status.split()[-1])
