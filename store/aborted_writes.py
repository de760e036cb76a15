"""Forgetting aborted write ids once no directory holds them (Hive 4's abort clean-up).

Design note. An aborted txn's write id stays listed as aborted in every ValidWriteIdList of its
table while its row in txn_to_write_id lasts, so readers skip whatever it wrote. Without an end,
every failed job would lengthen every snapshot of its table for good (Hive 2 and 3 leave them to
compaction; Hive 4 cleans them in the Cleaner). The Cleaner (poller/compactor.py) picks the tables
due (`due`), deletes the directories that hold only their aborted write ids, and then `forget`s the
ids no directory holds any more: their rows go, and an id without a row counts as committed, which
is harmless once nothing carries it (metadata versions were discarded at the abort, data here).
An id a directory holds beside committed ones (a streaming writer's delta spanning several txns)
stays listed until a compaction has replaced that directory. The txn, left without write ids, is
then forgotten by housekeeping as the txns that wrote nothing are (store/housekeeping.py).

A compaction txn holds no write id: its output directories carry its txn id (`_vT`), so while one
may exist an aborted compaction txn must stay listed in every ValidTxnList. compaction_txns names
the table each one compacted (store/schema/0018); once its directories are deleted, it is forgotten
here (`forget_compaction_txns`).

Caches hold their own committed view of each table; one ABORTED_WRITES_FORGOTTEN event per table
tells every gateway's poller to stop listing the ids, so a snapshot taken afterwards (which no
longer lists them) is still covered by the cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from store.events import EventType, NewEvent, Outcome
from store.sql import compaction as sql
from store.sql import housekeeping as housekeeping_sql


@dataclass(frozen=True, slots=True)
class AbortedWrites:
    """What aborted txns wrote to one table: write ids, and compaction txns (whose directories carry
    their txn id)."""

    table_id: int
    write_ids: frozenset[int] = frozenset()
    compaction_txns: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class TableRoot:
    """A directory to look under, and how many levels of partition directories lie below it."""

    location: str
    depth: int


async def due(conn: asyncpg.Connection, *, more_than: int, older_than_s: float, ended_before_s: float,
              tables: int) -> list[AbortedWrites]:
    """The tables whose aborted write ids are due for clean-up (more than `more_than` of them, or
    the oldest older than `older_than_s`), each with its ids whose txns ended `ended_before_s` ago,
    and the tables with aborted compaction txns that ended that long ago; at most `tables` of each."""
    found: dict[int, AbortedWrites] = {}
    for r in await conn.fetch(sql.ABORTED_WRITES_DUE, more_than, older_than_s, ended_before_s, tables):
        found[r["table_id"]] = AbortedWrites(r["table_id"], write_ids=frozenset(r["write_ids"]))
    for r in await conn.fetch(sql.ABORTED_COMPACTION_TXNS_DUE, ended_before_s, tables):
        found[r["table_id"]] = AbortedWrites(r["table_id"], found.get(r["table_id"], AbortedWrites(0)).write_ids,
                                             frozenset(r["txn_ids"]))
    return [found[t] for t in sorted(found)]


async def roots(conn: asyncpg.Connection, table_id: int) -> list[TableRoot]:
    """Every directory a version of the table or of its partitions names (empty locations left out)."""
    return [TableRoot(r["location"], int(r["depth"] or 0))
            for r in await conn.fetch(sql.TABLE_ROOTS, table_id) if r["location"]]


async def forget_compaction_txns(conn: asyncpg.Connection, txn_ids: frozenset[int]) -> list[int]:
    """Forget these aborted compaction txns (their directories are gone), as housekeeping forgets
    aborted txns that wrote nothing: the txns forgotten."""
    if not txn_ids:
        return []
    gone = sorted(int(r["txn_id"]) for r in await conn.fetch(sql.FORGET_ABORTED_COMPACTION_TXNS, sorted(txn_ids)))
    if gone:
        await conn.execute(housekeeping_sql.RAISE_ABORTED_FORGOTTEN_UPTO, gone[-1])
    return gone


async def forget(conn: asyncpg.Connection, table_id: int, write_ids: frozenset[int]) -> Outcome[list[int]]:
    """Stop listing these aborted write ids (only ids whose txns are aborted are touched): the ids
    forgotten, with the event that tells the caches."""
    if not write_ids:
        return Outcome([])
    gone = sorted(int(r["write_id"]) for r in await conn.fetch(sql.FORGET_ABORTED_WRITE_IDS, table_id,
                                                                 sorted(write_ids)))
    if not gone:
        return Outcome([])
    return Outcome(gone, (NewEvent(EventType.ABORTED_WRITES_FORGOTTEN, table_id=table_id,
                                   message={"table_id": table_id, "write_ids": gone}),))
